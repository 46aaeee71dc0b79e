/**
 * Scans through HTTP against the Azure DevOps sandbox: the figures equal the generator's ground truth (also
 * under 429 storms, 5xx and dropped connections), a named project becomes SCANNED with its quote, and a
 * 12,000-item scan answers at once and completes in the background.
 */
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceScan } from '../../functions/domain/pricing.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '300', SANDBOX_SEED: '7' });

interface Truth {
  totalWorkItems: number;
  typeCounts: Record<string, number>;
  iterationPaths: { path: string }[];
  areaPaths: { path: string }[];
  customFields: { referenceName: string }[];
  attachmentTotalBytes: number;
  commentCount: number;
}

const source = () => sandboxCredentials(sb, config).source;
const target = () => sandboxCredentials(sb, config).target;
const byPath = <T extends { path: string }>(a: T[]) => [...a].sort((x, y) => x.path.localeCompare(y.path));

const ado = (method: string, path: string, body?: unknown) => sandboxControl(sb.ado.url, method, path, body);

/** What a scan must answer for the sandbox's current world. */
async function expectedReport() {
  const truth = (await ado('GET', '/_sandbox/ado/truth')) as Truth;
  const gb = Math.round((truth.attachmentTotalBytes / 1024 ** 3) * 1e6) / 1e6;
  return {
    totalWorkItems: truth.totalWorkItems,
    typeCounts: truth.typeCounts,
    iterationPaths: byPath(truth.iterationPaths),
    areaPaths: byPath(truth.areaPaths),
    customFields: [...truth.customFields].sort((a, b) => a.referenceName.localeCompare(b.referenceName)),
    attachmentTotalGb: gb,
    commentCount: truth.commentCount,
    pricing: priceScan(truth.totalWorkItems, gb),
  };
}

function reportOf(body: Record<string, unknown>) {
  return {
    totalWorkItems: body.totalWorkItems,
    typeCounts: body.typeCounts,
    iterationPaths: byPath(body.iterationPaths as { path: string }[]),
    areaPaths: byPath(body.areaPaths as { path: string }[]),
    customFields: body.customFields,
    attachmentTotalGb: body.attachmentTotalGb,
    commentCount: body.commentCount,
    pricing: body.pricing,
  };
}

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  t = await app.createTenant('Scans');
});
afterAll(async () => {
  await app.close();
  await sb.stop();
});

const scan = (body: unknown, token = t.member.token) =>
  app.call('POST', '/api/connectors/scan', { token, body });

