/** Stripe Checkout session creation against a local stand-in for api.stripe.com that records each request. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type MockInstance,
  vi,
} from 'vitest';
import {
  PaymentProviderError,
  type StartPaymentInput,
  StripeCheckoutProvider,
} from '#services/payments/index.ts';
import { checkoutIdempotencyKey } from '#services/payments/stripe-checkout.ts';

const SECRET_KEY = 'sk_test_51CheckoutSuiteSecretKeyDoNotLog';
const WEBHOOK_SECRET = 'whsec_checkoutSuiteSigningSecretDoNotLog';
const SESSION_ID = 'cs_test_b1Xy9Zq8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf';
const SESSION_URL = `https://checkout.stripe.com/c/pay/${SESSION_ID}#fidkdWxOYHwnPyd1blpxYHZxWjA0`;

interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  form: Record<string, string>;
}

let server: Server;
let port: number;
let requests: Recorded[] = [];
/** What the next requests get; each entry is used once, then the last repeats. */
let replies: { status: number; body: unknown; headers?: Record<string, string> }[] = [];

/** A Checkout Session as Stripe answers a create, echoing the request's fields. */
function checkoutSession(form: Record<string, string>) {
  const amount = Number(form['line_items[0][price_data][unit_amount]']);
  const now = Math.floor(Date.now() / 1000);
  return {
    id: SESSION_ID,
    object: 'checkout.session',
    adaptive_pricing: { enabled: true },
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: amount,
    amount_total: amount,
    automatic_tax: { enabled: false, liability: null, status: null },
    billing_address_collection: null,
    cancel_url: form.cancel_url,
    client_reference_id: form.client_reference_id ?? null,
    client_secret: null,
    consent: null,
    created: now,
    currency: form['line_items[0][price_data][currency]'],
    custom_fields: [],
    custom_text: {
      after_submit: null,
      shipping_address: null,
      submit: null,
      terms_of_service_acceptance: null,
    },
    customer: null,
    customer_creation: 'if_required',
    customer_details: form.customer_email ? { email: form.customer_email } : null,
    customer_email: form.customer_email ?? null,
    expires_at: now + 86_400,
    invoice: null,
    livemode: false,
    locale: null,
    metadata: {
      tenantId: form['metadata[tenantId]'],
      projectId: form['metadata[projectId]'],
      quoteId: form['metadata[quoteId]'],
    },
    mode: 'payment',
    payment_intent: null,
    payment_link: null,
    payment_method_collection: 'if_required',
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    phone_number_collection: { enabled: false },
    recovered_from: null,
    shipping_address_collection: null,
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: form.success_url,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: SESSION_URL,
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, form });
      const reply = replies.length > 1 ? replies.shift() : replies[0];
      const status = reply?.status ?? 200;
      const body = reply?.body ?? checkoutSession(form);
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': `req_${requests.length}`,
        ...reply?.headers,
      });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let spies: MockInstance[] = [];
const logged = () => spies.flatMap((s) => s.mock.calls.map((c) => c.map(String).join(' '))).join('\n');

beforeEach(() => {
  requests = [];
  replies = [];
  spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation(() => {}),
  );
  spies.push(vi.spyOn(process.stdout, 'write').mockImplementation(() => true));
  spies.push(vi.spyOn(process.stderr, 'write').mockImplementation(() => true));
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
    stripeConfig: { host: '127.0.0.1', port, protocol: 'http', telemetry: false },
  });

const input: StartPaymentInput = {
  tenantId: 'tenant-7f3a',
  projectId: '5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d',
  quoteId: 'q-20240611-01',
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
    expect(started).toEqual({ paymentId: SESSION_ID, checkoutUrl: SESSION_URL, status: 'PENDING' });
    expect(requests).toHaveLength(1);
  });

  it('posts the form Stripe expects: one line item, amounts, metadata, URLs', async () => {
    await provider().startPayment(input);
    const [req] = requests;
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
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
  });

  it('sends a quote-based Idempotency-Key: the same quote twice is the same key', async () => {
    await provider().startPayment(input);
    await provider().startPayment({ ...input, successUrl: 'https://app.example.com/other' });
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toBe('checkout:tenant-7f3a:5b0c6f1e-2d3a-4f5b-9c8d-7e6f5a4b3c2d:q-20240611-01:12345GBP');
    expect(keys[1]).toBe(keys[0]);
  });

  it('another quote, tenant or price gets another key', () => {
    const base = checkoutIdempotencyKey(input);
    expect(checkoutIdempotencyKey({ ...input, quoteId: 'q-2' })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, tenantId: 'tenant-other' })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, amountCents: 12_346 })).not.toBe(base);
    expect(checkoutIdempotencyKey({ ...input, currency: 'gbp' })).toBe(base);
  });

  it('keeps the key within Stripe’s 255 characters for very long ids', () => {
    const key = checkoutIdempotencyKey({ ...input, quoteId: 'q'.repeat(300) });
    expect(key).toMatch(/^checkout:[0-9a-f]{64}$/);
  });

  it('omits customer_email when there is none', async () => {
    const { customerEmail: _, ...withoutEmail } = input;
    await provider().startPayment(withoutEmail);
    expect(requests[0]?.form).not.toHaveProperty('customer_email');
  });

  it('a retried request (Stripe asked for a retry) carries the same Idempotency-Key', async () => {
    replies = [
      {
        status: 503,
        body: { error: { type: 'api_error', message: 'Temporarily unavailable' } },
        headers: { 'stripe-should-retry': 'true' },
      },
      { status: 200, body: undefined },
    ];
    const started = await provider().startPayment(input);
    expect(started.status).toBe('PENDING');
    expect(requests).toHaveLength(2);
    expect(requests[1]?.headers['idempotency-key']).toBe(requests[0]?.headers['idempotency-key']);
  });

  it('a Stripe refusal becomes a PaymentProviderError, logged without the key', async () => {
    replies = [
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
    replies = [{ status: 200, body: { ...checkoutSession({}), url: null } }];
    await expect(provider().startPayment(input)).rejects.toBeInstanceOf(PaymentProviderError);
  });

  it('refuses to charge a non-positive or fractional amount, or a malformed currency, before calling Stripe', async () => {
    await expect(provider().startPayment({ ...input, amountCents: 0 })).rejects.toThrow(RangeError);
    await expect(provider().startPayment({ ...input, amountCents: 49.5 })).rejects.toThrow(RangeError);
    await expect(provider().startPayment({ ...input, currency: 'POUNDS' })).rejects.toThrow(RangeError);
    expect(requests).toHaveLength(0);
  });
});
