/**
 * Paying a quote with Stripe Checkout through the API: the accept route against a local stand-in for
 * api.stripe.com (test/support/fake-stripe.ts), then the public webhook route fed Stripe-signed events, on
 * DynamoDB Local. Projects are arranged through the store (a quote offered, status MAPPED): the trackers and
 * scans that lead there are project-lifecycle.test.ts's. Last, the instant provider the service uses offline.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { priceScan } from '../../functions/domain/pricing.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { StripeCheckoutProvider, setPaymentProvider } from '../../functions/services/payments/index.ts';
import { offerQuote } from '../../functions/services/quotes.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { captureOutput } from '../support/capture-output.ts';
import {
  type FakeStripe,
  type SessionFields,
  sessionObject,
  signStripePayload,
  startFakeStripe,
  stripeEvent,
} from '../support/fake-stripe.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';

const SECRET_KEY = 'sk_test_51IntegrationSuiteSecretKeyDoNotLog';
const WEBHOOK_SECRET = 'whsec_integrationSuiteSigningSecretDoNotLog';
const PRICING = priceScan(1234, 0.5);
const PENCE = Math.round(PRICING.finalPriceGbp * 100);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const WEBHOOK = '/api/billing/webhooks/payments';

let app: TestApp;
let stripe: FakeStripe;
let t: TestTenant;
let other: TestTenant;
let dataDir: string;
const logged: string[] = [];

beforeAll(async () => {
  // Every line the service writes, kept (not shown) to look for secrets and for the amount-mismatch error.
  captureOutput(logged);
  // The instant provider is chosen only when no Stripe key is in the environment.
  for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_SECRET_ARN'])
    delete process.env[name];
  dataDir = await mkdtemp(join(tmpdir(), 'payments-webhook-test-'));
  stripe = await startFakeStripe();
  app = await startTestApp({ DATA_DIR: dataDir });
  [t, other] = await Promise.all([app.createTenant('Billing'), app.createTenant('Other')]);
  setPaymentProvider(
    new StripeCheckoutProvider({
      secretKey: SECRET_KEY,
      webhookSecret: WEBHOOK_SECRET,
      stripeConfig: stripe.stripeConfig,
    }),
  );
});
afterAll(async () => {
  setPaymentProvider(undefined);
  setOrchestrator(undefined);
  await app?.close();
  await stripe?.close();
  await rm(dataDir, { recursive: true, force: true });
  vi.restoreAllMocks();
});
afterEach(() => {
  // Whatever a test did, no log line carries a Stripe secret or a webhook signature.
  const text = logged.join('\n');
  expect(text).not.toContain(SECRET_KEY);
  expect(text).not.toContain(WEBHOOK_SECRET);
  expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
});

interface Arranged {
  tenant: TestTenant;
  projectId: string;
  quoteId: string;
}

/** A MAPPED project with an OPEN quote for PRICING, as a completed scan and confirmed mappings leave it. */
async function arrangeProject(tenant = t): Promise<Arranged> {
  const res = await app.call('POST', '/api/projects', {
    token: tenant.admin.token,
    body: {
      name: `Billing ${randomUUID().slice(0, 6)}`,
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
    },
  });
  expect(res.status).toBe(201);
  const projectId: string = res.body.id;
  const quote = await offerQuote(app.store, tenant.tenantId, projectId, randomUUID(), PRICING);
  if (!quote) throw new Error('no quote offered');
  await markProjectStatus(app.store, tenant.tenantId, projectId, 'MAPPED');
  return { tenant, projectId, quoteId: quote.id };
}

const accept = (p: Arranged, token = p.tenant.owner.token) =>
  app.call('POST', `/api/projects/${p.projectId}/quote/accept`, { token, body: {} });
const quoteOf = async (p: Arranged) =>
  (await app.call('GET', `/api/projects/${p.projectId}/quote`, { token: p.tenant.member.token })).body;
