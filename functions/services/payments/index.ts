/**
 * Picks the payment provider from the environment: Stripe Checkout when `STRIPE_SECRET_KEY` is set (or, in
 * AWS, `STRIPE_SECRET_ARN` names a Secrets Manager secret holding `{"secretKey", "webhookSecret"}`, read once
 * per cold start), else the instant provider (offline, and self-hosted deployments that charge nobody). The
 * Stripe values are secrets: never in the template, an error message or a log line.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type Stripe from 'stripe';
import { StripeCheckoutProvider } from '#adapters/stripe-checkout.ts';
import type { PaymentProvider } from '#domain/payments.ts';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { ConfigError, type EnvInput, envText, processEnv, readEnv } from '#platform/env.ts';
import { logger } from '#platform/logger.ts';
import { InstantPaymentProvider } from './instant.ts';

export { StripeCheckoutProvider } from '#adapters/stripe-checkout.ts';
export * from '#domain/payments.ts';
export { InstantPaymentProvider } from './instant.ts';

export function providerFromEnv(source?: EnvInput, stripeConfig?: Stripe.StripeConfig): PaymentProvider {
  const env = readEnv(['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'], source);
  const secretKey = env.STRIPE_SECRET_KEY;
  if (!secretKey) {
    logger.info('payment provider selected', { provider: 'instant' });
    return new InstantPaymentProvider();
  }
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET;
  // Without the signing secret no payment could ever be confirmed: fail at cold start, by name.
  if (!webhookSecret) {
    throw new ConfigError(
      'Invalid configuration: STRIPE_WEBHOOK_SECRET is required when STRIPE_SECRET_KEY is set',
    );
  }
  logger.info('payment provider selected', {
    provider: 'stripe',
    livemode: /^(sk|rk)_live_/.test(secretKey),
  });
  return new StripeCheckoutProvider({ secretKey, webhookSecret, ...(stripeConfig ? { stripeConfig } : {}) });
}

/** Reads `STRIPE_SECRET_ARN`'s secret into the two variables `providerFromEnv` reads; other variables as they are. */
export async function resolveStripeSecret(
  env: EnvInput = processEnv(),
  client: () => SecretsManagerClient = () => new SecretsManagerClient({}),
): Promise<EnvInput> {
  const { STRIPE_SECRET_ARN: arn } = readEnv(['STRIPE_SECRET_ARN'], env);
  // The raw key: any text, even blank, is a key given directly (providerFromEnv then judges it).
  if (envText('STRIPE_SECRET_KEY', env) || !arn) return env;
  let text: string | undefined;
  try {
    text = (await client().send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
  } catch (err) {
    // The SDK's error names the failure (AccessDenied, ResourceNotFound), never a value.
    throw new ConfigError(
      `Invalid configuration: could not read STRIPE_SECRET_ARN (${err instanceof Error ? err.name : 'error'})`,
    );
  }
  let parsed: { secretKey?: unknown; webhookSecret?: unknown } = {};
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    // Reported below without the text: it is a secret.
  }
  if (typeof parsed.secretKey !== 'string' || typeof parsed.webhookSecret !== 'string') {
    throw new ConfigError(
      'Invalid configuration: the STRIPE_SECRET_ARN secret must be JSON {"secretKey": "...", "webhookSecret": "..."}',
    );
  }
  return { ...env, STRIPE_SECRET_KEY: parsed.secretKey, STRIPE_WEBHOOK_SECRET: parsed.webhookSecret };
}

/**
 * The process's provider (see adapter-slot.ts): chosen at first use and kept (a failed choice is tried again at
 * the next use).
 */
export const paymentProvider = adapterSlot(
  (): Promise<PaymentProvider> => resolveStripeSecret().then((env) => providerFromEnv(env)),
);

/** Tests only: use this provider (undefined: choose from the environment again). */
export function setPaymentProvider(provider: PaymentProvider | undefined): void {
  paymentProvider.use(provider ? Promise.resolve(provider) : undefined);
}
