/**
 * Large scans in AWS: the connectors API hands them to the scan worker Lambda (the invoke mocked, its payload
 * captured) and the worker handler, run directly here against the Azure DevOps sandbox and DynamoDB Local,
 * completes them: from the request's inline credentials (sealed onto the scan record, gone once it ends) and
 * from a project's stored credentials. A refused invoke fails the scan at once (502), never leaving it
 * RUNNING; a worker failure is recorded on the scan with its reason.
 */
import { randomUUID } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { keys } from '../../functions/store/keys.ts';
import type { ScanRecord } from '../../functions/store/scans.ts';
import { handler as worker } from '../../functions/workers/scan.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';

const lambda = mockClient(LambdaClient);
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '300', SANDBOX_SEED: '11' });
let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const logged: string[] = [];

const source = () => sandboxCredentials(sb, config).source;
const target = () => sandboxCredentials(sb, config).target;
const ado = (method: string, path: string, body?: unknown) => sandboxControl(sb.ado.url, method, path, body);
const truthTotal = async () =>
  ((await ado('GET', '/_sandbox/ado/truth')) as { totalWorkItems: number }).totalWorkItems;
const payloads = () =>
  lambda
    .commandCalls(InvokeCommand)
    .map((c) => JSON.parse(Buffer.from(c.args[0].input.Payload as Uint8Array).toString('utf8')));
const rawScan = async (scanId: string) =>
  (await app.db.send(new GetCommand({ TableName: app.tableName, Key: keys.scan(t.tenantId, scanId) }))).Item;

async function connectedProject(withSource = true): Promise<string> {
  const project = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name: 'Worker scan', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const kinds = withSource
    ? ([
        ['azure_devops', source()],
        ['jira', target()],
      ] as const)
    : ([['jira', target()]] as const);
  for (const [type, credentials] of kinds) {
    const ok = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type, credentials, projectId: project.body.id },
    });
    expect(ok.body.success).toBe(true);
  }
  return project.body.id;
}

/** A scan record as the API leaves it for the worker (RUNNING), written directly so any size will do. */
async function pendingScan(projectId: string | null): Promise<ScanRecord> {
  const scan: ScanRecord = {
    scanId: randomUUID(),
    tenantId: t.tenantId,
    projectId,
    status: 'RUNNING',
    progress: { processed: 0, total: 300, percent: 0 },
    startedAt: new Date().toISOString(),
    finishedAt: null,
    report: null,
    error: null,
  };
  await app.store.scans.put(scan);
  return scan;
}

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  // The connectors handler chooses its dispatcher at cold start (its first request): the worker Lambda here.
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, SCAN_FUNCTION_NAME: 'tms-dev-scan-worker' });
  t = await app.createTenant('Worker');
});
afterAll(async () => {
  await app.close();
  await sb.stop();
  delete process.env.SCAN_FUNCTION_NAME;
});
beforeEach(() => lambda.reset());

