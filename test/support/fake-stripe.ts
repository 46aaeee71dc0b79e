/**
 * A local stand-in for api.stripe.com (Checkout Session creation) and Stripe-signed webhook events, for tests
 * of the Stripe provider and of the payment flow through the API. Point the provider at it with `stripeConfig`.
 *
 * Like Stripe, a create answers a new Checkout Session per Idempotency-Key and the same session again for a
 * repeated key (a replayed answer carries `idempotent-replayed: true`); a scripted reply replaces the answer.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body, decoded. */
  form: Record<string, string>;
  status: number;
  /** What the stand-in answered. */
  // biome-ignore lint/suspicious/noExplicitAny: a Stripe object or error as JSON
  response: any;
}

export interface ScriptedReply {
  status: number;
  /** Undefined: the Checkout Session the request would get without a script. */
  body: unknown;
  headers?: Record<string, string>;
}

export interface FakeStripe {
  port: number;
  /** The provider's client options that send its requests here. */
  stripeConfig: { host: string; port: number; protocol: 'http'; telemetry: false };
  /** Every request, in order. */
  requests: RecordedRequest[];
  /** What the next requests get: each entry is used once, then the last repeats; empty: a session. */
  replies: ScriptedReply[];
  /** The Checkout Session creates (POST /v1/checkout/sessions). */
  sessionCreates(): RecordedRequest[];
  /** Forgets requests and scripted replies (not the sessions created: Stripe keeps those too). */
  reset(): void;
  close(): Promise<void>;
}

export const checkoutUrlOf = (sessionId: string) =>
  `https://checkout.stripe.com/c/pay/${sessionId}#fidkdWxOYHwnPyd1blpxYHZxWjA0`;

/** A Checkout Session as Stripe answers a create, echoing the request's fields. */
export function checkoutSession(form: Record<string, string>, id: string) {
  const amount = Number(form['line_items[0][price_data][unit_amount]']);
  const now = Math.floor(Date.now() / 1000);
  return {
    id,
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
    url: checkoutUrlOf(id),
  };
}

export async function startFakeStripe(): Promise<FakeStripe> {
  let created = 0;
  /** Idempotency-Key -> the session answered for it, as Stripe keeps a key's first successful answer. */
  const byKey = new Map<string, unknown>();
  const fake = {
    requests: [] as RecordedRequest[],
    replies: [] as ScriptedReply[],
  };
  const newSession = (form: Record<string, string>) => {
    created += 1;
    // Shaped like Stripe's ids; distinct per session so tests can tell attempts apart.
    return checkoutSession(form, `cs_test_fake${String(created).padStart(4, '0')}a1B2c3D4e5F6g7H8i9J0`);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const reply = fake.replies.length > 1 ? fake.replies.shift() : fake.replies[0];
      const key = req.headers['idempotency-key'];
      const idempotencyKey = typeof key === 'string' ? key : undefined;
      const extra: Record<string, string> = {};
      let status = reply?.status ?? 200;
      let body: unknown = reply?.body;
      if (body === undefined && status < 300) {
        status = 200;
        const replayed = idempotencyKey ? byKey.get(idempotencyKey) : undefined;
        if (replayed) extra['idempotent-replayed'] = 'true';
        body = replayed ?? newSession(form);
        if (idempotencyKey) byKey.set(idempotencyKey, body);
      }
      fake.requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        form,
        status,
        response: body,
      });
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': `req_${fake.requests.length}`,
        ...extra,
        ...reply?.headers,
      });
      res.end(JSON.stringify(body ?? null));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    stripeConfig: { host: '127.0.0.1', port, protocol: 'http', telemetry: false },
    get requests() {
      return fake.requests;
    },
    get replies() {
      return fake.replies;
    },
    set replies(value: ScriptedReply[]) {
      fake.replies = value;
    },
    sessionCreates: () =>
      fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions'),
    reset() {
      fake.requests = [];
      fake.replies = [];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- Webhook events, signed as Stripe signs them ----

export interface SessionFields {
  /** The Checkout Session id: the payment's id on our side. */
  id: string;
  /** Our metadata on the session (`{}` or null: a session we did not create). */
  metadata: { tenantId: string; projectId: string; quoteId: string } | Record<string, string> | null;
  /** Minor units (pence). */
  amount_total: number | null;
  /** Lower-case, as Stripe sends it. */
  currency?: string;
  payment_status?: 'paid' | 'unpaid' | 'no_payment_required';
}

/** A Checkout Session as a `checkout.session.*` event carries it; `overrides` set any other field. */
export function sessionObject(fields: SessionFields, overrides: Record<string, unknown> = {}) {
  return {
    object: 'checkout.session',
    amount_subtotal: fields.amount_total,
    client_reference_id: (fields.metadata as { quoteId?: string } | null)?.quoteId ?? null,
    customer_details: { email: 'owner@example.com', name: 'Ada Owner' },
    customer_email: 'owner@example.com',
    livemode: false,
    mode: 'payment',
    payment_intent: 'pi_3PQrStUvWxYz0123',
    status: 'complete',
    success_url: 'https://app.example.com/projects/x/paid',
    cancel_url: 'https://app.example.com/projects/x/quote',
    url: null,
    ...fields,
    currency: fields.currency ?? 'gbp',
    payment_status: fields.payment_status ?? 'paid',
    ...overrides,
  };
}

let eventCount = 0;

/** An event's JSON as Stripe delivers it (compact); a fresh event id unless one is given. */
export function stripeEvent(type: string, object: Record<string, unknown>, id?: string): string {
  eventCount += 1;
  return JSON.stringify({
    id: id ?? `evt_1Fake${String(eventCount).padStart(6, '0')}${Date.now().toString(36)}`,
    object: 'event',
    api_version: '2025-11-17.clover',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
}

/** Only the static signing helper is used: no request is ever made with this key. */
const signer = new Stripe('sk_test_unused');

/** The Stripe-Signature header Stripe would send for exactly these bytes, signed with `secret`. */
export function signStripePayload(
  payload: string,
  secret: string,
  opts: { timestamp?: number } = {},
): { 'stripe-signature': string } {
  const header = signer.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }),
  });
  return { 'stripe-signature': header };
}
