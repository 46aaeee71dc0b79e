/**
 * Live runs offline: the real `statemachine/migration.asl.json` driven by the local interpreter, the engine
 * handler building its tracker clients from the project's sealed credentials, over the sandboxes and DynamoDB
 * Local. A whole run across several generations (continue-as-new, never forked), a pause that ends the
 * execution and a resume that goes on from the checkpoint, a throwing engine that fails the run with its reason,
 * a run the engine fails itself (preflight) ending the execution well, and a service "killed" mid-run that
 * resumes on start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { nextGeneration } from '../../functions/domain/orchestration.ts';
import { createEngineHandler, type EngineEvent, type EngineHandler } from '../../functions/engine/handler.ts';
import { MIN_BUDGET_MS } from '../../functions/engine/runner.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun, setRunControl } from '../support/runs.ts';
import { sandboxCredentials, storeSandboxConnections } from '../support/sandbox-fixtures.ts';

let h: EngineHarness;
const dir = mkdtempSync(join(tmpdir(), 'tms-orchestrator-'));
let engine: EngineHandler;
const options = { migrateAttachments: false, migrateComments: false };
/** Every console line of the file (the logger writes there): no credential may show up in one. */
const captured: string[] = [];

beforeAll(async () => {
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  }
  h = await startEngineHarness({ items: 24, seed: 11 });
  engine = createEngineHandler({
    store: () => h.app.store,
    artifacts: () => new DiskArtifactStore(dir),
    indexLagMs: 0,
  });
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});
// Every test starts from an empty Jira project, so "one issue per item" counts this test's run only.
beforeEach(async () => {
  await h.control('jira', 'POST', '/_sandbox/reset');
});

/** A project whose tracker credentials are stored sealed, as a connected project's are. */
async function connectedProject(name: string, kinds: ('source' | 'target')[] = ['source', 'target']) {
  const project = await h.newProject(name);
  const credentials = sandboxCredentials(h.sandboxes, h.config);
  await storeSandboxConnections(
    h.app.store,
    { tenantId: h.tenant.tenantId, projectId: project.id },
    credentials,
    kinds,
  );
  return project;
}

const getRun = async (runId: string) => (await h.app.store.runs.get(h.tenant.tenantId, runId))!;

