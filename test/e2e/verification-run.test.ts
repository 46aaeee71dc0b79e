/**
 * A finished run verified on demand, end to end: a FULL run of a small generated project (attachments and
 * comments off) worked by the real state machine (local interpreter) over the sandboxes and DynamoDB Local, then
 * `POST /api/migrations/{runId}/verification` through the HTTP gateway starts the run's next execution, which
 * works the verification phase through the runner and ends the run as it was, with the summary on the run's
 * status, its own route, the audit download and the stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineHandler, type EngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { artifacts, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import type { TestTenant } from '../support/app.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

const ITEMS = 20;
let h: EngineHarness;
let t: TestTenant;
const dir = mkdtempSync(join(tmpdir(), 'tms-verification-'));
let engine: EngineHandler;

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: 5 });
  t = await h.app.createTenant('Verified');
  // The API and the engine read and write one artifact store, as in one deployment.
  artifacts.use(new DiskArtifactStore(dir));
  engine = createEngineHandler({ store: () => h.app.store, artifacts: () => artifacts(), indexLagMs: 0 });
});
afterAll(async () => {
  setOrchestrator(undefined);
  artifacts.use(undefined);
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A project of `t` whose tracker credentials are stored sealed, as a connected project's are. */
const connectedProject = () => h.connectedProject(t.tenantId, 'Verified on demand');

/**
 * A FULL run of a connected project (attachments and comments off) worked to its end by the real state machine;
 * the local orchestrator that ran it is the run API's.
 */
async function finishedRun(options: { verify?: boolean } = {}) {
  const project = await connectedProject();
  const run = await createRun(h.app.store, t.tenantId, project.id, 'FULL', {
    migrateAttachments: false,
    migrateComments: false,
    ...options,
  });
  const o = new LocalOrchestrator({ handler: engine, generationBudget: 50 });
  setOrchestrator(o);
  await o.start({ tenantId: t.tenantId, runId: run.id, generation: 0 });
  await o.idle(run.id);
  return { project, run, o };
}

