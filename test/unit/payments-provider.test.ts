/** The offline provider, the provider choice from the environment, and the shared helpers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '#platform/config.ts';
import {
  assertPayable,
  headerValue,
  InstantPaymentProvider,
  providerFromEnv,
  type StartPaymentInput,
  StripeCheckoutProvider,
} from '#services/payments/index.ts';
import { captureOutput } from '../support/capture-output.ts';

const input: StartPaymentInput = {
  tenantId: 'tenant-1',
  projectId: 'project-1',
  quoteId: 'quote-1',
  attempt: 1,
  amountCents: 4_900,
  currency: 'GBP',
  description: 'Migration',
  successUrl: 'http://localhost:3000/ok',
  cancelUrl: 'http://localhost:3000/cancel',
};

let lines: string[] = [];
const logged = () => lines.join('\n');

beforeEach(() => {
  lines = captureOutput([]);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('InstantPaymentProvider', () => {
  const instant = new InstantPaymentProvider();

  it('answers PAID at once, with no URL', async () => {
    const started = await instant.startPayment(input);
    expect(started.status).toBe('PAID');
    expect(started.checkoutUrl).toBeNull();
    expect(started.paymentId).toMatch(/^instant_[0-9a-f]{32}$/);
    expect(instant.name).toBe('instant');
  });

  it('the payment id is deterministic per quote, and distinct across quotes, projects and tenants', async () => {
    const id = (await instant.startPayment(input)).paymentId;
    expect((await new InstantPaymentProvider().startPayment({ ...input, successUrl: 'x' })).paymentId).toBe(
      id,
    );
    const others = await Promise.all([
      instant.startPayment({ ...input, quoteId: 'quote-2' }),
      instant.startPayment({ ...input, attempt: 2 }),
      instant.startPayment({ ...input, projectId: 'project-2' }),
      instant.startPayment({ ...input, tenantId: 'tenant-2' }),
    ]);
    expect(new Set([id, ...others.map((o) => o.paymentId)]).size).toBe(5);
  });

  it('still refuses an amount no provider should charge', async () => {
    await expect(instant.startPayment({ ...input, amountCents: -1 })).rejects.toThrow(RangeError);
  });

  it('takes no webhooks', () => {
    expect(instant.parseWebhook()).toBeNull();
  });
});

describe('providerFromEnv', () => {
  it('is the instant provider without STRIPE_SECRET_KEY (or with a blank one)', () => {
    expect(providerFromEnv({})).toBeInstanceOf(InstantPaymentProvider);
    expect(providerFromEnv({ STRIPE_SECRET_KEY: '  ', STRIPE_WEBHOOK_SECRET: 'whsec_x' }).name).toBe(
      'instant',
    );
  });

  it('is Stripe Checkout with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET', () => {
    const p = providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_abc' });
    expect(p).toBeInstanceOf(StripeCheckoutProvider);
    expect(p.name).toBe('stripe');
  });

  it('fails at start, by name, when the key is set without the webhook secret', () => {
    expect(() => providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(ConfigError);
    expect(() => providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(/STRIPE_WEBHOOK_SECRET/);
  });

  it('logs which provider it chose, and neither secret', () => {
    const secretKey = 'sk_live_51ChoiceSuiteSecretKeyDoNotLog';
    const webhookSecret = 'whsec_choiceSuiteSigningSecretDoNotLog';
    providerFromEnv({ STRIPE_SECRET_KEY: secretKey, STRIPE_WEBHOOK_SECRET: webhookSecret });
    providerFromEnv({});
    const text = logged();
    expect(text).toContain('payment provider selected');
    expect(text).toMatch(/"provider":\s*"stripe"/);
    expect(text).toMatch(/"livemode":\s*true/);
    expect(text).toMatch(/"provider":\s*"instant"/);
    expect(text).not.toContain(secretKey);
    expect(text).not.toContain(webhookSecret);
  });

  it('a missing webhook secret error names the variable, not the key', () => {
    const secretKey = 'sk_test_51ErrorSuiteSecretKeyDoNotLog';
    try {
      providerFromEnv({ STRIPE_SECRET_KEY: secretKey });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain(secretKey);
    }
  });
});

describe('helpers', () => {
  it('assertPayable: positive integer minor units and a three-letter currency', () => {
    expect(() => assertPayable(input)).not.toThrow();
    expect(() => assertPayable({ ...input, currency: 'gbp' })).not.toThrow();
    for (const amountCents of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => assertPayable({ ...input, amountCents })).toThrow(RangeError);
    }
    for (const currency of ['', 'GB', 'GBPX', '£££']) {
      expect(() => assertPayable({ ...input, currency })).toThrow(RangeError);
    }
  });

  it('headerValue: any case, first of repeated values, undefined when absent', () => {
    expect(headerValue({ 'Stripe-Signature': 'a' }, 'stripe-signature')).toBe('a');
    expect(headerValue({ 'stripe-signature': ['b', 'c'] }, 'Stripe-Signature')).toBe('b');
    expect(headerValue({ other: 'x' }, 'stripe-signature')).toBeUndefined();
  });
});
