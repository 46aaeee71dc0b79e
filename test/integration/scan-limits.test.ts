/**
 * Background scans are bounded (issue 29, point 8), through HTTP against the Azure DevOps sandbox (10,050 items,
 * so every scan here goes to the background) and the local dispatcher: one running scan per project and per
 * credential (a second start answers the running scan, or 409 when the same credential scans something else),
 * a tenant's running scans capped (SCAN_MAX_PER_TENANT) and their places given back when a worker ends, or once
 * a crashed worker's scan counts as lost; and the route is rate limited per user.
 *
 * The local dispatcher is gated: a scan handed over waits, RUNNING, until the test lets its worker run (the
 * same runScanJob the in-process dispatcher runs at once), so "a scan still running" is a state the test
 * holds, not a race against the worker.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../functions/platform/clock.ts';
import { scanDispatcher } from '../../functions/services/scan-dispatch.ts';
import { runScanJob, type ScanDispatcher, type ScanJob } from '../../functions/services/scans.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';

const ITEMS = 10_050;
const MAX_PER_TENANT = 2;
const SCANS_PER_MINUTE = 5;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '29' });

class GatedScanDispatcher implements ScanDispatcher {
  private readonly held = new Map<string, ScanJob>();

  async dispatch(job: ScanJob): Promise<void> {
    this.held.set(job.scanId, job);
  }

  /** Lets the scan's worker run, as when its Lambda starts; resolves once the worker has ended. */
  async finish(scanId: string) {
    const job = this.held.get(scanId);
    if (!job) throw new Error(`scan ${scanId} was not dispatched`);
    this.held.delete(scanId);
    return runScanJob(app.store, job);
  }
}

let app: TestApp;
let sb: RunningSandboxes;
const gate = new GatedScanDispatcher();

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({
    ADO_BASE_URL: sb.ado.url,
    SCAN_MAX_PER_TENANT: String(MAX_PER_TENANT),
    SCAN_RATE_LIMIT_PER_MINUTE: String(SCANS_PER_MINUTE),
  });
  scanDispatcher.use(gate);
});
afterAll(async () => {
  scanDispatcher.use(undefined);
  await app.close();
  await sb.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const source = () => sandboxCredentials(sb, config).source;
const ado = (method: string, path: string, body?: unknown) => sandboxControl(sb.ado.url, method, path, body);
const scan = (token: string, body: Record<string, unknown>) =>
  app.call('POST', '/api/connectors/scan', { token, body: { type: 'azure_devops', ...body } });
const audit = (token: string, scanId: string) => app.call('GET', `/api/audit/${scanId}`, { token });

/** A project whose source is connected with the sandbox's credentials (stored, sealed). */
async function connectedProject(t: TestTenant, name = 'Big'): Promise<string> {
  const project = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const test = await app.call('POST', '/api/connectors/test', {
    token: t.owner.token,
    body: { type: 'azure_devops', credentials: source(), projectId: project.body.id },
  });
  expect(test.body.success).toBe(true);
  return project.body.id;
}

/** Three such projects, one after the other. */
async function connectedProjects(t: TestTenant): Promise<[string, string, string]> {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await connectedProject(t, `Big ${i + 1}`));
  return ids as [string, string, string];
}

/** The 202 of a background scan that has just started. */
const started = (scanId: string) => ({
  status: 202,
  body: {
    scanId,
    status: 'RUNNING',
    totalWorkItems: ITEMS,
    progress: { processed: 0, total: ITEMS, percent: 0 },
    statusUrl: `/api/audit/${scanId}`,
  },
});

const answerOf = (res: Awaited<ReturnType<typeof scan>>) => ({ status: res.status, body: res.body });

describe('one running scan per project', () => {
  it('answers the running scan to a second start, without asking the tracker, and a new scan once it ended', async () => {
    const t = await app.createTenant('SameProject');
    const projectId = await connectedProject(t);
    const first = await scan(t.member.token, { projectId });
    expect(answerOf(first)).toEqual(started(first.body.scanId));

    await ado('DELETE', '/_sandbox/requests');
    const again = await scan(t.admin.token, { projectId });
    expect(answerOf(again)).toEqual(started(first.body.scanId));
    expect(await ado('GET', '/_sandbox/requests')).toEqual([]);

    // The worker ends it (failed, quicker than a whole scan: the source connection is gone by then).
    await app.store.connections.delete(t.tenantId, projectId, 'source');
    expect((await gate.finish(first.body.scanId))?.status).toBe('FAILED');
    const reconnected = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type: 'azure_devops', credentials: source(), projectId },
    });
    expect(reconnected.body.success).toBe(true);
    const next = await scan(t.member.token, { projectId });
    expect(next.body.scanId).not.toBe(first.body.scanId);
    expect(answerOf(next)).toEqual(started(next.body.scanId));
  });
  it('starts one scan for starts of one project at the same moment, and answers it to each', async () => {
    const t = await app.createTenant('Simultaneous');
    const projectId = await connectedProject(t);
    const answers = await Promise.all([t.owner, t.admin, t.member].map((u) => scan(u.token, { projectId })));
    const scanId = answers[0]?.body.scanId as string;
    expect(answers.map(answerOf)).toEqual([started(scanId), started(scanId), started(scanId)]);
    // One record: the starts that lost the race left none behind.
    const records = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :scan)',
        ExpressionAttributeValues: { ':pk': `TENANT#${t.tenantId}`, ':scan': 'SCAN#' },
        ConsistentRead: true,
      }),
    );
    expect(records.Items?.map((i) => i.scanId)).toEqual([scanId]);
  });
});

