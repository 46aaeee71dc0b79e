/** Stripe Checkout session creation against a local stand-in for api.stripe.com that records each request. */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkoutIdempotencyKey } from '#adapters/stripe-checkout.ts';
import {
  PaymentProviderError,
  type StartPaymentInput,
  StripeCheckoutProvider,
} from '#services/payments/index.ts';
import { captureOutput } from '../support/capture-output.ts';
import { checkoutSession, checkoutUrlOf, type FakeStripe, startFakeStripe } from '../support/fake-stripe.ts';

const SECRET_KEY = 'sk_test_51CheckoutSuiteSecretKeyDoNotLog';
const WEBHOOK_SECRET = 'whsec_checkoutSuiteSigningSecretDoNotLog';

let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await startFakeStripe();
});
afterAll(() => stripe.close());

let lines: string[] = [];
const logged = () => lines.join('\n');

beforeEach(() => {
  stripe.reset();
  lines = captureOutput([]);
});
afterEach(() => {
  const text = logged();
  vi.restoreAllMocks();
  expect(text).not.toContain(SECRET_KEY);
  expect(text).not.toContain(WEBHOOK_SECRET);
});

const provider = () =>
  new StripeCheckoutProvider({
    secretKey: SECRET_KEY,
    webhookSecret: WEBHOOK_SECRET,
    stripeConfig: stripe.stripeConfig,
  });

const input: StartPaymentInput = {
  tenantId: 'tenant-7f3a',
  projectId: '5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d',
  quoteId: 'q-20240611-01',
  attempt: 1,
  amountCents: 12_345,
  currency: 'GBP',
  description: 'Migration of "Contoso Boards" (4,210 work items)',
  successUrl: 'https://app.example.com/projects/5b0c/payment?result=success',
  cancelUrl: 'https://app.example.com/projects/5b0c/quote?result=cancelled',
  customerEmail: 'owner@example.com',
};