describe('the scan worker handler', () => {
  it("completes a scan from the project's stored credentials and moves the project to SCANNED", async () => {
    const projectId = await connectedProject();
    const scan = await pendingScan(projectId);
    const out = await worker({ tenantId: t.tenantId, projectId, scanId: scan.scanId });
    expect(out).toEqual({ scanId: scan.scanId, status: 'COMPLETED' });
    const audit = await app.call('GET', `/api/audit/${scan.scanId}`, { token: t.member.token });
    expect(audit.body).toMatchObject({
      status: 'COMPLETED',
      progress: { processed: 300, total: 300, percent: 100 },
      report: { totalWorkItems: await truthTotal() },
    });
    const project = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(project.body).toMatchObject({ status: 'SCANNED', scanSummary: { scanId: scan.scanId } });
    // A repeated invocation (Lambda's asynchronous retries) leaves the ended scan alone.
    expect(await worker({ tenantId: t.tenantId, projectId, scanId: scan.scanId })).toEqual({
      scanId: scan.scanId,
      status: 'COMPLETED',
    });
  });

  it('records a clear reason when it cannot scan, and refuses a malformed event', async () => {
    const projectId = await connectedProject(false);
    const scan = await pendingScan(projectId);
    expect(await worker({ tenantId: t.tenantId, projectId, scanId: scan.scanId })).toEqual({
      scanId: scan.scanId,
      status: 'FAILED',
    });
    const audit = await app.call('GET', `/api/audit/${scan.scanId}`, { token: t.member.token });
    expect(audit.body.status).toBe('FAILED');
    expect(audit.body.error).toBe(
      `credentials is required: project ${projectId} has no stored source credentials`,
    );
    expect(audit.body.finishedAt).toEqual(expect.any(String));

    expect(await worker({ scanId: 'x' })).toEqual({ scanId: undefined, status: 'INVALID_EVENT' });
    expect(await worker({ tenantId: t.tenantId, projectId: null, scanId: randomUUID() })).toMatchObject({
      status: 'NOT_FOUND',
    });
  });
});

describe('POST /api/connectors/scan over 10,000 items, with the worker Lambda', () => {
  it('invokes the worker with ids only, and the worker completes the scan of inline credentials', async () => {
    await ado('POST', '/_sandbox/seed', { items: 10_050, seed: 11 });
    lambda.on(InvokeCommand).resolves({ StatusCode: 202 });
    const started = await app.call('POST', '/api/connectors/scan', {
      token: t.member.token,
      body: { type: 'azure_devops', credentials: source() },
    });
    expect(started.status).toBe(202);
    const scanId = started.body.scanId as string;
    expect(payloads()).toStrictEqual([{ tenantId: t.tenantId, projectId: null, scanId }]);
    const invoke = lambda.commandCalls(InvokeCommand)[0]!.args[0].input;
    expect(invoke).toMatchObject({ FunctionName: 'tms-dev-scan-worker', InvocationType: 'Event' });
    // The request's credentials wait for the worker sealed on the record, never in the clear.
    const pending = await rawScan(scanId);
    expect(pending?.sealedCredentials).toMatchObject({ alg: 'A256GCM', ct: expect.any(String) });
    expect(JSON.stringify(pending)).not.toContain(config.ado.pat);
    // Nothing runs in this process: the scan waits for its worker.
    expect((await app.call('GET', `/api/audit/${scanId}`, { token: t.member.token })).body.status).toBe(
      'RUNNING',
    );

    expect(await worker(payloads()[0])).toEqual({ scanId, status: 'COMPLETED' });
    const audit = await app.call('GET', `/api/audit/${scanId}`, { token: t.member.token });
    expect(audit.body).toMatchObject({
      status: 'COMPLETED',
      progress: { processed: 10_050, total: 10_050, percent: 100 },
      report: { totalWorkItems: 10_050 },
    });
    expect(audit.body).not.toHaveProperty('sealedCredentials');
    expect(await rawScan(scanId)).not.toHaveProperty('sealedCredentials');
    expect(logged.join('\n')).not.toContain(config.ado.pat);
  });

  it('fails the scan at once with a clear error when the worker cannot be invoked', async () => {
    lambda
      .on(InvokeCommand)
      .rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const res = await app.call('POST', '/api/connectors/scan', {
      token: t.member.token,
      body: { type: 'azure_devops', credentials: source() },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      statusCode: 502,
      message: 'Could not start the scan worker',
      error: 'Bad Gateway',
      code: 'ENGINE_DISPATCH_FAILED',
    });
    const [{ scanId }] = payloads();
    const scan = await app.call('GET', `/api/audit/${scanId}`, { token: t.member.token });
    expect(scan.body).toMatchObject({ status: 'FAILED', error: 'the scan worker could not be started' });
    expect(await rawScan(scanId)).not.toHaveProperty('sealedCredentials');
  });
});