describe('one running scan per credential', () => {
  it('answers the running scan to the same inline credentials, and 409 when they scan another project', async () => {
    const t = await app.createTenant('SameCredential');
    const first = await scan(t.member.token, { credentials: source() });
    expect(answerOf(first)).toEqual(started(first.body.scanId));

    // The same organisation, written another way, the same project and token: the same scan.
    const sameScope = {
      ...source(),
      organization_url: `${source().organization_url.toUpperCase().replace('HTTP://', 'http://')}/`,
    };
    expect(answerOf(await scan(t.admin.token, { credentials: sameScope }))).toEqual(
      started(first.body.scanId),
    );

    const elsewhere = await scan(t.admin.token, { credentials: { ...source(), project: 'Fabrikam' } });
    expect(answerOf(elsewhere)).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        message: `Scan ${first.body.scanId} is already running with these credentials; wait for it to end (GET /api/audit/${first.body.scanId})`,
        error: 'Conflict',
        code: 'SCAN_ALREADY_RUNNING',
      },
    });

    // The credential is known by a hash of its organisation and token: the tenant's items hold no token.
    const items = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `TENANT#${t.tenantId}` },
      }),
    );
    expect(items.Items?.length).toBeGreaterThan(0);
    expect(JSON.stringify(items.Items)).not.toContain(config.ado.pat);

    expect((await gate.finish(first.body.scanId))?.status).toBe('COMPLETED');
    const next = await scan(t.member.token, { credentials: source() });
    expect(answerOf(next)).toEqual(started(next.body.scanId));
    expect(next.body.scanId).not.toBe(first.body.scanId);
  });
});