describe('startPayment', () => {
  it('creates one Checkout Session and answers PENDING with its URL', async () => {
    const started = await provider().startPayment(input);
    const session = stripe.requests[0]?.response;
    expect(session.id).toMatch(/^cs_test_/);
    expect(started).toEqual({
      paymentId: session.id,
      checkoutUrl: checkoutUrlOf(session.id),
      status: 'PENDING',
    });
    expect(stripe.requests).toHaveLength(1);
  });

  it('the same Idempotency-Key is answered the same session, another key (another attempt) a new one', async () => {
    const first = await provider().startPayment({ ...input, quoteId: 'q-idem' });
    const again = await provider().startPayment({ ...input, quoteId: 'q-idem' });
    const next = await provider().startPayment({ ...input, quoteId: 'q-idem', attempt: 2 });
    expect(again).toEqual(first);
    expect(next.paymentId).not.toBe(first.paymentId);
    expect(next.checkoutUrl).not.toBe(first.checkoutUrl);
    // Each start reached Stripe: the same session came from Stripe's idempotency, not from a cache of ours.
    expect(stripe.requests).toHaveLength(3);
  });

  it('posts the form Stripe expects: one line item, amounts, metadata, URLs', async () => {
    await provider().startPayment(input);
    const [req] = stripe.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/v1/checkout/sessions');
    expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req?.form).toEqual({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'gbp',
      'line_items[0][price_data][unit_amount]': '12345',
      'line_items[0][price_data][product_data][name]': 'Migration of "Contoso Boards" (4,210 work items)',
      success_url: 'https://app.example.com/projects/5b0c/payment?result=success',
      cancel_url: 'https://app.example.com/projects/5b0c/quote?result=cancelled',
      customer_email: 'owner@example.com',
      client_reference_id: 'q-20240611-01',
      'metadata[tenantId]': 'tenant-7f3a',
      'metadata[projectId]': '5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d',
      'metadata[quoteId]': 'q-20240611-01',
      'payment_intent_data[metadata][tenantId]': 'tenant-7f3a',
      'payment_intent_data[metadata][projectId]': '5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d',
      'payment_intent_data[metadata][quoteId]': 'q-20240611-01',
    });
  });

  it('authenticates with the secret key as a bearer token', async () => {
    await provider().startPayment(input);
    expect(stripe.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
  });

  it('sends a quote-based Idempotency-Key: the same quote twice is the same key', async () => {
    await provider().startPayment(input);
    await provider().startPayment({ ...input, successUrl: 'https://app.example.com/other' });
    const keys = stripe.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toBe(
      'checkout:tenant-7f3a:5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d:q-20240611-01:1:12345GBP',
    );
    expect(keys[1]).toBe(keys[0]);
  });

  it('another quote, tenant, attempt or price gets another key', () => {
    const base = checkoutIdempotencyKey(input);
    expect(checkoutIdempotencyKey({ ...input, quoteId: 'q-2' })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, tenantId: 'tenant-other' })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, amountCents: 12_346 })).not.toBe(base);
    // A new attempt after an expired session must not be answered that expired session again.
    expect(checkoutIdempotencyKey({ ...input, attempt: 2 })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, currency: 'gbp' })).toBe(base);
  });

  it('keeps the key within Stripe’s 255 characters for very long ids', () => {
    const key = checkoutIdempotencyKey({ ...input, quoteId: 'q'.repeat(300) });
    expect(key).toMatch(/^checkout:[0-9a-f]{64}$/);
  });

  it('omits customer_email when there is none', async () => {
    const { customerEmail: _, ...withoutEmail } = input;
    await provider().startPayment(withoutEmail);
    expect(stripe.requests[0]?.form).not.toHaveProperty('customer_email');
  });

  it('a retried request (Stripe asked for a retry) carries the same Idempotency-Key', async () => {
    stripe.replies = [
      {
        status: 503,
        body: { error: { type: 'api_error', message: 'Temporarily unavailable' } },
        headers: { 'stripe-should-retry': 'true' },
      },
      { status: 200, body: undefined },
    ];
    const started = await provider().startPayment(input);
    expect(started.status).toBe('PENDING');
    expect(stripe.requests).toHaveLength(2);
    expect(stripe.requests[1]?.headers['idempotency-key']).toBe(
      stripe.requests[0]?.headers['idempotency-key'],
    );
  });

  it('a Stripe refusal becomes a PaymentProviderError, logged without the key', async () => {
    stripe.replies = [
      {
        status: 401,
        body: {
          error: {
            type: 'invalid_request_error',
            message: 'Invalid API Key provided: sk_test_****oLog',
          },
        },
      },
    ];
    const err = await provider()
      .startPayment(input)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentProviderError);
    expect((err as PaymentProviderError).code).toBe('PAYMENT_PROVIDER_FAILED');
    expect((err as Error).message).toBe('Could not start the payment');
    expect(logged()).toContain('checkout session not created');
    expect(logged()).toContain('q-20240611-01');
  });

  it('an unreachable Stripe becomes a PaymentProviderError', async () => {
    const closed = new StripeCheckoutProvider({
      secretKey: SECRET_KEY,
      webhookSecret: WEBHOOK_SECRET,
      stripeConfig: { host: '127.0.0.1', port: 1, protocol: 'http', maxNetworkRetries: 0 },
    });
    await expect(closed.startPayment(input)).rejects.toBeInstanceOf(PaymentProviderError);
  });

  it('a session without a URL is an error, not a PENDING payment nobody can pay', async () => {
    stripe.replies = [{ status: 200, body: { ...checkoutSession({}, 'cs_test_noUrl'), url: null } }];
    await expect(provider().startPayment(input)).rejects.toBeInstanceOf(PaymentProviderError);
  });

  it('refuses to charge a non-positive or fractional amount, or a malformed currency, before calling Stripe', async () => {
    await expect(provider().startPayment({ ...input, amountCents: 0 })).rejects.toThrow(RangeError);
    await expect(provider().startPayment({ ...input, amountCents: 49.5 })).rejects.toThrow(RangeError);
    await expect(provider().startPayment({ ...input, currency: 'POUNDS' })).rejects.toThrow(RangeError);
    expect(stripe.requests).toHaveLength(0);
  });
});
