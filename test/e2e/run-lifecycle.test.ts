/**
 * A live run's lifecycle through the API, as an admin drives it: the test app's gateway, the real local
 * orchestrator (the ASL state machine in this process) set as the API's orchestrator, the engine over the
 * sandbox trackers, and the run watched on its SSE stream. Start, pause mid-run (PAUSED, the execution ended,
 * nothing written after), resume to done with one Jira issue per source item; cancel; a repeated start (the
 * same run) and a different one (409); continue-as-new across several executions, never two at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { executionName } from '../../functions/domain/orchestration.ts';
import { createEngineHandler, type EngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { type SandboxConfig, sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import type { JiraIssueDump } from '../support/engine-harness.ts';
import { readyProject } from '../support/lifecycle.ts';
import { followRun, phaseOf, type RunFollower } from '../support/run-follower.ts';
import { sandboxControl, sandboxStartBody } from '../support/sandbox-fixtures.ts';

// 160 items: the pause and the cancel land at item 100 (the checkpoint after the first progress event seen),
// with room to spare under load; each more item is only CPU.
const ITEMS = 160;
const dir = mkdtempSync(join(tmpdir(), 'tms-lifecycle-'));
let sandboxes: RunningSandboxes;
let config: SandboxConfig;
let app: TestApp;
let tenant: TestTenant;
let engine: EngineHandler;
let orchestrator: LocalOrchestrator;
const followers: RunFollower[] = [];
/** Every console line of the file (the logger writes there): no tracker secret may show up in one. */
const captured: string[] = [];

beforeAll(async () => {
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  }
  config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '5' });
  sandboxes = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sandboxes);
  app = await startTestApp({ ADO_BASE_URL: sandboxes.ado.url, DATA_DIR: dir, STREAM_POLL_MS: '100' });
  tenant = await app.createTenant('Lifecycle');
  engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  orchestrator = new LocalOrchestrator({ handler: engine });
  setOrchestrator(orchestrator);
}, 120_000);

