/**
 * Runs over OAuth-connected trackers, with the real engine handler (it opens the project's stored grants itself)
 * called invocation by invocation as the state machine would, against the sandboxes' Entra ID and Atlassian:
 * a run that outlives its access tokens keeps going (the engine refreshes them), and a run whose refresh is
 * refused pauses with the reason, fails no item, cannot resume until the tracker is reconnected, and then
 * finishes without creating anything twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createEngineHandler,
  type EngineHandler,
  type EngineResult,
} from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import type { JiraIssueDump } from '../support/engine-harness.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { sandboxControl } from '../support/sandbox-fixtures.ts';
import { connectByOAuth } from '../support/tracker-oauth.ts';

const ITEMS = 60;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '11' });
const dir = mkdtempSync(join(tmpdir(), 'tms-oauth-run-'));
let sb: RunningSandboxes;
let app: TestApp;
let t: TestTenant;
let engine: EngineHandler;
const orch = new RecordingOrchestrator();

const control = (tracker: 'ado' | 'jira', method: string, path: string, body?: unknown) =>
  sandboxControl(sb[tracker].url, method, path, body);
const refreshes = async (tracker: 'ado' | 'jira') =>
  ((await control(tracker, 'GET', `/_sandbox/${tracker}/oauth/stats`)) as { refreshExchanges: number })
    .refreshExchanges;

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, ...sandboxOAuthEnv(sb, config) });
  t = await app.createTenant('OAuthRuns');
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
  rmSync(dir, { recursive: true, force: true });
});
// An empty Jira project and fresh OAuth servers for each run.
beforeEach(async () => {
  await control('jira', 'POST', '/_sandbox/reset');
  await control('ado', 'POST', '/_sandbox/reset');
});

/** A READY project whose two trackers are connected by OAuth through the browser flow, and its run started. */
async function startOAuthRun(name: string): Promise<{ projectId: string; runId: string }> {
  const created = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const projectId: string = created.body.id;
  const source = await connectByOAuth(app, t.member.token, projectId, 'source', {
    organization_url: `${sb.ado.url}/${config.ado.org}`,
    project: config.ado.project,
  });
  const target = await connectByOAuth(app, t.member.token, projectId, 'target', {
    project_key: config.jira.projectKey,
  });
  expect(source.callback?.headers.location).toContain('status=connected');
  expect(target.callback?.headers.location).toContain('status=connected');
  await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
  // No secret in the body: both trackers are connected by OAuth.
  const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
    token: t.member.token,
    body: {
      type: 'FULL',
      enginePayload: {
        source: { org: config.ado.org, project: config.ado.project },
        target: { base_url: sb.jira.url, project_key: config.jira.projectKey },
        // No comments either: the grants, their refreshes and the pauses are the subject, and the 60 items'
        // thousand comments would triple each run's traffic without adding a refresh the test counts on.
        options: { migrate_attachments: false, migrate_comments: false },
      },
    },
  });
  expect(started.status).toBe(200);
  return { projectId, runId: started.body.id };
}

/** One engine invocation with budget for a single chunk (the next budget check says "time is up"). */
async function invoke(action: 'preflight' | 'batch' | 'finalize', runId: string): Promise<EngineResult> {
  let checks = 0;
  return engine(
    { action, tenantId: t.tenantId, runId, generation: 0 },
    { getRemainingTimeInMillis: () => (checks++ === 0 ? 900_000 : 0) },
  );
}

/** Invocations as the state machine makes them until the run stops; `between` runs before each batch call. */
async function driveToEnd(runId: string, between?: (call: number) => Promise<void>): Promise<string> {
  let next: 'preflight' | 'batch' | 'finalize' = 'preflight';
  for (let call = 0; call < 500; call++) {
    if (next === 'batch') await between?.(call);
    const result = await invoke(next, runId);
    const answer = 'answer' in result ? result.answer : 'failed';
    if (['done', 'failed', 'cancelled', 'paused'].includes(answer)) return answer;
    next = answer === 'finalize' ? 'finalize' : 'batch';
  }
  throw new Error('the run did not stop in 500 invocations');
}

const runOf = async (runId: string) => {
  const run = await app.store.runs.get(t.tenantId, runId);
  if (!run) throw new Error('run gone');
  return run;
};
/** Every issue's key and labels: what the checks read. */
const jiraIssues = async () =>
  (await control('jira', 'GET', '/_sandbox/jira/issues?fields=labels')) as JiraIssueDump[];

