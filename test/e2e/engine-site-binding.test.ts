/**
 * A run is bound to the sites it started against. Over the sandboxes and a second Jira sandbox playing another
 * company's site, with the real engine handler (it opens the project's stored connections itself) called as the
 * state machine would: the API refuses to point a project's target at the other site while a run of it is at
 * work, paused or rolled back (409), and when the connection is swapped all the same (through the store, as a
 * race or a bug would), the engine refuses to work: a resumed run pauses, a resumed rollback pauses, each with the
 * reason, and nothing is read from, written to or deleted on the other site. With the connection put back (the
 * API accepts the site the run is bound to), the run carries on to its end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { siteMovedReason } from '../../functions/domain/run-sites.ts';
import {
  createEngineHandler,
  type EngineHandler,
  type EngineResult,
} from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { loadTarget } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { startJiraSite } from '../support/jira-sandbox.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import {
  sandboxControl,
  sandboxCredentials,
  sandboxStartBody,
  storeSandboxConnections,
} from '../support/sandbox-fixtures.ts';

const ITEMS = 60;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '31' });
const KEY = config.jira.projectKey;
const dir = mkdtempSync(join(tmpdir(), 'tms-site-binding-'));
let sb: RunningSandboxes;
/** Another company's Jira site: the same sandbox accounts and project key, another origin. */
let otherJira: { app: FastifyInstance; url: string };
let app: TestApp;
let t: TestTenant;
let engine: EngineHandler;
const orch = new RecordingOrchestrator();

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  otherJira = await startJiraSite(config);
  allowSandboxPorts(sb);
  // The API's artifacts (a rollback reads the run's preflight) are the engine's: one directory.
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, DATA_DIR: dir });
  t = await app.createTenant('SiteBinding');
  engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  setOrchestrator(orch);
}, 120_000);
afterAll(async () => {
  setOrchestrator(undefined);
  await app?.close();
  await sb?.stop();
  await otherJira?.app.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  orch.starts.length = 0;
  await sandboxControl(sb.jira.url, 'POST', '/_sandbox/reset');
  await sandboxControl(otherJira.url, 'POST', '/_sandbox/reset');
});

const credentials = () => sandboxCredentials(sb, config);
/** The same account and key on the other company's site. */
const otherTarget = () => ({ ...credentials().target, base_url: otherJira.url });
const issuesIn = async (jiraUrl: string) =>
  (await sandboxControl(jiraUrl, 'GET', '/_sandbox/jira/issues')) as { key: string }[];
const requestsTo = async (jiraUrl: string) =>
  (await sandboxControl(jiraUrl, 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
const runOf = async (runId: string) => (await app.store.runs.get(t.tenantId, runId))!;
const lastEvents = async (projectId: string, runId: string, n: number) =>
  (await app.store.runs.events(t.tenantId, projectId, runId)).map((e) => e.event).slice(-n);
const test = (type: 'azure_devops' | 'jira', projectId: string, creds: unknown) =>
  app.call('POST', '/api/connectors/test', {
    token: t.owner.token,
    body: { type, projectId, credentials: creds },
  });

/** A READY project whose trackers the owner connected (tested OK), and its FULL run started through the API. */
async function startedRun(name: string): Promise<{ projectId: string; runId: string }> {
  const created = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const projectId: string = created.body.id;
  expect((await test('azure_devops', projectId, credentials().source)).body.success).toBe(true);
  expect((await test('jira', projectId, credentials().target)).body.success).toBe(true);
  await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
  const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
    token: t.owner.token,
    body: sandboxStartBody(sb, config),
  });
  expect(started.status).toBe(200);
  return { projectId, runId: started.body.id };
}

/** One engine invocation of the run's latest execution; `chunks: 1`: budget for one chunk only. */
async function invoke(
  action: 'preflight' | 'batch' | 'finalize',
  runId: string,
  opts: { chunks?: 1 } = {},
): Promise<EngineResult> {
  let checks = 0;
  const generation = orch.starts.filter((s) => s.runId === runId).at(-1)?.generation ?? 0;
  return engine(
    { action, tenantId: t.tenantId, runId, generation },
    { getRemainingTimeInMillis: () => (opts.chunks === 1 && checks++ > 0 ? 0 : 900_000) },
  );
}