describe("a tenant's running scans", () => {
  it('are capped, without holding up another tenant, and a finished or failed scan gives its place back', async () => {
    const t = await app.createTenant('Quota');
    const [a, b, c] = await connectedProjects(t);
    const scanA = await scan(t.member.token, { projectId: a });
    const scanB = await scan(t.member.token, { projectId: b });
    expect([scanA.status, scanB.status]).toEqual([202, 202]);

    const full = await scan(t.member.token, { projectId: c });
    expect(answerOf(full)).toEqual({
      status: 429,
      body: {
        statusCode: 429,
        message: `Your organisation already has ${MAX_PER_TENANT} background scans running, the most at once; retry when one has ended`,
        error: 'Too Many Requests',
        code: 'SCAN_LIMIT',
      },
    });
    expect(full.headers['retry-after']).toBe('60');
    // The refusal left nothing behind: still the two scans, and C's project untouched.
    const project = await app.call('GET', `/api/projects/${c}`, { token: t.member.token });
    expect(project.body.scanSummary ?? null).toBeNull();

    const other = await app.createTenant('OtherQuota');
    const otherScan = await scan(other.member.token, { projectId: await connectedProject(other) });
    expect(answerOf(otherScan)).toEqual(started(otherScan.body.scanId));

    // A scan that completes gives its place back.
    expect((await gate.finish(scanA.body.scanId))?.status).toBe('COMPLETED');
    // (Colleagues take turns from here: each user has a budget of SCANS_PER_MINUTE requests.)
    const scanC = await scan(t.admin.token, { projectId: c });
    expect(answerOf(scanC)).toEqual(started(scanC.body.scanId));
    expect((await scan(t.admin.token, { projectId: a })).status).toBe(429);

    // So does one that fails: B's source connection is gone when its worker starts.
    await app.store.connections.delete(t.tenantId, b, 'source');
    const failed = await gate.finish(scanB.body.scanId);
    expect(failed?.status).toBe('FAILED');
    const scanA2 = await scan(t.owner.token, { projectId: a });
    expect(answerOf(scanA2)).toEqual(started(scanA2.body.scanId));
  });

  it("hold a crashed worker's place only until its scan counts as lost (20 minutes)", async () => {
    const t = await app.createTenant('Crashed');
    const [a, b, c] = await connectedProjects(t);
    // Neither worker ever runs: both crashed before recording anything.
    const lostA = await scan(t.member.token, { projectId: a });
    await scan(t.member.token, { projectId: b });
    expect((await scan(t.member.token, { projectId: c })).status).toBe(429);

    const later = Date.now() + 21 * 60_000;
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(later));
    // Fifteen-minute access tokens have expired by then: sign in again.
    const token = (await app.login(t.member.email, TEST_PASSWORD, '127.0.0.250')).body.accessToken as string;
    const scanC = await scan(token, { projectId: c });
    expect(answerOf(scanC)).toEqual(started(scanC.body.scanId));
    const lost = await audit(token, lostA.body.scanId);
    expect(lost.body).toMatchObject({
      status: 'FAILED',
      error: 'the scan worker stopped before the scan finished; start the scan again',
    });
  });
});

describe('POST /api/connectors/scan', () => {
  it(`is rate limited per user: ${SCANS_PER_MINUTE} a minute`, async () => {
    const t = await app.createTenant('Rate');
    const projectId = await connectedProject(t);
    // Pinned inside one minute, so the count cannot straddle a window's end.
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000 + 60_000;
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(windowStart + 1_000));
    for (let i = 1; i <= SCANS_PER_MINUTE; i++) {
      const res = await scan(t.member.token, { projectId });
      expect(res.status).toBe(202);
      expect(res.headers['x-ratelimit-limit']).toBe(String(SCANS_PER_MINUTE));
      expect(res.headers['x-ratelimit-remaining']).toBe(String(SCANS_PER_MINUTE - i));
    }
    const limited = await scan(t.member.token, { projectId });
    expect(answerOf(limited)).toEqual({
      status: 429,
      body: {
        statusCode: 429,
        message: 'Too many requests; retry in 59 seconds',
        error: 'Too Many Requests',
        code: 'RATE_LIMITED',
      },
    });
    expect(limited.headers['retry-after']).toBe('59');
    expect(limited.headers['x-ratelimit-reset']).toBe(String(windowStart / 1000 + 60));
    // Another user of the tenant has a budget of their own.
    expect((await scan(t.admin.token, { projectId })).status).toBe(202);
  });
});