afterAll(async () => {
  for (const f of followers) f.close();
  orchestrator?.close();
  setOrchestrator(undefined);
  await app?.close();
  await sandboxes?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// Each test starts from an empty, fast Jira project, so counts in Jira are this test's run only.
beforeEach(async () => {
  await jira('POST', '/_sandbox/reset');
  await jira('PUT', '/_sandbox/faults', { latencyMs: 0 });
});

const jira = (method: string, path: string, body?: unknown) =>
  sandboxControl(sandboxes.jira.url, method, path, body);

const startBody = (source: Record<string, unknown> = {}) => sandboxStartBody(sandboxes, config, source);

const newProject = (name: string) => readyProject(app, tenant, name);

const start = (projectId: string, body: unknown = startBody()) =>
  app.call('POST', `/api/migrations/project/${projectId}/start`, { token: tenant.admin.token, body });
const control = (runId: string, action: 'pause' | 'resume' | 'cancel', token = tenant.admin.token) =>
  app.call('POST', `/api/migrations/${runId}/${action}`, { token });
const status = async (runId: string) =>
  (await app.call('GET', `/api/migrations/${runId}/status`, { token: tenant.member.token })).body;

async function waitForStatus(runId: string, wanted: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(runId);
    if (s.status === wanted) return s;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${s.status}, not ${wanted}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function follow(runId: string): RunFollower {
  const f = followRun(app.url, runId, tenant.member.token);
  followers.push(f);
  return f;
}

const createProgress = (f: RunFollower) =>
  f.waitFor((m) => m.event === 'progress' && phaseOf(m) >= 2, 90_000, 'progress of phase 2+');

/** The run's stored events, in order (the stream's source). */
async function storedEvents(projectId: string, runId: string) {
  const all = [];
  for (let after: string | undefined; ; ) {
    const page = await app.store.runs.events(tenant.tenantId, projectId, runId, after);
    all.push(...page);
    if (page.length < 500) return all;
    after = page.at(-1)?.id;
  }
}

/** Jira holds exactly one issue per migrated source item: the run's id map, label for label. */
async function expectOneIssuePerItem(runId: string, totalItems: number) {
  const issues = (await jira('GET', '/_sandbox/jira/issues?fields=labels')) as JiraIssueDump[];
  const labels = issues.flatMap((i) => (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')));
  expect(labels).toHaveLength(totalItems);
  expect(new Set(labels).size).toBe(totalItems);
  const idMap = await app.call('GET', `/api/migrations/${runId}/id-map`, { token: tenant.member.token });
  expect(idMap.status).toBe(200);
  expect(new Set(idMap.body.map((r: { sourceId: string | number }) => `src-id-${r.sourceId}`))).toEqual(
    new Set(labels),
  );
}

/** The run's executions in this process: one per generation, consecutive from 0, none still running. */
function expectSequentialExecutions(o: LocalOrchestrator, runId: string) {
  const executions = o.executions(runId);
  expect(executions.map((e) => e.generation)).toEqual(executions.map((_, i) => i));
  expect(executions.map((e) => e.name)).toEqual(executions.map((e) => executionName(runId, e.generation)));
  expect(executions.filter((e) => e.outcome === 'RUNNING')).toEqual([]);
  return executions;
}

describe('a live run through the API', () => {
  it('starts, pauses mid-run, resumes and completes with one Jira issue per item', async () => {
    const projectId = await newProject('Paused and resumed');
    // A slower Jira, so the pause lands while the create phase is at work.
    await jira('PUT', '/_sandbox/faults', { latencyMs: 60 });
    const started = await start(projectId);
    expect(started.status).toBe(200);
    const runId = started.body.id as string;
    expect(['PENDING', 'RUNNING']).toContain(started.body.status);
    const f = follow(runId);

    await createProgress(f);
    const paused = await control(runId, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ id: runId, status: 'PAUSED' });
    await waitForStatus(runId, 'PAUSED');
    await f.waitFor((m) => m.event === 'status' && JSON.parse(m.data).status === 'paused', 30_000, 'paused');

    // The execution has ended, and nothing was written after the paused status event.
    await orchestrator.idle(runId);
    const atPause = expectSequentialExecutions(orchestrator, runId);
    expect(atPause.at(-1)?.outcome).toBe('SUCCEEDED');
    const eventsAtPause = await storedEvents(projectId, runId);
    const lastAtPause = eventsAtPause.at(-1)?.event;
    expect(lastAtPause).toEqual({ type: 'status', status: 'paused' });
    const pausedStatus = await status(runId);
    expect(pausedStatus.successCount).toBeLessThan(pausedStatus.totalItems);
    // Still paused, still idle: a second pause answers the same, a resume is the only way on.
    expect((await control(runId, 'pause')).body).toEqual({ id: runId, status: 'PAUSED' });
    expect(await storedEvents(projectId, runId)).toHaveLength(eventsAtPause.length);

    await jira('PUT', '/_sandbox/faults', { latencyMs: 0 });
    const resumed = await control(runId, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({ id: runId, status: 'RUNNING' });
    const done = await f.done;
    await orchestrator.idle(runId);

    const final = await waitForStatus(runId, 'COMPLETED');
    expect(final.totalItems).toBeGreaterThan(50);
    expect(final.successCount).toBe(final.totalItems);
    expect(final.failureCount).toBe(0);
    expect(final.progressPercent).toBe(100);
    expect(done.stats).toEqual({ created: final.totalItems, skipped: 0, failed: 0 });
    await expectOneIssuePerItem(runId, final.totalItems);

    // The stream: ids strictly increasing across the reconnections, the pause and the resume, ending in done.
    const ids = f.messages.map((m) => m.id ?? '');
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    // Every event stored was sent live: the resume's first lines, at the place the pause left, included.
    expect(ids).toEqual((await storedEvents(projectId, runId)).map((e) => e.id));
    expect(f.messages.at(-1)?.event).toBe('done');
    const statuses = f.messages.filter((m) => m.event === 'status').map((m) => JSON.parse(m.data).status);
    expect(statuses.indexOf('paused')).toBeGreaterThanOrEqual(0);
    expect(statuses.at(-1)).toBe('completed');
    // The resume started a later generation: at least two executions, one after the other.
    expect(expectSequentialExecutions(orchestrator, runId).length).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it('cancels a run mid-run for good', async () => {
    const projectId = await newProject('Cancelled');
    await jira('PUT', '/_sandbox/faults', { latencyMs: 60 });
    const started = await start(projectId);
    expect(started.status).toBe(200);
    const runId = started.body.id as string;
    const f = follow(runId);
    await createProgress(f);

    // Members may not cancel (final); admins may.
    expect((await control(runId, 'cancel', tenant.member.token)).status).toBe(403);
    const cancelled = await control(runId, 'cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ id: runId, status: 'CANCELLED' });
    expect((await status(runId)).status).toBe('CANCELLED');

    await orchestrator.idle(runId);
    const executions = expectSequentialExecutions(orchestrator, runId);
    expect(executions).toHaveLength(1);
    const after = await status(runId);
    expect(after.status).toBe('CANCELLED');
    expect(after.successCount).toBeLessThan(after.totalItems);
    // Only a part reached Jira, each item once.
    const issues = (await jira('GET', '/_sandbox/jira/issues?fields=labels')) as JiraIssueDump[];
    const labels = issues.flatMap((i) => (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')));
    expect(labels.length).toBeLessThan(after.totalItems);
    expect(new Set(labels).size).toBe(labels.length);

    expect((await control(runId, 'cancel')).body).toEqual({ id: runId, status: 'CANCELLED' });
    const resume = await control(runId, 'resume');
    expect(resume.status).toBe(400);
    expect(resume.body.code).toBe('MIGRATION_NOT_PAUSED');
    const pause = await control(runId, 'pause');
    expect(pause.status).toBe(409);
    expect(pause.body.code).toBe('MIGRATION_FINISHED');

    // The lock is released: the next start is a new run.
    const next = await start(projectId);
    expect(next.status).toBe(200);
    expect(next.body.id).not.toBe(runId);
    expect((await control(next.body.id, 'cancel')).status).toBe(200);
    await orchestrator.idle(next.body.id);
  }, 240_000);

  it("tells the run's watcher of a pause, a resume and a cancel made through the API, and ends its stream with done", async () => {
    const projectId = await newProject('Watched');
    await jira('PUT', '/_sandbox/faults', { latencyMs: 60 });
    const started = await start(projectId);
    expect(started.status).toBe(200);
    const runId = started.body.id as string;
    const f = follow(runId);
    const statusOf = (m: { event?: string | undefined; data: string }) =>
      m.event === 'status' ? (JSON.parse(m.data).status as string) : undefined;
    const told = (status: string) => f.waitFor((m) => statusOf(m) === status, 60_000, status);

    await createProgress(f);
    expect((await control(runId, 'pause')).body).toEqual({ id: runId, status: 'PAUSED' });
    await told('paused');
    await orchestrator.idle(runId);

    expect((await control(runId, 'resume')).body).toEqual({ id: runId, status: 'RUNNING' });
    const running = await told('running');
    // The resumed execution works on before the cancel: a progress event after the resume's status.
    await f.waitFor(
      (m) => m.event === 'progress' && f.messages.indexOf(m) > f.messages.indexOf(running),
      90_000,
      'progress after the resume',
    );
    expect((await control(runId, 'cancel')).body).toEqual({ id: runId, status: 'CANCELLED' });
    // The stream ends with done: the follower does not reconnect for more.
    const done = await f.done;
    await orchestrator.idle(runId);

    const cancelled = await status(runId);
    expect(cancelled.status).toBe('CANCELLED');
    // Each move told once, in order, whoever made it (the engine's pause, the API's resume and cancel).
    expect(f.messages.flatMap((m) => statusOf(m) ?? [])).toEqual(['paused', 'running', 'cancelled']);
    expect(f.messages.at(-1)?.event).toBe('done');
    expect(done.stats.skipped).toBe(0);
    expect(done.stats.failed).toBe(0);
    expect(done.stats.created).toBeGreaterThan(0);
    // A worker inside a chunk at the cancel finishes that chunk: its items may count after the done.
    expect(done.stats.created).toBeLessThanOrEqual(cancelled.successCount);

    // A stream opened after the cancel replays the history, the cancelled status and done, and ends there.
    const late = follow(runId);
    expect(await late.done).toEqual(done);
    expect(late.connections).toBe(1);
    expect(late.messages.flatMap((m) => statusOf(m) ?? [])).toEqual(['paused', 'running', 'cancelled']);
    expect(late.messages.at(-1)?.event).toBe('done');
  }, 240_000);

  it('answers a repeated start with the active run, and refuses a different one', async () => {
    const projectId = await newProject('Started twice');
    await jira('PUT', '/_sandbox/faults', { latencyMs: 60 });
    const first = await start(projectId);
    expect(first.status).toBe(200);
    const runId = first.body.id as string;

    const again = await start(projectId);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(runId);
    // A rotated secret is still the same request.
    const rotated = await start(projectId, startBody({ pat: 'another-pat' }));
    expect(rotated.status).toBe(200);
    expect(rotated.body.id).toBe(runId);

    const other = await start(projectId, startBody({ type_filter: 'Bug' }));
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('MIGRATION_ALREADY_RUNNING');

    const runs = await app.call('GET', `/api/migrations?projectId=${projectId}`, {
      token: tenant.member.token,
    });
    expect(runs.status).toBe(200);
    expect(runs.body.map((r: { id: string }) => r.id)).toEqual([runId]);
    // One execution only: the repeated starts dispatched nothing.
    expect(orchestrator.executions(runId).map((e) => e.generation)).toEqual([0]);

    expect((await control(runId, 'cancel')).status).toBe(200);
    await orchestrator.idle(runId);
  }, 120_000);

  it('continues as new across several executions, one at a time, to COMPLETED', async () => {
    // A small generation budget: each execution hands over to the next after two engine batches.
    let working = 0;
    let mostAtOnce = 0;
    const counted: EngineHandler = async (event, context) => {
      working++;
      mostAtOnce = Math.max(mostAtOnce, working);
      try {
        return await engine(event, context);
      } finally {
        working--;
      }
    };
    const budgeted = new LocalOrchestrator({ handler: counted, generationBudget: 2 });
    setOrchestrator(budgeted);
    try {
      const projectId = await newProject('Continued as new');
      const started = await start(projectId);
      expect(started.status).toBe(200);
      const runId = started.body.id as string;
      const f = follow(runId);
      const done = await f.done;
      await budgeted.idle(runId);

      const final = await waitForStatus(runId, 'COMPLETED');
      expect(done.stats.created).toBe(final.totalItems);
      expect(final.successCount).toBe(final.totalItems);
      await expectOneIssuePerItem(runId, final.totalItems);

      const executions = expectSequentialExecutions(budgeted, runId);
      expect(executions.length).toBeGreaterThanOrEqual(3);
      expect(executions.every((e) => e.outcome === 'SUCCEEDED')).toBe(true);
      // No fork: never two engine calls at once (this orchestrator ran only this run).
      expect(mostAtOnce).toBe(1);
      // The engine recorded the last generation on the run.
      const run = await app.store.runs.get(tenant.tenantId, runId);
      expect(run?.generation).toBe(executions.at(-1)?.generation);
    } finally {
      budgeted.close();
      setOrchestrator(orchestrator);
    }
  }, 240_000);

  it('logged the runs without a tracker secret', () => {
    expect(captured.some((l) => l.includes('engine batch'))).toBe(true);
    for (const secret of [config.ado.pat, config.jira.apiToken, 'another-pat']) {
      expect(captured.filter((l) => l.includes(secret))).toEqual([]);
    }
  });
});