/** Invocations as the state machine makes them, from Preflight, until the execution ends. */
async function driveToEnd(runId: string): Promise<string> {
  let next: 'preflight' | 'batch' | 'finalize' = 'preflight';
  for (let call = 0; call < 200; call++) {
    const result = await invoke(next, runId);
    const answer = 'answer' in result ? result.answer : 'failed';
    if (['done', 'failed', 'cancelled', 'paused'].includes(answer)) return answer;
    next = answer === 'finalize' ? 'finalize' : 'batch';
  }
  throw new Error('the execution did not end in 200 invocations');
}

/** Points the project's target at the other site through the store: what the API refuses, done all the same. */
async function swapTargetToOtherSite(projectId: string): Promise<void> {
  await storeSandboxConnections(
    app.store,
    { tenantId: t.tenantId, projectId },
    { ...credentials(), target: otherTarget() },
    ['target'],
  );
  expect((await loadTarget(app.store, t.tenantId, projectId))?.creds.base_url).toBe(otherJira.url);
}

describe('a run bound to the sites it started against', () => {
  it('a paused run resumed after its target was pointed at another site pauses, writing nothing there; put back, it finishes', async () => {
    // Prepare: a run at work, one chunk created in Jira, then paused
    const { projectId, runId } = await startedRun('Bound run');
    expect(await invoke('preflight', runId)).toMatchObject({ answer: 'batch' });
    expect(await invoke('batch', runId, { chunks: 1 })).toMatchObject({ answer: 'batch' });
    const createdBefore = (await issuesIn(sb.jira.url)).length;
    expect(createdBefore).toBeGreaterThan(0);
    expect((await runOf(runId)).sites).toEqual({
      source: { organizationUrl: credentials().source.organization_url, project: config.ado.project },
      target: { siteUrl: sb.jira.url, projectKey: KEY },
    });
    expect((await app.call('POST', `/api/migrations/${runId}/pause`, { token: t.owner.token })).status).toBe(
      200,
    );
    expect(await invoke('batch', runId)).toMatchObject({ answer: 'paused' });
    expect((await runOf(runId)).status).toBe('PAUSED');

    // Act + Assess: the API keeps the target where the run works (409), before any request to the other site
    const refused = await test('jira', projectId, otherTarget());
    expect(refused.body).toEqual({
      statusCode: 409,
      message:
        `Run ${runId} of this project is at work against its target connection (Jira site ${sb.jira.url}, ` +
        `project ${KEY}): connect the target elsewhere once the run has ended (or cancel it); new credentials ` +
        'for that site and project are accepted',
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    });
    expect(await requestsTo(otherJira.url)).toEqual([]);

    // Act: the target swapped all the same, the run resumed and worked
    await swapTargetToOtherSite(projectId);
    const resumed = await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.owner.token });
    expect(resumed.body).toEqual({ id: runId, status: 'RUNNING' });
    expect(await invoke('preflight', runId)).toMatchObject({ answer: 'paused' });

    // Assess: paused with the reason, nothing asked of either Jira, the stream and the status tell why
    const reason = siteMovedReason((await runOf(runId)).sites!, {
      ...(await runOf(runId)).sites!,
      target: { siteUrl: otherJira.url, projectKey: KEY },
    });
    expect(reason).toContain(`connect the target to Jira site ${sb.jira.url}, project ${KEY} again`);
    expect(await runOf(runId)).toMatchObject({ status: 'PAUSED', pauseReason: reason, failureCount: 0 });
    expect(await requestsTo(otherJira.url)).toEqual([]);
    expect((await issuesIn(otherJira.url)).length).toBe(0);
    expect((await issuesIn(sb.jira.url)).length).toBe(createdBefore);
    expect(await lastEvents(projectId, runId, 2)).toEqual([
      { type: 'log', message: `Run paused: ${reason}, then resume the run` },
      { type: 'status', status: 'paused' },
    ]);
    const status = await app.call('GET', `/api/migrations/${runId}/status`, { token: t.member.token });
    expect(status.body).toMatchObject({ status: 'PAUSED', pauseReason: reason });

    // Act: the target put back through the API (the run's own site is accepted), the run resumed to its end
    expect((await test('jira', projectId, credentials().target)).body.success).toBe(true);
    expect((await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.owner.token })).status).toBe(
      200,
    );
    expect(await driveToEnd(runId)).toBe('done');

    // Assess: every item in the run's own Jira, none on the other site
    const run = await runOf(runId);
    expect(run).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    expect((await issuesIn(sb.jira.url)).length).toBe(run.totalItems);
    expect((await issuesIn(otherJira.url)).length).toBe(0);
  });

  it('a paused rollback resumed after its target was pointed at another site deletes nothing there: it pauses with the reason', async () => {
    // Prepare: a finished run, its preview, the confirmed rollback paused before it deleted anything
    const { projectId, runId } = await startedRun('Bound rollback');
    expect(await driveToEnd(runId)).toBe('done');
    const created = (await issuesIn(sb.jira.url)).length;
    expect(created).toBe((await runOf(runId)).totalItems);
    const rollBack = (body: unknown) =>
      app.call('POST', `/api/migrations/${runId}/rollback`, { token: t.admin.token, body });
    expect((await rollBack({})).status).toBe(202);
    expect(await driveToEnd(runId)).toBe('done');
    expect((await rollBack({ preview: false, confirm: true })).status).toBe(202);
    expect((await app.call('POST', `/api/migrations/${runId}/pause`, { token: t.admin.token })).body).toEqual(
      { id: runId, status: 'ROLLBACK_PAUSED' },
    );
    expect(await invoke('preflight', runId)).toMatchObject({ answer: 'paused' });
    expect((await runOf(runId)).status).toBe('ROLLBACK_PAUSED');
    expect((await issuesIn(sb.jira.url)).length).toBe(created);

    // Act + Assess: the API keeps the target where the rollback deletes (409)
    const refused = await test('jira', projectId, otherTarget());
    expect(refused.body).toMatchObject({
      statusCode: 409,
      code: 'MIGRATION_ALREADY_RUNNING',
      message: expect.stringContaining(
        `Run ${runId} of this project is being rolled back against its target`,
      ),
    });

    // Prepare: the other company's site holds issues under the same keys the rollback would delete
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${otherJira.url}/rest/api/3/issue`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`,
        },
        body: JSON.stringify({
          fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary: `Theirs ${i}` },
        }),
      });
      expect(res.status).toBe(201);
    }
    const theirs = (await issuesIn(otherJira.url)).map((i) => i.key);
    expect(theirs).toHaveLength(5);
    await sandboxControl(otherJira.url, 'DELETE', '/_sandbox/requests');

    // Act: the target swapped all the same, the rollback resumed and worked
    await swapTargetToOtherSite(projectId);
    const resumed = await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.owner.token });
    expect(resumed.body).toEqual({ id: runId, status: 'ROLLING_BACK' });
    expect(await driveToEnd(runId)).toBe('paused');

    // Assess: paused with the reason; not one request to the other site, its issues and the run's all there
    const run = await runOf(runId);
    const reason = siteMovedReason(run.sites!, {
      ...run.sites!,
      target: { siteUrl: otherJira.url, projectKey: KEY },
    });
    expect(run).toMatchObject({ status: 'ROLLBACK_PAUSED', pauseReason: reason });
    expect(await requestsTo(otherJira.url)).toEqual([]);
    expect((await issuesIn(otherJira.url)).map((i) => i.key)).toEqual(theirs);
    expect((await issuesIn(sb.jira.url)).length).toBe(created);
    expect(await lastEvents(projectId, runId, 2)).toEqual([
      { type: 'log', message: `Rollback paused: ${reason}, then resume the run` },
      { type: 'status', status: 'rollback_paused' },
    ]);
  });
});