const projectStatus = async (p: Arranged) =>
  (await app.call('GET', `/api/projects/${p.projectId}`, { token: p.tenant.member.token })).body.status;
const billingOf = async (tenant: TestTenant) =>
  (await app.call('GET', '/api/billing', { token: tenant.owner.token })).body;
const paymentsOf = async (p: Arranged) =>
  (await billingOf(p.tenant)).payments.filter((x: { projectId: string }) => x.projectId === p.projectId);
/** Everything a webhook could change for a project, to compare before and after. */
const snapshot = async (p: Arranged) => ({
  quote: await quoteOf(p),
  status: await projectStatus(p),
  billing: await billingOf(p.tenant),
});

const startBody = (type = 'FULL') => ({
  type,
  enginePayload: {
    source: { org: 'contoso', project: 'Fabrikam', pat: 'ado-pat-not-used', type_filter: 'Bug, Task' },
    target: {
      base_url: 'https://contoso.atlassian.net',
      email: 'migrator@contoso.example.com',
      api_token: 'jira-token-not-used',
      project_key: 'MIG',
    },
    options: { migrate_attachments: true, migrate_comments: false },
  },
});
const startFull = (p: Arranged) =>
  app.call('POST', `/api/migrations/project/${p.projectId}/start`, {
    token: p.tenant.member.token,
    body: startBody(),
  });

