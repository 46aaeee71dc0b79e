/** Stripe webhooks: verified with Stripe's own test signatures, then mapped to our payment events. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StripeCheckoutProvider, WebhookSignatureError } from '#services/payments/index.ts';
import { captureOutput } from '../support/capture-output.ts';
import { sessionObject, signStripePayload, stripeEvent } from '../support/fake-stripe.ts';

const SECRET_KEY = 'sk_test_51WebhookSuiteSecretKeyDoNotLog';
const WEBHOOK_SECRET = 'whsec_webhookSuiteSigningSecretDoNotLog';
const provider = new StripeCheckoutProvider({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });

const IDS = {
  tenantId: 'tenant-7f3a',
  projectId: '5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d',
  quoteId: 'q-20240611-01',
};

const session = (overrides: Record<string, unknown> = {}) =>
  sessionObject(
    { id: 'cs_test_a1B2c3D4e5F6g7H8i9J0', metadata: { ...IDS }, amount_total: 12_345 },
    { amount_subtotal: 12_345, ...overrides },
  );

const event = (type: string, object: Record<string, unknown>, id = 'evt_1PQrStUvWxYz0001') =>
  stripeEvent(type, object, id);

const signed = (payload: string, opts: { secret?: string; timestamp?: number } = {}) =>
  signStripePayload(payload, opts.secret ?? WEBHOOK_SECRET, opts);

let lines: string[] = [];
const logged = () => lines.join('\n');

beforeEach(() => {
  lines = captureOutput([]);
});
afterEach(() => {
  const text = logged();
  vi.restoreAllMocks();
  // No log line, whatever the test did, carries a secret or a signature.
  expect(text).not.toContain(SECRET_KEY);
  expect(text).not.toContain(WEBHOOK_SECRET);
  expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
});

describe('signature verification', () => {
  const body = event('checkout.session.completed', session());

  it('accepts a delivery signed with the endpoint secret (string or Buffer body)', () => {
    expect(provider.parseWebhook(body, signed(body))?.type).toBe('paid');
    expect(provider.parseWebhook(Buffer.from(body), signed(body))?.type).toBe('paid');
  });

  it('finds the header whatever its case, and takes the first of repeated values', () => {
    const { 'stripe-signature': sig } = signed(body);
    expect(provider.parseWebhook(body, { 'Stripe-Signature': sig })?.type).toBe('paid');
    expect(provider.parseWebhook(body, { 'stripe-signature': [sig, 'junk'] })?.type).toBe('paid');
  });

  it('rejects a tampered body (the amount raised after signing)', () => {
    const headers = signed(body);
    const tampered = body.replace('"amount_total":12345', '"amount_total":1');
    expect(tampered).not.toBe(body);
    expect(() => provider.parseWebhook(tampered, headers)).toThrow(WebhookSignatureError);
  });

  it('rejects a body re-serialised after parsing (whitespace differs from what was signed)', () => {
    const headers = signed(body);
    expect(() => provider.parseWebhook(JSON.stringify(JSON.parse(body), null, 2), headers)).toThrow(
      WebhookSignatureError,
    );
  });

  it('rejects a signature made with another secret', () => {
    expect(() => provider.parseWebhook(body, signed(body, { secret: 'whsec_someoneElsesSecret' }))).toThrow(
      WebhookSignatureError,
    );
  });

  it('rejects a delivery older than the default tolerance (300 s) and accepts one inside it', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(() => provider.parseWebhook(body, signed(body, { timestamp: now - 301 }))).toThrow(
      WebhookSignatureError,
    );
    expect(provider.parseWebhook(body, signed(body, { timestamp: now - 240 }))?.type).toBe('paid');
  });

  it('rejects a missing, empty or malformed header', () => {
    expect(() => provider.parseWebhook(body, {})).toThrow(WebhookSignatureError);
    expect(() => provider.parseWebhook(body, { 'stripe-signature': '' })).toThrow(WebhookSignatureError);
    expect(() => provider.parseWebhook(body, { 'stripe-signature': 'garbage' })).toThrow(
      WebhookSignatureError,
    );
  });

  it('the error is typed for the API (400) and says nothing secret', () => {
    try {
      provider.parseWebhook(body, signed(body, { secret: 'whsec_other' }));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookSignatureError);
      const e = err as WebhookSignatureError;
      expect(e.code).toBe('WEBHOOK_SIGNATURE_INVALID');
      expect(e.name).toBe('WebhookSignatureError');
      expect(e.message).toBe('Invalid webhook signature');
    }
    // The rejection is logged (so the capture works), without the header or the body.
    expect(logged()).toContain('stripe webhook rejected');
    expect(logged()).not.toContain('cs_test_a1B2c3D4e5F6g7H8i9J0');
  });
});

describe('event mapping', () => {
  const parse = (type: string, object: Record<string, unknown>, id?: string) => {
    const body = event(type, object, id);
    return provider.parseWebhook(body, signed(body));
  };

  it('checkout.session.completed and paid -> paid, every field from the signed event', () => {
    expect(parse('checkout.session.completed', session(), 'evt_completed_1')).toEqual({
      type: 'paid',
      paymentId: 'cs_test_a1B2c3D4e5F6g7H8i9J0',
      ...IDS,
      amountCents: 12_345,
      currency: 'GBP',
      providerEventId: 'evt_completed_1',
    });
  });

  it('checkout.session.completed while the payment is still pending (bank debit) -> ignored', () => {
    expect(parse('checkout.session.completed', session({ payment_status: 'unpaid' }))).toBeNull();
  });

  it('checkout.session.async_payment_succeeded -> paid', () => {
    expect(parse('checkout.session.async_payment_succeeded', session(), 'evt_async_ok')).toMatchObject({
      type: 'paid',
      providerEventId: 'evt_async_ok',
      amountCents: 12_345,
    });
  });

  it('checkout.session.async_payment_failed -> failed', () => {
    expect(
      parse('checkout.session.async_payment_failed', session({ payment_status: 'unpaid' }), 'evt_async_ko'),
    ).toEqual({
      type: 'failed',
      paymentId: 'cs_test_a1B2c3D4e5F6g7H8i9J0',
      ...IDS,
      amountCents: 12_345,
      currency: 'GBP',
      providerEventId: 'evt_async_ko',
    });
  });

  it('checkout.session.expired -> expired', () => {
    expect(
      parse('checkout.session.expired', session({ status: 'expired', payment_status: 'unpaid' }), 'evt_exp'),
    ).toMatchObject({
      type: 'expired',
      paymentId: 'cs_test_a1B2c3D4e5F6g7H8i9J0',
      providerEventId: 'evt_exp',
    });
  });

  it('amount and currency are the session total, not the line item or anything else', () => {
    const e = parse('checkout.session.completed', session({ amount_subtotal: 99_999, amount_total: 4_900 }));
    expect(e).toMatchObject({ amountCents: 4_900, currency: 'GBP' });
  });

  it('any other event type -> ignored', () => {
    expect(parse('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent', amount: 1 })).toBeNull();
    expect(parse('checkout.session.created', session())).toBeNull();
    expect(parse('customer.created', { id: 'cus_1', object: 'customer' })).toBeNull();
  });

  it('a session we did not create (no or partial metadata) -> ignored', () => {
    expect(parse('checkout.session.completed', session({ metadata: {} }))).toBeNull();
    expect(
      parse('checkout.session.completed', session({ metadata: { tenantId: 't', quoteId: 'q' } })),
    ).toBeNull();
    expect(parse('checkout.session.completed', session({ metadata: null }))).toBeNull();
  });

  it('a session without a total -> ignored', () => {
    expect(parse('checkout.session.completed', session({ amount_total: null }))).toBeNull();
  });
});
