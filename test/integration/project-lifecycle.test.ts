/**
 * A project's whole status flow through the API (functions/domain/lifecycle.ts): DRAFT -> CONNECTED -> SCANNED
 * -> MAPPED -> READY -> MIGRATING -> COMPLETED over the sandbox trackers, with the real local orchestrator and
 * engine, the instant payment provider; at each status the steps it does not allow yet are refused with 409 and
 * the next step, and nothing of the refused request is kept. Then re-runs, a re-scan of a paid project, the
 * billing view and the role checks of the quote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { priceScan } from '../../functions/domain/pricing.ts';
import { createEngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { setPaymentProvider } from '../../functions/services/payments/index.ts';
import { offerQuote } from '../../functions/services/quotes.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import type { JiraIssueDump } from '../support/engine-harness.ts';
import { markProjectStatus, prepareProjectOverHttp } from '../support/lifecycle.ts';
import { sandboxControl, sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const ITEMS = 40;
const dir = mkdtempSync(join(tmpdir(), 'tms-project-lifecycle-'));
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '23' });
let sb: RunningSandboxes;
let app: TestApp;
let t: TestTenant;
let other: TestTenant;
let orchestrator: LocalOrchestrator;

beforeAll(async () => {
  for (const m of ['log', 'info', 'debug', 'warn'] as const)
    vi.spyOn(console, m).mockImplementation(() => {});
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, DATA_DIR: dir });
  [t, other] = await Promise.all([app.createTenant('Lifecycle'), app.createTenant('Other')]);
  const engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  orchestrator = new LocalOrchestrator({ handler: engine });
  setOrchestrator(orchestrator);
  // The offline provider, whatever the environment says.
  setPaymentProvider(undefined);
}, 120_000);

afterAll(async () => {
  orchestrator?.close();
  setOrchestrator(undefined);
  await app?.close();
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const creds = () => sandboxCredentials(sb, config);
const startBody = (type = 'FULL', options: Record<string, unknown> = {}) => {
  const body = sandboxStartBody(sb, config);
  return {
    ...body,
    type,
    enginePayload: { ...body.enginePayload, options: { ...body.enginePayload.options, ...options } },
  };
};

async function newProject(name: string): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  expect(res.body.status).toBe('DRAFT');
  return res.body.id;
}

const detail = async (id: string) =>
  (await app.call('GET', `/api/projects/${id}`, { token: t.member.token })).body;
const statusOf = async (id: string) => (await detail(id)).status;
/** The project's last run as the projects list shows it. */
const lastRunOf = async (id: string) =>
  (
    (await app.call('GET', '/api/projects', { token: t.member.token })).body as {
      id: string;
      lastRun?: unknown;
    }[]
  ).find((p) => p.id === id)?.lastRun;
const start = (id: string, body: unknown, token = t.member.token) =>
  app.call('POST', `/api/migrations/project/${id}/start`, { token, body });
const accept = (id: string, token = t.owner.token, body: unknown = {}) =>
  app.call('POST', `/api/projects/${id}/quote/accept`, { token, body });
const connect = (id: string, kind: 'source' | 'target') =>
  app.call('POST', '/api/connectors/test', {
    token: t.admin.token,
    body: { type: kind === 'source' ? 'azure_devops' : 'jira', credentials: creds()[kind], projectId: id },
  });
const scan = (id: string) =>
  app.call('POST', '/api/connectors/scan', {
    token: t.member.token,
    body: { type: 'azure_devops', projectId: id },
  });
const confirm = (id: string, token = t.admin.token) =>
  app.call('POST', `/api/projects/${id}/mappings/confirm`, { token });
const runsOf = async (id: string) =>
  (await app.call('GET', `/api/migrations?projectId=${id}`, { token: t.member.token })).body as {
    id: string;
  }[];