/** Posts these exact bytes to the webhook route, as Stripe does (no token: the signature authenticates). */
const deliver = (
  payload: string,
  headers: Record<string, string> = signStripePayload(payload, WEBHOOK_SECRET),
) =>
  app.call('POST', WEBHOOK, {
    rawBody: payload,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

/** A `checkout.session.*` event for the payment (Checkout Session) of `p`. */
function sessionEvent(
  type: string,
  p: Arranged,
  sessionId: string,
  fields: Partial<SessionFields> = {},
  eventId?: string,
): string {
  const metadata = { tenantId: p.tenant.tenantId, projectId: p.projectId, quoteId: p.quoteId };
  return stripeEvent(
    type,
    sessionObject({ id: sessionId, metadata, amount_total: PENCE, ...fields }),
    eventId,
  );
}

describe('accepting a quote with Stripe Checkout', () => {
  let p: Arranged;
  let sessionId: string;
  let sessionUrl: string;

  beforeAll(async () => {
    stripe.reset();
    p = await arrangeProject();
  });

  it('creates one Checkout Session for the quote’s price and answers its URL; the project stays MAPPED', async () => {
    const res = await accept(p);
    expect(res.status).toBe(200);
    const [create, ...more] = stripe.sessionCreates();
    expect(more).toEqual([]);
    sessionId = create?.response.id;
    sessionUrl = create?.response.url;
    expect(sessionId).toMatch(/^cs_test_/);
    expect(res.body).toEqual({
      quote: expect.objectContaining({
        id: p.quoteId,
        status: 'PENDING_PAYMENT',
        checkoutUrl: sessionUrl,
        finalPriceGbp: PRICING.finalPriceGbp,
        paidAt: null,
      }),
      projectStatus: 'MAPPED',
    });
    // The price in pence, lower-case currency, and our ids on the session: what the webhook reads back.
    expect(create?.form).toMatchObject({
      mode: 'payment',
      'line_items[0][price_data][unit_amount]': String(PENCE),
      'line_items[0][price_data][currency]': 'gbp',
      'metadata[tenantId]': t.tenantId,
      'metadata[projectId]': p.projectId,
      'metadata[quoteId]': p.quoteId,
    });
    expect(PENCE).toBe(11_195);
    expect(create?.headers['idempotency-key']).toBe(
      `checkout:${t.tenantId}:${p.projectId}:${p.quoteId}:1:${PENCE}GBP`,
    );
    expect(create?.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
  });

  it('a second accept answers the same session, with no new session or payment record', async () => {
    const res = await accept(p);
    expect(res.status).toBe(200);
    expect(res.body.quote).toMatchObject({ status: 'PENDING_PAYMENT', checkoutUrl: sessionUrl });
    expect(stripe.sessionCreates()).toHaveLength(1);
    expect(await paymentsOf(p)).toEqual([
      expect.objectContaining({
        id: sessionId,
        provider: 'stripe',
        quoteId: p.quoteId,
        amountGbp: PRICING.finalPriceGbp,
        currency: 'GBP',
        status: 'PENDING',
        paidAt: null,
      }),
    ]);
  });

  it('only the owner accepts: admin and member get 403', async () => {
    for (const token of [t.admin.token, t.member.token]) {
      const res = await accept(p, token);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    expect(stripe.sessionCreates()).toHaveLength(1);
  });

  it('a FULL run cannot start while the payment is pending', async () => {
    const res = await startFull(p);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ statusCode: 409, code: 'PROJECT_NOT_READY' });
    expect(await projectStatus(p)).toBe('MAPPED');
  });

  describe('the webhook refuses what Stripe did not sign, and changes nothing', () => {
    const refused = {
      statusCode: 400,
      code: 'WEBHOOK_SIGNATURE_INVALID',
      error: 'Bad Request',
      message: expect.any(String),
    };

    it('no Stripe-Signature header', async () => {
      const before = await snapshot(p);
      const res = await deliver(sessionEvent('checkout.session.completed', p, sessionId), {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused);
      expect(await snapshot(p)).toEqual(before);
    });

    it('a body changed after signing', async () => {
      const before = await snapshot(p);
      const signed = sessionEvent('checkout.session.completed', p, sessionId, { payment_status: 'unpaid' });
      const tampered = signed.replace('"payment_status":"unpaid"', '"payment_status":"paid"');
      expect(tampered).not.toBe(signed);
      const res = await deliver(tampered, signStripePayload(signed, WEBHOOK_SECRET));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused);
      expect(await snapshot(p)).toEqual(before);
    });

    it('a signature made with another secret', async () => {
      const before = await snapshot(p);
      const payload = sessionEvent('checkout.session.completed', p, sessionId);
      const res = await deliver(payload, signStripePayload(payload, 'whsec_someoneElsesSecret'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused);
      expect(await snapshot(p)).toEqual(before);
    });

    it('the raw body reaches the provider byte for byte (a re-serialised body would fail the signature)', async () => {
      // Indented, with escaped non-ASCII and a trailing newline: JSON.parse + stringify would change each.
      const payload = `${JSON.stringify(
        JSON.parse(
          stripeEvent('payment_intent.created', { id: 'pi_1', object: 'payment_intent', amount: 1 }),
        ),
        null,
        2,
      ).replace(
        '"object": "payment_intent"',
        '"object": "payment_intent", "description": "Caf\\u00e9 \\u2013 r\\u00e9sum\\u00e9"',
      )}\n`;
      const res = await deliver(payload);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, outcome: 'ignored' });
    });
  });

  describe('a paid checkout.session.completed settles the payment once', () => {
    let paid: string;

    it('applies: project READY, quote PAID, payment PAID, billing shows the spend', async () => {
      paid = sessionEvent('checkout.session.completed', p, sessionId, { payment_status: 'paid' });
      const res = await deliver(paid);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, outcome: 'applied' });

      expect(await projectStatus(p)).toBe('READY');
      const quote = await quoteOf(p);
      expect(quote).toMatchObject({ id: p.quoteId, status: 'PAID', checkoutUrl: null });
      expect(quote.paidAt).toMatch(ISO);
      const billing = await billingOf(t);
      expect(billing.payments.filter((x: { projectId: string }) => x.projectId === p.projectId)).toEqual([
        expect.objectContaining({ id: sessionId, status: 'PAID', paidAt: expect.stringMatching(ISO) }),
      ]);
      expect(billing.spendByProject).toContainEqual({
        projectId: p.projectId,
        projectName: expect.any(String),
        totalGbp: PRICING.finalPriceGbp,
        payments: 1,
      });
      // This is the tenant's only paid project at this point of the file.
      expect(billing.totalSpentGbp).toBe(PRICING.finalPriceGbp);
    });

    it('the same event delivered again is a duplicate and changes nothing', async () => {
      const before = await snapshot(p);
      const res = await deliver(paid);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, outcome: 'duplicate' });
      expect(await snapshot(p)).toEqual(before);
    });

    it('a FULL run can start now', async () => {
      const orch = new RecordingOrchestrator();
      setOrchestrator(orch);
      try {
        const res = await startFull(p);
        expect(res.status).toBe(200);
        expect(orch.starts).toHaveLength(1);
        expect(await projectStatus(p)).toBe('MIGRATING');
      } finally {
        setOrchestrator(undefined);
      }
    });
  });
});