describe('POST /api/connectors/scan', () => {
  it('reports exactly what the source holds, with its price', async () => {
    const res = await scan({ type: 'azure_devops', credentials: source() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scanId: expect.any(String), status: 'COMPLETED' });
    expect(reportOf(res.body)).toEqual(await expectedReport());
    expect(res.body.totalWorkItems).toBe(300);
    const audit = await app.call('GET', `/api/audit/${res.body.scanId}`, { token: t.member.token });
    expect(audit.body).toMatchObject({
      scanId: res.body.scanId,
      status: 'COMPLETED',
      progress: { processed: 300, total: 300, percent: 100 },
    });
  });

  it('gets the same figures through 429 storms, 5xx and dropped connections, waiting as told', async () => {
    await ado('DELETE', '/_sandbox/requests');
    await ado('PUT', '/_sandbox/faults', {
      throttle: { count: 3, retryAfterSeconds: 1 },
      errorRate: 0.05,
      dropRate: 0.03,
    });
    const res = await scan({ type: 'azure_devops', credentials: source() });
    await ado('PUT', '/_sandbox/faults', { throttle: null, errorRate: 0, dropRate: 0 });
    expect(res.status).toBe(200);
    expect(reportOf(res.body)).toEqual(await expectedReport());
    const log = (await ado('GET', '/_sandbox/requests')) as { status: number; at: string; fault?: string }[];
    const throttled = log.filter((r) => r.fault === 'throttle');
    expect(throttled).toHaveLength(3);
    // After each 429 (Retry-After: 1) nothing reached the sandbox for at least that second.
    for (const r of throttled) {
      const at = Date.parse(r.at);
      const next = log.find((x) => Date.parse(x.at) > at && x !== r);
      expect(next && Date.parse(next.at) - at).toBeGreaterThanOrEqual(990);
    }
  });

  it('moves a connected project to SCANNED with its summary and quote, from stored credentials', async () => {
    const project = (
      await app.call('POST', '/api/projects', {
        token: t.owner.token,
        body: { name: 'To scan', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      })
    ).body;
    for (const [type, credentials] of [
      ['azure_devops', source()],
      ['jira', target()],
    ] as const) {
      const ok = await app.call('POST', '/api/connectors/test', {
        token: t.owner.token,
        body: { type, credentials, projectId: project.id },
      });
      expect(ok.body.success).toBe(true);
    }
    const res = await scan({ type: 'azure_devops', projectId: project.id });
    expect(res.status).toBe(200);
    const detail = (await app.call('GET', `/api/projects/${project.id}`, { token: t.member.token })).body;
    const expected = await expectedReport();
    expect(detail.status).toBe('SCANNED');
    expect(detail.scanSummary).toMatchObject({
      scanId: res.body.scanId,
      totalWorkItems: expected.totalWorkItems,
      commentCount: expected.commentCount,
    });
    expect(detail.quote).toMatchObject({ scanId: res.body.scanId, status: 'OPEN', ...expected.pricing });
    expect(detail.quote.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(detail).not.toHaveProperty('quoteId');
  });

  it('refuses a scan with no credentials, and answers 502 with the spec message when the source refuses', async () => {
    const missing = await scan({ type: 'azure_devops' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toEqual(['credentials is required']);
    const refused = await scan({
      type: 'azure_devops',
      credentials: { ...source(), personal_access_token: 'bad' },
    });
    expect(refused.status).toBe(502);
    expect(refused.body).toEqual({
      statusCode: 502,
      message: 'source connection failed with 401',
      error: 'Bad Gateway',
      code: 'SOURCE_TRACKER_ERROR',
    });
  });

  it('reports a scan its worker never finished as FAILED once it is past the worker time limit', async () => {
    const scanRecord = (minutesAgo: number) => ({
      scanId: uuidv7(),
      tenantId: t.tenantId,
      projectId: null,
      status: 'RUNNING' as const,
      progress: { processed: 10, total: 12_000, percent: 0 },
      startedAt: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
      finishedAt: null,
      report: null,
      error: null,
    });
    const lost = scanRecord(21);
    const working = scanRecord(5);
    await app.store.scans.put({ ...lost, sealedCredentials: 'sealed-for-the-worker' } as typeof lost);
    await app.store.scans.put(working);

    const failed = await app.call('GET', `/api/audit/${lost.scanId}`, { token: t.member.token });
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe('FAILED');
    expect(JSON.stringify(failed.body)).toContain('the scan worker stopped before the scan finished');
    // Recorded, not only answered, and the sealed credentials went with the RUNNING record.
    const stored = (await app.store.scans.get(t.tenantId, lost.scanId)) as unknown as Record<string, unknown>;
    expect(stored.status).toBe('FAILED');
    expect(stored.finishedAt).not.toBeNull();
    expect(stored.sealedCredentials).toBeUndefined();

    const still = await app.call('GET', `/api/audit/${working.scanId}`, { token: t.member.token });
    expect(still.body.status).toBe('RUNNING');
  });

  it("answers 404 for an unknown or another tenant's scan", async () => {
    const mine = await scan({ type: 'azure_devops', credentials: source() });
    const other = await app.createTenant('Nosy');
    const res = await app.call('GET', `/api/audit/${mine.body.scanId}`, { token: other.owner.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      statusCode: 404,
      message: `Scan ${mine.body.scanId} not found`,
      error: 'Not Found',
      code: 'SCAN_NOT_FOUND',
    });
    expect((await app.call('GET', '/api/audit/not-a-uuid', { token: t.owner.token })).status).toBe(404);
  });

  it('scans 12,000 items asynchronously: 202 at once, progress, then the full report', async () => {
    await ado('POST', '/_sandbox/seed', { items: 12_000 });
    const started = await scan({ type: 'azure_devops', credentials: source() });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({
      scanId: expect.any(String),
      status: 'RUNNING',
      totalWorkItems: 12_000,
      progress: { processed: 0, total: 12_000, percent: 0 },
      statusUrl: `/api/audit/${started.body.scanId}`,
    });
    const seen = new Set<number>();
    let audit = started;
    for (let i = 0; i < 1200; i++) {
      audit = await app.call('GET', `/api/audit/${started.body.scanId}`, { token: t.member.token });
      seen.add(audit.body.progress.processed);
      if (audit.body.status !== 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(audit.body.status).toBe('COMPLETED');
    expect(audit.body.progress).toEqual({ processed: 12_000, total: 12_000, percent: 100 });
    expect(seen.size).toBeGreaterThan(2);
    expect(reportOf(audit.body.report)).toEqual(await expectedReport());
  });
});