/** Jira holds exactly one issue per item of the run's scope. */
async function expectOneIssuePerItem(runId: string) {
  const run = await getRun(runId);
  const labels = (await h.jiraIssues()).flatMap((i) =>
    (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')),
  );
  expect(run.totalItems).toBeGreaterThan(0);
  expect(labels).toHaveLength(run.totalItems);
  expect(new Set(labels).size).toBe(run.totalItems);
}

/** The engine handler, noting each call's action and answer. */
function watched(inner: EngineHandler, calls: string[], before?: (event: EngineEvent) => Promise<void>) {
  return (async (event, context) => {
    try {
      await before?.(event);
      const result = await inner(event, context);
      calls.push('answer' in result ? `${event.action}:${result.answer}` : event.action);
      return result;
    } catch (err) {
      calls.push(`${event.action}:threw`);
      throw err;
    }
  }) as EngineHandler;
}

describe('the local orchestrator over the real state machine', () => {
  it('runs a whole migration across generations, each started once, to COMPLETED', async () => {
    const project = await connectedProject('Whole run');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    const calls: string[] = [];
    const o = new LocalOrchestrator({ handler: watched(engine, calls), generationBudget: 2 });
    const input = { tenantId: h.tenant.tenantId, runId: run.id, generation: 0 };
    // A retried start of the same generation starts nothing more.
    await Promise.all([o.start(input), o.start(input)]);
    await o.idle(run.id);
    await o.start(input);
    await o.idle(run.id);

    const done = await getRun(run.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.successCount).toBe(done.totalItems);
    await expectOneIssuePerItem(run.id);

    const executions = o.executions(run.id);
    expect(executions.length).toBeGreaterThanOrEqual(3);
    // Consecutive generations, each named after its generation, each ended well, none twice.
    expect(executions.map((e) => e.name)).toEqual(executions.map((_, g) => `${run.id}-g${g}`));
    expect(executions.every((e) => e.outcome === 'SUCCEEDED')).toBe(true);
    expect(done.generation).toBe(executions.length - 1);
    // Every generation but the last made exactly its budget of engine calls; the last ended with "done" (its
    // Finalize comes straight after the answer `finalize`, with no budget check: one call over at most).
    expect(calls.length).toBeGreaterThan(2 * (executions.length - 1));
    expect(calls.length).toBeLessThanOrEqual(2 * executions.length + 1);
    // Preflight -> RunBatch ... -> Finalize: every execution opens with the Preflight step (which a continued
    // one passes at once), the phases are worked by RunBatch only, and the run ends in Finalize.
    expect(calls.filter((c) => c === 'preflight:batch')).toHaveLength(executions.length);
    expect(calls.filter((c) => c.startsWith('preflight:'))).toHaveLength(executions.length);
    // With a budget of 2, each execution is its Preflight and one RunBatch (the last then its Finalize).
    expect(calls.filter((c) => c.startsWith('batch:'))).toHaveLength(executions.length);
    expect(calls.filter((c) => c.startsWith('finalize:'))).toEqual(['finalize:done']);
    expect(calls.at(-2)).toBe('batch:finalize');
    expect(calls.at(-1)).toBe('finalize:done');
    expect(calls).not.toContain('fail');
  });

  it('ends the execution cleanly on pause; resuming at the next generation goes on from the checkpoint', async () => {
    const project = await connectedProject('Pause and resume');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    const calls: string[] = [];
    // The admin pauses once the create phase is done (the first RunBatch works it to its end).
    const pauseAfterCreate = async () => {
      if (calls.filter((c) => c.startsWith('batch:')).length === 1)
        await setRunControl(h.app.store, h.tenant.tenantId, run.id, 'pause');
    };
    const o = new LocalOrchestrator({
      handler: watched(engine, calls, pauseAfterCreate),
      generationBudget: 50,
    });
    await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
    await o.idle(run.id);

    const paused = await getRun(run.id);
    expect(paused.status).toBe('PAUSED');
    expect(calls).toEqual(['preflight:batch', 'batch:batch', 'batch:paused']);
    expect(o.executions(run.id)).toMatchObject([{ name: `${run.id}-g0`, outcome: 'SUCCEEDED' }]);
    expect(paused.cursor.phase).toBe(3);
    await expectOneIssuePerItem(run.id);

    // Resume, as the run API does: clear the flag, RUNNING again, the next generation.
    await setRunControl(h.app.store, h.tenant.tenantId, run.id, 'run');
    await h.app.store.runs.setStatus(h.tenant.tenantId, run.id, ['PAUSED'], 'RUNNING');
    expect(nextGeneration(paused)).toBe(1);
    await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: nextGeneration(paused) });
    await o.idle(run.id);

    const done = await getRun(run.id);
    expect(done.status).toBe('COMPLETED');
    expect(o.executions(run.id).map((e) => [e.name, e.outcome])).toEqual([
      [`${run.id}-g0`, 'SUCCEEDED'],
      [`${run.id}-g1`, 'SUCCEEDED'],
    ]);
    // Created once: the resumed generation went on with the hierarchy phase, not the create phase again.
    await expectOneIssuePerItem(run.id);
    expect(calls.slice(3, 5)).toEqual(['preflight:batch', 'batch:batch']);
    expect(calls.at(-1)).toBe('finalize:done');
    expect(done.successCount).toBe(done.totalItems);
  });

  it('retries a throttled engine call, and fails the run with the reason when the engine throws', async () => {
    // No target credentials: the engine throws as it builds its Jira client.
    const project = await connectedProject('No target', ['source']);
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    const calls: string[] = [];
    let throttled = false;
    const throttleOnce = async (event: EngineEvent) => {
      if (event.action !== 'preflight' || throttled) return;
      throttled = true;
      throw Object.assign(new Error('Rate exceeded'), { name: 'Lambda.TooManyRequestsException' });
    };
    const o = new LocalOrchestrator({ handler: watched(engine, calls, throttleOnce), generationBudget: 50 });
    await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
    await o.idle(run.id);

    // The throttle was retried (a second preflight call); the real error was not, and MarkFailed ran.
    expect(calls).toEqual(['preflight:threw', 'preflight:threw', 'fail']);
    const failed = await getRun(run.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.failureReason).toBe(
      `engine error Error: project ${project.id} has no stored target credentials`,
    );
    expect(failed.finishedAt).not.toBeNull();
    const [execution] = o.executions(run.id);
    expect(execution).toMatchObject({ name: `${run.id}-g0`, outcome: 'FAILED' });
    expect(execution?.error).toContain('no stored target credentials');
    const events = (await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id)).map((e) => e.event);
    expect(events).toContainEqual({ type: 'status', status: 'failed' });
    expect(events).toContainEqual({ type: 'log', message: `Run failed: ${failed.failureReason}` });
  });

  it("ends in Succeed when the engine fails the run itself (preflight), with the engine's reason", async () => {
    const project = await connectedProject('Impossible mapping');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      ...options,
      typeOverrides: { Bug: 'Defect' },
    });
    const calls: string[] = [];
    const o = new LocalOrchestrator({ handler: watched(engine, calls), generationBudget: 50 });
    await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
    await o.idle(run.id);

    expect(calls).toEqual(['preflight:failed']);
    expect(o.executions(run.id)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
    const failed = await getRun(run.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.failureReason).toMatch(/Defect/);
    expect(failed.failureReason).not.toMatch(/^engine error/);
    expect(await h.jiraIssues()).toEqual([]);
  });

  it('resumes a run left RUNNING by a killed service at its next generation, to COMPLETED', async () => {
    const project = await connectedProject('Killed service');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    // The first "process" dies as its engine call for the preflight returns: no state after that call runs.
    const first: LocalOrchestrator = new LocalOrchestrator({
      handler: (async (event, context) => {
        const result = await engine(event, context);
        first.close();
        return result;
      }) as EngineHandler,
      generationBudget: 50,
    });
    await first.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
    await first.idle();
    expect(first.executions(run.id)).toMatchObject([{ outcome: 'ABORTED' }]);
    const interrupted = await getRun(run.id);
    expect(interrupted.status).toBe('RUNNING');
    expect(interrupted.generation).toBe(0);

    // The service starts again: only this run is still RUNNING (the others ended, paused or failed).
    const second = new LocalOrchestrator({ handler: engine, generationBudget: 50 });
    expect(await second.resumeInterrupted(h.app.store)).toEqual([run.id]);
    await second.idle();
    expect(second.executions(run.id).map((e) => [e.name, e.outcome])).toEqual([
      [`${run.id}-g1`, 'SUCCEEDED'],
    ]);
    const done = await getRun(run.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.generation).toBe(1);
    await expectOneIssuePerItem(run.id);
    // Nothing is left to resume.
    expect(await second.resumeInterrupted(h.app.store)).toEqual([]);
  });

  /**
   * A run under a Jira quota of 200 points a 6-second window, driven by an orchestrator whose invocations may sit
   * out 1.5 s of waiting (their time less the runner's margin): the points are spent within a second or two of each
   * window's start, so the wait for the next one (4 s or more) is handed back to the state machine.
   */
  async function quotaRun(
    name: string,
    before?: (runId: string, event: EngineEvent) => Promise<void>,
    quota = { points: 200, windowSeconds: 6 },
  ) {
    await h.control('jira', 'PUT', '/_sandbox/limits', {
      limits: { quota: { enabled: true, ...quota, apiTokenExempt: false } },
    });
    const project = await connectedProject(name);
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    const calls: string[] = [];
    const o = new LocalOrchestrator({
      handler: watched(engine, calls, before && ((event) => before(run.id, event))),
      generationBudget: 400,
      remainingMs: MIN_BUDGET_MS + 1500,
    });
    try {
      await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
      await o.idle(run.id);
    } finally {
      // The issues stay for the checks; only the quota goes.
      await h.control('jira', 'PUT', '/_sandbox/limits', { limits: { quota: { enabled: false } } });
    }
    return { project, run, calls, o };
  }

  it('waits out a Jira quota longer than the invocation in the Wait state, then completes', async () => {
    const { project, run, calls } = await quotaRun('Quota wait');
    const done = await getRun(run.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, successCount: done.totalItems });
    await expectOneIssuePerItem(run.id);
    // The engine handed the wait back (`batch:wait`, or `preflight:wait` when preflight spent the points) and the
    // state machine waited, checking between slices.
    expect(calls.some((c) => /^(preflight|batch):wait$/.test(c))).toBe(true);
    const checks = calls.filter((c) => c.startsWith('wait:'));
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.every((c) => /^wait:(wait|batch)$/.test(c))).toBe(true);
    expect(calls.at(-1)).toBe('finalize:done');
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 1000);
    expect(events.map((e) => (e.event.type === 'log' ? e.event.message : ''))).toContainEqual(
      expect.stringMatching(/^Waiting for Jira's hourly quota until \d\d:\d\d(:\d\d)? UTC$/),
    );
  });

  it('carries out a pause asked for while the run waits for a Jira quota', async () => {
    // The admin pauses as soon as the run waits outside the engine. The run stops there, so the window can be a
    // minute: 30 points are spent long before its end however loaded the machine (with 200 a 6-second window, a
    // slow engine spent them in a window's last second and waited within the invocation, never handing back).
    const { run, calls, o } = await quotaRun(
      'Quota pause',
      async (runId, event) => {
        if (event.action === 'wait') await setRunControl(h.app.store, h.tenant.tenantId, runId, 'pause');
      },
      { points: 30, windowSeconds: 60 },
    );
    expect((await getRun(run.id)).status).toBe('PAUSED');
    expect(calls.at(-2)).toMatch(/^(preflight|batch):wait$/);
    expect(calls.at(-1)).toBe('wait:paused');
    expect(o.executions(run.id)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
  });

  /**
   * An engine whose waits for a tracker that does not answer are short (the first 300 ms, then doubling), at most
   * two of them in a row before the run fails; Jira answers 503 to its next `count` requests: preflight's two
   * Jira reads (project and fields, side by side) retry six attempts each, so 12 outlast the retries of one.
   */
  async function outageRun(
    name: string,
    count: number,
    endpoint?: string,
    beforeCall?: (calls: string[]) => Promise<void>,
  ) {
    const patient = createEngineHandler({
      store: () => h.app.store,
      artifacts: () => new DiskArtifactStore(dir),
      indexLagMs: 0,
      trackerFaults: { firstWaitMs: 300, maxWaitMs: 1_000, maxAnswers: 2 },
    });
    const project = await connectedProject(name);
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
    await h.control('jira', 'PUT', '/_sandbox/faults', {
      errors: { count, status: 503, ...(endpoint ? { endpoint } : {}) },
    });
    const calls: string[] = [];
    const o = new LocalOrchestrator({
      handler: watched(patient, calls, () => beforeCall?.(calls) ?? Promise.resolve()),
      generationBudget: 50,
    });
    await o.start({ tenantId: h.tenant.tenantId, runId: run.id, generation: 0 });
    await o.idle(run.id);
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 1000);
    const lines = events.flatMap((e) => (e.event.type === 'log' ? [e.event.message] : []));
    return { run, calls, o, lines };
  }

  const outageLine =
    /^Waiting for Jira: it does not answer \(HTTP 503\), trying again at \d\d:\d\d(:\d\d)? UTC$/;

  it('waits out a Jira outage that outlasts the client retries during preflight, then completes with nothing twice', async () => {
    const { run, calls, o, lines } = await outageRun('Jira outage', 12);

    // Preflight's Jira call gave up after its retries: the engine answered "call again after a wait", not a
    // failure, the state machine waited, and the run went on once Jira answered.
    expect(calls[0]).toBe('preflight:wait');
    expect(calls).not.toContain('fail');
    expect(calls.at(-1)).toBe('finalize:done');
    expect(o.executions(run.id)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
    const done = await getRun(run.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, failureReason: null });
    expect(done.successCount).toBe(done.totalItems);
    await expectOneIssuePerItem(run.id);
    // The watcher was told the run waits on Jira.
    expect(lines).toContainEqual(expect.stringMatching(outageLine));
  });

  it('fails no item for an outage met in the middle of a phase: the run waits it out and completes', async () => {
    // The transitions phase's writes meet an outage past the client's retries on whichever items are under way;
    // Jira answers again once the state machine has waited.
    const { run, calls, lines } = await outageRun(
      'Jira outage mid-phase',
      10_000,
      'POST /rest/api/3/issue/{issueIdOrKey}/transitions',
      async (calls) => {
        if (calls.at(-1)?.endsWith(':wait'))
          await h.control('jira', 'PUT', '/_sandbox/faults', { errors: null });
      },
    );

    expect(calls).toContain('batch:wait');
    expect(calls.at(-1)).toBe('finalize:done');
    const done = await getRun(run.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, failureReason: null });
    expect(done.successCount).toBe(done.totalItems);
    expect(await h.app.store.runFailures.list(h.tenant.tenantId, run.projectId, run.id)).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(outageLine));
    await expectOneIssuePerItem(run.id);
  });

  it('fails the run with the reason when Jira does not answer for more engine calls in a row than it waits out', async () => {
    const { run, calls, o, lines } = await outageRun('Jira down', 10_000);

    // Two waits, then the third call that met the outage failed the run itself.
    expect(calls.filter((c) => !c.startsWith('wait:'))).toEqual([
      'preflight:wait',
      'batch:wait',
      'batch:failed',
    ]);
    expect(o.executions(run.id)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
    const failed = await getRun(run.id);
    const reason = 'Jira did not answer for 3 engine calls in a row (last: HTTP 503)';
    expect(failed).toMatchObject({ status: 'FAILED', failureReason: reason });
    expect(lines.filter((l) => outageLine.test(l))).toHaveLength(2);
    expect(lines).toContain(`Run failed: ${reason}`);
    expect(await h.jiraIssues()).toEqual([]);
  });

  it('logs no credential on the way', () => {
    const { ado, jira } = h.config;
    const secrets = [
      ado.pat,
      jira.apiToken,
      Buffer.from(`:${ado.pat}`).toString('base64'),
      Buffer.from(`${jira.email}:${jira.apiToken}`).toString('base64'),
    ];
    // The lines are there (the engine logged every batch and the failure) ...
    expect(captured.some((l) => l.includes('engine preflight'))).toBe(true);
    expect(captured.some((l) => l.includes('engine batch'))).toBe(true);
    expect(captured.some((l) => l.includes('engine finalize'))).toBe(true);
    expect(captured.some((l) => l.includes('engine failed the run'))).toBe(true);
    // ... and none carries a secret.
    for (const secret of secrets) expect(captured.filter((l) => l.includes(secret))).toEqual([]);
  });
});