describe('an expired checkout', () => {
  it('reopens the quote; accepting again starts a new session and a second payment', async () => {
    stripe.reset();
    const p = await arrangeProject();
    expect((await accept(p)).status).toBe(200);
    const first = stripe.sessionCreates()[0]?.response;

    const res = await deliver(
      sessionEvent('checkout.session.expired', p, first.id, { payment_status: 'unpaid' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, outcome: 'applied' });
    expect(await quoteOf(p)).toMatchObject({ status: 'OPEN', checkoutUrl: null, paidAt: null });
    expect(await paymentsOf(p)).toEqual([expect.objectContaining({ id: first.id, status: 'EXPIRED' })]);
    expect(await projectStatus(p)).toBe('MAPPED');

    const again = await accept(p);
    expect(again.status).toBe(200);
    const creates = stripe.sessionCreates();
    expect(creates).toHaveLength(2);
    const second = creates[1]?.response;
    // Attempt 2 has its own Idempotency-Key, so Stripe makes a new session instead of answering the expired one.
    expect(creates[1]?.headers['idempotency-key']).toBe(
      `checkout:${t.tenantId}:${p.projectId}:${p.quoteId}:2:${PENCE}GBP`,
    );
    expect(second.id).not.toBe(first.id);
    expect(again.body).toEqual({
      quote: expect.objectContaining({ status: 'PENDING_PAYMENT', checkoutUrl: second.url }),
      projectStatus: 'MAPPED',
    });
    const payments = await paymentsOf(p);
    expect(payments).toHaveLength(2);
    expect(payments).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: first.id, status: 'EXPIRED' }),
        expect.objectContaining({ id: second.id, status: 'PENDING' }),
      ]),
    );
  });
});

