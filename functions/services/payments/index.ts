/**
 * Picks the payment provider from the environment: Stripe Checkout when `STRIPE_SECRET_KEY` is set, else
 * the offline instant provider. Both Stripe values are secrets: here they are read from the environment; in
 * AWS they belong in Secrets Manager (loaded into the environment or read at cold start), never in the
 * template or a log line.
 */
import type Stripe from 'stripe';
import { ConfigError } from '#platform/config.ts';
import { logger } from '#platform/logger.ts';
import { InstantPaymentProvider } from './instant.ts';
import type { PaymentProvider } from './provider.ts';
import { StripeCheckoutProvider } from './stripe-checkout.ts';

export { InstantPaymentProvider } from './instant.ts';
export * from './provider.ts';
export { StripeCheckoutProvider } from './stripe-checkout.ts';

export function providerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  stripeConfig?: Stripe.StripeConfig,
): PaymentProvider {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  if (!secretKey) {
    logger.info('payment provider selected', { provider: 'instant' });
    return new InstantPaymentProvider();
  }
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim();
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