describe('runs over OAuth connections', () => {
  it('keeps going when the access tokens expire mid-run: the engine refreshes them and writes the rotated ones back', async () => {
    const { runId } = await startOAuthRun('Outlives its tokens');
    const before = { ado: await refreshes('ado'), jira: await refreshes('jira') };
    // Every third invocation, both providers expire every token they issued (as an hour passing would).
    const answer = await driveToEnd(runId, async (call) => {
      if (call % 3 === 0) {
        await control('ado', 'POST', '/_sandbox/ado/oauth/expire-access-tokens');
        await control('jira', 'POST', '/_sandbox/jira/oauth/expire-access-tokens');
      }
    });
    expect(answer).toBe('done');
    const run = await runOf(runId);
    expect(run.status).toBe('COMPLETED');
    expect(run.successCount).toBe(run.totalItems);
    expect(run.failureCount).toBe(0);
    expect(run.totalItems).toBeGreaterThan(50);
    expect(await refreshes('ado')).toBeGreaterThan(before.ado + 1);
    expect(await refreshes('jira')).toBeGreaterThan(before.jira + 1);
    expect((await jiraIssues()).length).toBe(run.totalItems);
  });

  it('pauses with "Token exchange failed" when a refresh is refused, fails no item, and finishes after a reconnect', async () => {
    const { projectId, runId } = await startOAuthRun('Refused mid-run');
    expect((await invoke('preflight', runId)) as { answer: string }).toMatchObject({ answer: 'batch' });
    expect(await invoke('batch', runId)).toMatchObject({ answer: 'batch' });
    const createdBefore = (await jiraIssues()).length;
    expect(createdBefore).toBeGreaterThan(0);

    // The user removed the app at Atlassian: tokens and refresh tokens are dead.
    await control('jira', 'POST', '/_sandbox/jira/oauth/revoke');
    expect(await invoke('batch', runId)).toMatchObject({ answer: 'paused' });
    const paused = await runOf(runId);
    expect(paused.status).toBe('PAUSED');
    expect(paused.failureCount).toBe(0);
    expect(paused.pauseReason).toBe(
      'Token exchange failed: the Jira (target) OAuth connection was refused; reconnect the target tracker',
    );
    expect(await app.store.runFailures.list(t.tenantId, projectId, runId)).toEqual([]);
    const status = await app.call('GET', `/api/migrations/${runId}/status`, { token: t.member.token });
    expect(status.body).toMatchObject({ status: 'PAUSED', failureCount: 0, pauseReason: paused.pauseReason });
    const events = (await app.store.runs.events(t.tenantId, projectId, runId)).map((e) => e.event);
    expect(events).toContainEqual({
      type: 'log',
      message: `Run paused: ${paused.pauseReason}, then resume the run`,
    });
    expect(events.at(-1)).toEqual({ type: 'status', status: 'paused' });
    // Another invocation (a retry) changes nothing and calls nobody with the dead grant.
    expect(await invoke('batch', runId)).toMatchObject({ answer: 'paused' });

    // Resuming before reconnecting would only pause again: refused with the reason.
    const early = await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.member.token });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({
      code: 'TOKEN_EXCHANGE_FAILED',
      message: `${paused.pauseReason}, then resume`,
    });
    const project = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(project.body.connections.target).toMatchObject({ ok: false, reconnectRequired: true });

    const again = await connectByOAuth(app, t.member.token, projectId, 'target', {
      project_key: config.jira.projectKey,
    });
    expect(again.callback?.headers.location).toContain('status=connected');
    const resumed = await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.member.token });
    expect(resumed.status).toBe(200);
    expect((await runOf(runId)).pauseReason).toBeNull();
    expect(await driveToEnd(runId)).toBe('done');

    const run = await runOf(runId);
    expect(run.status).toBe('COMPLETED');
    expect(run.failureCount).toBe(0);
    expect(run.successCount + run.skippedCount).toBe(run.totalItems);
    const issues = await jiraIssues();
    expect(issues.length).toBe(run.totalItems);
    const sourceIds = issues.map((i) => (i.fields.labels ?? []).find((l) => /^src-id-\d+$/.test(l)));
    expect(new Set(sourceIds).size).toBe(issues.length);
  });

  it('pauses (no reconnect needed) while the token endpoint is unreachable, and resumes to COMPLETED', async () => {
    const { projectId, runId } = await startOAuthRun('Provider down');
    expect(await invoke('preflight', runId)).toMatchObject({ answer: 'batch' });
    expect(await invoke('batch', runId)).toMatchObject({ answer: 'batch' });
    // Atlassian's authorization server is down (nothing listens there), and the access tokens expire.
    const authUrl = process.env.ATLASSIAN_AUTH_URL;
    process.env.ATLASSIAN_AUTH_URL = 'http://127.0.0.1:9';
    try {
      await control('jira', 'POST', '/_sandbox/jira/oauth/expire-access-tokens');
      expect(await invoke('batch', runId)).toMatchObject({ answer: 'paused' });
    } finally {
      process.env.ATLASSIAN_AUTH_URL = authUrl;
    }
    const paused = await runOf(runId);
    expect(paused).toMatchObject({ status: 'PAUSED', failureCount: 0 });
    expect(paused.pauseReason).toBe(
      'Token refresh failed: the Jira (target) sign-in service could not be reached; resume the run later',
    );
    const project = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(project.body.connections.target).toMatchObject({ ok: true, reconnectRequired: false });

    // The grant is fine: resuming needs no reconnect.
    const resumed = await app.call('POST', `/api/migrations/${runId}/resume`, { token: t.member.token });
    expect(resumed.status).toBe(200);
    expect(await driveToEnd(runId)).toBe('done');
    const run = await runOf(runId);
    expect(run).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    expect((await jiraIssues()).length).toBe(run.totalItems);
  });
});