describe('verification of a finished run through the API and the state machine', () => {
  it('verifies every migrated item of a clean run, and the run ends as it was', async () => {
    const { project, run, o } = await finishedRun();
    const finished = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(finished.status).toBe('COMPLETED');
    const projectStatus = (await h.app.store.projects.get(t.tenantId, project.id))?.status;

    const res = await h.app.call('POST', `/api/migrations/${run.id}/verification`, { token: t.member.token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: run.id, status: 'VERIFYING' });
    await o.idle(run.id);

    const summary = {
      itemsChecked: finished.totalItems,
      fullyFaithful: finished.totalItems,
      differencesByField: {},
      itemsWithNotes: expect.any(Number),
      unverified: 0,
    };
    const got = await h.app.call('GET', `/api/migrations/${run.id}/verification`, { token: t.member.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(summary);
    expect(finished.totalItems).toBeGreaterThan(0);

    // The run is as it ended: status, counters and its project; the summary on its status.
    const after = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(after).toMatchObject({
      status: 'COMPLETED',
      successCount: finished.successCount,
      failureCount: 0,
      finishedAt: finished.finishedAt,
    });
    expect((await h.app.store.projects.get(t.tenantId, project.id))?.status).toBe(projectStatus);
    const status = await h.app.call('GET', `/api/migrations/${run.id}/status`, { token: t.member.token });
    expect(status.body).toMatchObject({ status: 'COMPLETED', verification: got.body });

    // Its own execution, the run's next generation, through the state machine's steps.
    expect(o.executions(run.id).map((e) => [e.name, e.outcome])).toEqual([
      [`${run.id}-g0`, 'SUCCEEDED'],
      [`${run.id}-g1`, 'SUCCEEDED'],
    ]);

    // The audit: every item, each a pass.
    const audit = await h.app.call('GET', `/api/migrations/${run.id}/verification/audit`, {
      token: t.member.token,
    });
    expect(audit.status).toBe(200);
    expect(audit.body.items).toHaveLength(finished.totalItems);
    expect(audit.body.items.every((i: { result: string }) => i.result === 'pass')).toBe(true);
    expect(audit.body.summary).toEqual(got.body);
    const csv = await h.app.call('GET', `/api/migrations/${run.id}/verification/audit?format=csv`, {
      token: t.member.token,
    });
    expect(csv.text.trim().split('\r\n')).toHaveLength(finished.totalItems + 1);

    // The stream: started, the summary, then the run's status back and its `done`.
    const events = (await h.app.store.runs.events(t.tenantId, project.id, run.id, undefined, 1000)).map(
      (e) => e.event,
    );
    const from = events.findIndex((e) => e.type === 'status' && e.status === 'verifying');
    expect(from).toBeGreaterThan(0);
    expect(events.slice(from).filter((e) => e.type !== 'log' && e.type !== 'progress')).toEqual([
      { type: 'status', status: 'verifying' },
      { type: 'verification', summary: got.body },
      { type: 'status', status: 'completed' },
      {
        type: 'done',
        stats: { created: finished.successCount, skipped: finished.skippedCount, failed: 0 },
      },
    ]);
    expect(events.at(-4)).toEqual({
      type: 'log',
      message: `Verification done: ${finished.totalItems} of ${finished.totalItems} items fully faithful`,
    });

    // Verified again: the same summary, told after everything the first one told (the stream's ids keep growing).
    const again = await h.app.call('POST', `/api/migrations/${run.id}/verification`, {
      token: t.member.token,
    });
    expect(again.status).toBe(202);
    await o.idle(run.id);
    expect(
      (await h.app.call('GET', `/api/migrations/${run.id}/verification`, { token: t.member.token })).body,
    ).toEqual(got.body);
    const kinds = (await h.app.store.runs.events(t.tenantId, project.id, run.id, undefined, 1000)).map((e) =>
      e.event.type === 'status' ? `status ${e.event.status}` : e.event.type,
    );
    // The second verification's progress comes after its start, not among the first one's events.
    expect(kinds.lastIndexOf('progress')).toBeGreaterThan(kinds.lastIndexOf('status verifying'));
    const told = kinds.filter((kind) => kind !== 'log' && kind !== 'progress');
    expect(told.slice(-10)).toEqual([
      'status completed',
      'done',
      'status verifying',
      'verification',
      'status completed',
      'done',
      'status verifying',
      'verification',
      'status completed',
      'done',
    ]);
  });

  it('a run started with `verify` verifies itself before Finalize: RUNNING through it, then one end with the summary', async () => {
    const { run } = await finishedRun({ verify: true });
    const ended = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(ended.status).toBe('COMPLETED');
    const summary = await h.app.call('GET', `/api/migrations/${run.id}/verification`, {
      token: t.member.token,
    });
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ itemsChecked: ended.totalItems, fullyFaithful: ended.totalItems });
    const events = (await h.app.store.runs.events(t.tenantId, ended.projectId, run.id)).map((e) => e.event);
    // Never VERIFYING: the verification is the run's own last phase, told before its one status and done.
    const statuses = events.flatMap((e) => (e.type === 'status' ? [e.status] : []));
    expect(statuses).not.toContain('verifying');
    expect(statuses.at(-1)).toBe('completed');
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    const kinds = events.map((e) => (e.type === 'log' ? e.message.split(':')[0] : e.type));
    expect(kinds.indexOf('verification')).toBeGreaterThan(-1);
    expect(kinds.indexOf('verification')).toBeLessThan(kinds.indexOf('done'));
    expect(kinds).toContain('Verification done');
  });

  it('an engine failure during a verification ends only the verification: the run back as it ended', async () => {
    const { project, run } = await finishedRun();
    // The verification's execution is not started here: the test plays the state machine's MarkFailed itself.
    const recording = new RecordingOrchestrator();
    setOrchestrator(recording);
    const res = await h.app.call('POST', `/api/migrations/${run.id}/verification`, { token: t.member.token });
    expect(res.body).toEqual({ id: run.id, status: 'VERIFYING' });
    expect(recording.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);

    const failed = await engine(
      {
        action: 'fail',
        tenantId: t.tenantId,
        runId: run.id,
        generation: 1,
        error: { Error: 'Lambda.Unknown', Cause: 'out of memory' },
      },
      { getRemainingTimeInMillis: () => 900_000 },
    );

    expect(failed).toEqual({ failed: false });
    const after = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(after).toMatchObject({ status: 'COMPLETED', failureReason: null });
    const events = (await h.app.store.runs.events(t.tenantId, project.id, run.id, undefined, 1000)).map(
      (e) => e.event,
    );
    expect(events.slice(-3)).toEqual([
      { type: 'log', message: 'Verification failed: engine error Lambda.Unknown: out of memory' },
      { type: 'status', status: 'completed' },
      { type: 'done', stats: { created: after.successCount, skipped: after.skippedCount, failed: 0 } },
    ]);
    // No verification finished: nothing to read.
    const summary = await h.app.call('GET', `/api/migrations/${run.id}/verification`, {
      token: t.member.token,
    });
    expect(summary.body.code).toBe('VERIFICATION_NOT_FOUND');
  });
});