describe('concurrent accepts', () => {
  it('two at once get the same session (Stripe answers a repeated Idempotency-Key alike) and one payment', async () => {
    stripe.reset();
    const p = await arrangeProject();
    const [one, two] = await Promise.all([accept(p), accept(p)]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(one.body.quote.checkoutUrl).toBe(two.body.quote.checkoutUrl);
    const ids = new Set(stripe.sessionCreates().map((r) => r.response.id));
    expect(ids.size).toBe(1);
    expect(await paymentsOf(p)).toEqual([expect.objectContaining({ id: [...ids][0], status: 'PENDING' })]);
  });
});

describe('events that settle nothing', () => {
  let a: Arranged;
  let aSession: string;
  let b: Arranged;
  let bSession: string;

  beforeAll(async () => {
    stripe.reset();
    [a, b] = await Promise.all([arrangeProject(t), arrangeProject(other)]);
    expect((await accept(a)).status).toBe(200);
    expect((await accept(b)).status).toBe(200);
    const byTenant = new Map(
      stripe.sessionCreates().map((r) => [r.form['metadata[tenantId]'], r.response.id]),
    );
    aSession = byTenant.get(t.tenantId);
    bSession = byTenant.get(other.tenantId);
  });

  const unsettled = async (p: Arranged, sessionId: string) => {
    expect(await projectStatus(p)).toBe('MAPPED');
    expect(await quoteOf(p)).toMatchObject({ status: 'PENDING_PAYMENT', paidAt: null });
    expect(await paymentsOf(p)).toEqual([expect.objectContaining({ id: sessionId, status: 'PENDING' })]);
  };

  it('another amount than the payment’s: ignored, and an error names both amounts', async () => {
    const from = logged.length;
    const res = await deliver(sessionEvent('checkout.session.completed', a, aSession, { amount_total: 100 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, outcome: 'ignored' });
    await unsettled(a, aSession);
    const line = logged.slice(from).find((l) => l.includes('payment amount differs from the quote'));
    expect(line).toBeDefined();
    // Powertools' dev mode indents its JSON: spaces allowed after the colons.
    expect(line).toMatch(/"level":\s*"ERROR"/);
    expect(line).toMatch(new RegExp(`"expectedCents":\\s*${PENCE}\\b`));
    expect(line).toMatch(/"receivedCents":\s*100\b/);
  });

  it('an unknown payment: 404 PAYMENT_NOT_FOUND (Stripe retries it)', async () => {
    const res = await deliver(sessionEvent('checkout.session.completed', a, 'cs_test_neverCreatedByUs0001'));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, code: 'PAYMENT_NOT_FOUND' });
    expect(res.body.message).toContain('cs_test_neverCreatedByUs0001');
    await unsettled(a, aSession);
  });

  it('a session of tenant A whose metadata names tenant B settles nothing in either', async () => {
    // B's tenant with A's project and quote, then B's own project and quote: neither finds A's payment under B.
    for (const ids of [
      { ...a, tenant: b.tenant },
      { ...b, tenant: b.tenant },
    ]) {
      const res = await deliver(sessionEvent('checkout.session.completed', ids, aSession));
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('PAYMENT_NOT_FOUND');
    }
    await unsettled(a, aSession);
    await unsettled(b, bSession);
    expect((await billingOf(other)).totalSpentGbp).toBe(0);
  });

  it('an event type we do not act on: 200 ignored', async () => {
    const res = await deliver(
      stripeEvent('payment_intent.created', { id: 'pi_1', object: 'payment_intent', amount: PENCE }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, outcome: 'ignored' });
    await unsettled(a, aSession);
  });

  describe('with the instant provider (no Stripe keys)', () => {
    beforeAll(() => setPaymentProvider(undefined));
    afterAll(() =>
      setPaymentProvider(
        new StripeCheckoutProvider({
          secretKey: SECRET_KEY,
          webhookSecret: WEBHOOK_SECRET,
          stripeConfig: stripe.stripeConfig,
        }),
      ),
    );

    it('an accept is paid at once: quote PAID, project READY', async () => {
      const p = await arrangeProject();
      const res = await accept(p);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        quote: expect.objectContaining({
          status: 'PAID',
          checkoutUrl: null,
          paidAt: expect.stringMatching(ISO),
        }),
        projectStatus: 'READY',
      });
      expect(await paymentsOf(p)).toEqual([expect.objectContaining({ provider: 'instant', status: 'PAID' })]);
    });

    it('the webhook route answers 200 ignored for any body, even a correctly signed Stripe event', async () => {
      const signedPaid = sessionEvent('checkout.session.completed', a, aSession);
      for (const [payload, headers] of [
        [signedPaid, signStripePayload(signedPaid, WEBHOOK_SECRET)],
        ['{}', {}],
        ['', {}],
      ] as const) {
        const res = await deliver(payload, headers);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ received: true, outcome: 'ignored' });
      }
      // The instant provider reads no webhook: the pending Stripe payment stays pending.
      await unsettled(a, aSession);
    });
  });
});