async function waitForRun(runId: string, wanted: string[]): Promise<string> {
  for (let i = 0; i < 1200; i++) {
    const s = (await app.call('GET', `/api/migrations/${runId}/status`, { token: t.member.token })).body
      .status;
    if (wanted.includes(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} never reached ${wanted.join(' or ')}`);
}

/** A 409 PROJECT_NOT_READY naming the status and the next step; the project's status and runs unchanged. */
async function expectRefusedStart(id: string, body: unknown, next: RegExp) {
  const before = await statusOf(id);
  const runs = (await runsOf(id)).length;
  const res = await start(id, body);
  expect(res.status).toBe(409);
  expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'PROJECT_NOT_READY' });
  expect(res.body.message).toContain(`is ${before}`);
  expect(res.body.message).toMatch(next);
  expect(await statusOf(id)).toBe(before);
  expect(await runsOf(id)).toHaveLength(runs);
}

describe('DRAFT -> COMPLETED through the API', () => {
  it('walks every status, refusing at each the steps it does not allow yet', async () => {
    const id = await newProject('The whole path');

    // DRAFT: nothing but connecting.
    await expectRefusedStart(id, startBody('SAMPLE'), /connect both trackers/);
    await expectRefusedStart(id, startBody('FULL', { dry_run: true }), /connect both trackers/);
    expect((await confirm(id)).body.code).toBe('SCAN_REQUIRED');
    const noQuote = await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token });
    expect(noQuote.status).toBe(409);
    expect(noQuote.body.code).toBe('QUOTE_NOT_AVAILABLE');
    const earlyAccept = await accept(id);
    expect(earlyAccept.status).toBe(409);
    expect(earlyAccept.body).toMatchObject({ code: 'PROJECT_NOT_READY' });
    expect(earlyAccept.body.message).toMatch(/is DRAFT: connect both trackers/);

    // One tracker connected is still DRAFT; both -> CONNECTED.
    expect((await connect(id, 'source')).body.success).toBe(true);
    expect(await statusOf(id)).toBe('DRAFT');
    expect((await connect(id, 'target')).body.success).toBe(true);
    expect(await statusOf(id)).toBe('CONNECTED');
    await expectRefusedStart(id, startBody('SAMPLE'), /scan the source: POST \/api\/connectors\/scan/);
    expect((await confirm(id)).body.code).toBe('SCAN_REQUIRED');

    // SCANNED: the quote exists, priced from the scan; paying and running wait for the mappings.
    const scanned = await scan(id);
    expect(scanned.status).toBe(200);
    expect(await statusOf(id)).toBe('SCANNED');
    const quote = (await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token })).body;
    expect(quote).toMatchObject({
      projectId: id,
      scanId: scanned.body.scanId,
      status: 'OPEN',
      checkoutUrl: null,
      ...priceScan(scanned.body.totalWorkItems, scanned.body.attachmentTotalGb),
    });
    expect((await detail(id)).quote).toEqual(quote);
    const tooEarly = await accept(id);
    expect(tooEarly.status).toBe(409);
    expect(tooEarly.body.message).toMatch(/is SCANNED: confirm the mappings/);
    await expectRefusedStart(id, startBody('SAMPLE'), /confirm the mappings/);
    // Confirming before saving is refused too.
    expect((await confirm(id)).body.code).toBe('MAPPINGS_NOT_SAVED');

    // MAPPED: trials run (and leave the status), paid runs wait for the payment.
    const suggested = (await app.call('GET', `/api/projects/${id}/mappings`, { token: t.member.token })).body;
    const { types, states, fields, users, linkTypes } = suggested;
    const saved = await app.call('PUT', `/api/projects/${id}/mappings`, {
      token: t.admin.token,
      body: { types, states, fields, users, linkTypes },
    });
    expect(saved.status).toBe(200);
    expect(await statusOf(id)).toBe('SCANNED');
    expect((await confirm(id)).body.projectStatus).toBe('MAPPED');
    await expectRefusedStart(
      id,
      startBody('FULL'),
      /accept the quote: .*; a SAMPLE run or a dry run can start now/,
    );
    await expectRefusedStart(id, startBody('INCREMENTAL'), /accept the quote/);
    const dry = await start(id, startBody('FULL', { dry_run: true }));
    expect(dry.status).toBe(200);
    expect(await waitForRun(dry.body.id, ['COMPLETED', 'PARTIAL'])).toBe('COMPLETED');
    expect(await statusOf(id)).toBe('MAPPED');
    expect((await sandboxControl(sb.jira.url, 'GET', '/_sandbox/jira/issues')) as unknown[]).toHaveLength(0);

    // Paying: the owner only; a stale quote id is refused; the instant provider pays at once -> READY.
    for (const token of [t.admin.token, t.member.token]) expect((await accept(id, token)).status).toBe(403);
    const stale = await accept(id, t.owner.token, { quoteId: '01a20392-0000-7000-8000-000000000000' });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('QUOTE_CHANGED');
    const paid = await accept(id, t.owner.token, { quoteId: quote.id });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ projectStatus: 'READY', quote: { id: quote.id, status: 'PAID' } });
    expect(paid.body.quote.paidAt).toEqual(expect.any(String));
    // Accepting again answers the paid quote: no second payment.
    expect((await accept(id)).body).toMatchObject({ projectStatus: 'READY', quote: { status: 'PAID' } });

    // READY -> MIGRATING -> COMPLETED, one Jira issue per item.
    const run = await start(id, startBody('FULL'));
    expect(run.status).toBe(200);
    expect(['MIGRATING', 'COMPLETED']).toContain(await statusOf(id));
    expect(await waitForRun(run.body.id, ['COMPLETED', 'PARTIAL', 'FAILED'])).toBe('COMPLETED');
    expect(await statusOf(id)).toBe('COMPLETED');
    // The projects list shows the last run without a query per project.
    expect(await lastRunOf(id)).toEqual({
      id: run.body.id,
      type: 'FULL',
      status: 'COMPLETED',
      createdAt: run.body.createdAt,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    const issues = (await sandboxControl(
      sb.jira.url,
      'GET',
      '/_sandbox/jira/issues?fields=labels',
    )) as JiraIssueDump[];
    const finished = (
      await app.call('GET', `/api/migrations/${run.body.id}/status`, { token: t.member.token })
    ).body;
    expect(finished.successCount).toBe(finished.totalItems);
    expect(issues.length).toBe(finished.totalItems);
    expect(issues.length).toBeGreaterThan(0);

    // A paid project re-runs without paying again, and a re-scan does not re-price it.
    expect((await scan(id)).status).toBe(200);
    expect(
      (await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token })).body,
    ).toMatchObject({
      id: quote.id,
      status: 'PAID',
    });
    const again = await start(id, startBody('INCREMENTAL'));
    expect(again.status).toBe(200);
    expect(await waitForRun(again.body.id, ['COMPLETED', 'PARTIAL', 'FAILED'])).toBe('COMPLETED');
    expect(await lastRunOf(id)).toMatchObject({
      id: again.body.id,
      type: 'INCREMENTAL',
      status: 'COMPLETED',
    });
    expect(await statusOf(id)).toBe('COMPLETED');

    // The owner's billing view: one quote, one payment, the spend for this project.
    const billing = await app.call('GET', '/api/billing', { token: t.owner.token });
    expect(billing.status).toBe(200);
    expect(billing.body.quotes).toEqual([expect.objectContaining({ id: quote.id, status: 'PAID' })]);
    expect(billing.body.payments).toEqual([
      expect.objectContaining({
        provider: 'instant',
        projectId: id,
        quoteId: quote.id,
        status: 'PAID',
        amountGbp: quote.finalPriceGbp,
        currency: 'GBP',
      }),
    ]);
    expect(billing.body.spendByProject).toEqual([
      { projectId: id, projectName: 'The whole path', totalGbp: quote.finalPriceGbp, payments: 1 },
    ]);
    expect(billing.body.totalSpentGbp).toBe(quote.finalPriceGbp);
    for (const token of [t.admin.token, t.member.token])
      expect((await app.call('GET', '/api/billing', { token })).status).toBe(403);
    // Nothing of it shows in another tenant's books, and their calls on this project's quote are 404s.
    const theirs = (await app.call('GET', '/api/billing', { token: other.owner.token })).body;
    expect(theirs).toMatchObject({ quotes: [], payments: [], spendByProject: [], totalSpentGbp: 0 });
    expect((await app.call('GET', `/api/projects/${id}/quote`, { token: other.owner.token })).status).toBe(
      404,
    );
    expect((await accept(id, other.owner.token)).status).toBe(404);
  }, 300_000);

  it('a re-scan before payment re-prices: the older quote is superseded and cannot be accepted', async () => {
    const id = await newProject('Re-priced');
    for (const kind of ['source', 'target'] as const)
      expect((await connect(id, kind)).body.success).toBe(true);
    await scan(id);
    const first = (await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token })).body;
    await scan(id);
    const second = (await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token })).body;
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('OPEN');
    const books = (await app.call('GET', '/api/billing', { token: t.owner.token })).body.quotes;
    expect(books.find((q: { id: string }) => q.id === first.id)?.status).toBe('SUPERSEDED');
    // Even once the project may pay, the old quote's id is refused with the new one named.
    await prepareMappings(id);
    const res = await accept(id, t.owner.token, { quoteId: first.id });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('QUOTE_CHANGED');
    expect(res.body.message).toContain(second.id);
    expect(await statusOf(id)).toBe('MAPPED');
  }, 120_000);

  it('an instant payment recorded but never settled (a crash in between) is settled by the next accept', async () => {
    const id = await newProject('Crashed mid-payment');
    const quote = await offerQuote(
      app.store,
      t.tenantId,
      id,
      '01a20392-0000-7000-8000-0000000000aa',
      priceScan(500, 0),
    );
    if (!quote) throw new Error('no quote offered');
    await markProjectStatus(app.store, t.tenantId, id, 'MAPPED');
    // What acceptQuote writes before it settles an instant payment, and nothing after: the crash.
    const now = new Date().toISOString();
    const cents = Math.round(quote.finalPriceGbp * 100);
    const recorded = await app.store.billing.startPayment(
      t.tenantId,
      quote,
      {
        id: 'instant_crashed',
        provider: 'instant',
        projectId: id,
        quoteId: quote.id,
        amountCents: cents,
        amountGbp: cents / 100,
        currency: 'GBP',
        status: 'PENDING',
        createdAt: now,
        updatedAt: now,
        paidAt: null,
      },
      { by: t.owner.id, at: now, checkoutUrl: null },
    );
    expect(recorded).toBe(true);
    expect((await app.call('GET', `/api/projects/${id}/quote`, { token: t.member.token })).body.status).toBe(
      'PENDING_PAYMENT',
    );
    const res = await accept(id);
    expect(res.body).toMatchObject({ projectStatus: 'READY', quote: { status: 'PAID' } });
    const payments = (await app.call('GET', '/api/billing', { token: t.owner.token })).body.payments;
    expect(payments.filter((p: { quoteId: string }) => p.quoteId === quote.id)).toEqual([
      expect.objectContaining({ id: 'instant_crashed', status: 'PAID' }),
    ]);
  });

  it('the test support path (prepareProjectOverHttp) walks DRAFT -> READY', async () => {
    const id = await newProject('Prepared');
    const seen = await prepareProjectOverHttp(app.call.bind(app), t.owner.token, id, creds());
    expect(seen).toEqual(['DRAFT', 'CONNECTED', 'SCANNED', 'MAPPED', 'READY']);
  }, 120_000);
});

async function prepareMappings(id: string) {
  const suggested = (await app.call('GET', `/api/projects/${id}/mappings`, { token: t.member.token })).body;
  const { types, states, fields, users, linkTypes } = suggested;
  await app.call('PUT', `/api/projects/${id}/mappings`, {
    token: t.admin.token,
    body: { types, states, fields, users, linkTypes },
  });
  expect((await confirm(id)).body.projectStatus).toBe('MAPPED');
}
