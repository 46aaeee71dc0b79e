/**
 * A finished run's rollback over HTTP, with a recording orchestrator in place of Step Functions and the real
 * DynamoDB Local underneath; the engine's end of each pass is played by its own Finalize step over the artifacts
 * the rollback phase writes. The preview (202, the run ROLLING_BACK at the phase after its last, a new execution;
 * then back as it ended, with its counts and list), the confirmed rollback (ROLLED_BACK), and the refusals: a
 * member (403), another tenant (404), a rollback without its preview or without `confirm`, a run at work, a dry
 * run, and an older run while a newer one of its project is not rolled back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { NOT_UNDONE, type RollbackReport } from '../../functions/domain/rollback/plan.ts';
import type { Run, RunStatus } from '../../functions/domain/runs.ts';
import { answerInterrupt } from '../../functions/engine/control.ts';
import { finalizeStep } from '../../functions/engine/finalize.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { createProject } from '../../functions/services/projects.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { emptyPreflight } from '../support/preflight.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

let app: TestApp;
let t: TestTenant;
let other: TestTenant;
let dataDir: string;
let orch: RecordingOrchestrator;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rollback-test-'));
  app = await startTestApp({ DATA_DIR: dataDir });
  [t, other] = await Promise.all([app.createTenant('Rollback'), app.createTenant('Elsewhere')]);
});
afterAll(async () => {
  setOrchestrator(undefined);
  try {
    await app.close();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
beforeEach(() => {
  orch = new RecordingOrchestrator();
  setOrchestrator(orch);
});

const disk = () => new DiskArtifactStore(join(dataDir, 'artifacts'));

/** The preflight of a run that took one plugin: its last phase is 8, its rollback works phase 9. */
const preflight = emptyPreflight({ plugins: ['time-logs'] });

async function newProject() {
  return createProject(app.store, t.tenantId, {
    name: 'Rolled back project',
    sourceSystem: 'AZURE_DEVOPS',
    targetSystem: 'JIRA_CLOUD',
  });
}

/** A run of the project that ended `status` past its last phase (as Finalize leaves it), its preflight kept. */
async function finishedRun(
  status: RunStatus,
  opts: { dryRun?: boolean; projectId?: string } = {},
): Promise<Run> {
  const projectId = opts.projectId ?? (await newProject()).id;
  const run = await createRun(app.store, t.tenantId, projectId, 'FULL', { dryRun: opts.dryRun ?? false });
  await writePreflight(disk(), { tenantId: t.tenantId, runId: run.id }, preflight);
  if (status !== 'RUNNING')
    expect(
      await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], status, {
        finishedAt: new Date().toISOString(),
        cursor: { phase: 9, index: 0 },
        currentPhase: 9,
      }),
    ).toBe(true);
  return (await app.store.runs.get(t.tenantId, run.id))!;
}

const rollBack = (runId: string, body: unknown = {}, token = t.admin.token) =>
  app.call('POST', `/api/migrations/${runId}/rollback`, { token, body });
const get = (path: string, token = t.admin.token) => app.call('GET', path, { token });
const storedRun = async (runId: string) => (await app.store.runs.get(t.tenantId, runId))!;

const counts = {
  items: 4,
  deleted: 2,
  keptEdited: 1,
  keptLaterRun: 0,
  keptFound: 1,
  keptOtherRun: 0,
  gone: 0,
  // What the run wrote to the issue it found: taken back, but for the status move it made
  removedComments: 2,
  removedIssueLinks: 0,
  removedRemoteLinks: 1,
  removedAttachments: 0,
  removedWorklogs: 0,
  removedTestSteps: 0,
  restoredFields: 1,
  keptChanges: 0,
  changesGone: 0,
  statusesNotUndone: 1,
  removedSprints: 1,
  removedComponents: 0,
  keptMade: 1,
};

/**
 * The engine's end of a pass: what the rollback phase's `complete` writes (the list and the counts), then the
 * state machine's Finalize step.
 */
async function engineFinishes(run: Run, preview: boolean, csv: string): Promise<void> {
  const report: RollbackReport = { preview, ...counts };
  await disk().put(artifactKeys.rollbackList(t.tenantId, run.id, preview), csv);
  await disk().put(artifactKeys.rollbackSummary(t.tenantId, run.id, preview), JSON.stringify(report));
  const deps = { store: app.store, journal: new StoreRunJournal(app.store), artifacts: disk() };
  expect(await finalizeStep(deps as unknown as EngineDeps, { tenantId: t.tenantId, runId: run.id })).toBe(
    'done',
  );
}

const previewCsv =
  'source_id,jira_key,would,reason\r\n1,MIG-1,delete,\r\n2,MIG-2,delete,\r\n' +
  '3,MIG-3,keep-edited,edited in Jira after the run: kept (delete it with includeEdited)\r\n';

describe('POST /api/migrations/{runId}/rollback', () => {
  it('an admin previews a finished run, reads the counts and the list, then confirms the rollback', async () => {
    // Prepare
    const run = await finishedRun('PARTIAL');
    const projectBefore = (await app.store.projects.get(t.tenantId, run.projectId))?.status;

    // Act: the preview (the default)
    const res = await rollBack(run.id);

    // Assess: 202, ROLLING_BACK at the phase after the run's last, in the run's next execution
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: run.id,
      status: 'ROLLING_BACK',
      preview: true,
      notUndone: [...NOT_UNDONE],
    });
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);
    expect(await storedRun(run.id)).toMatchObject({
      status: 'ROLLING_BACK',
      control: 'run',
      cursor: { phase: 9, index: 0 },
      finishedAt: run.finishedAt,
      rollback: { preview: true, includeEdited: false, endedAs: 'PARTIAL', previewed: null },
    });
    const status = await get(`/api/migrations/${run.id}/rollback`);
    expect(status.body).toEqual({
      id: run.id,
      status: 'ROLLING_BACK',
      underWay: { preview: true, includeEdited: false },
      preview: null,
      rollback: null,
      notUndone: [...NOT_UNDONE],
    });
    // Asked again while it works: the same answer, nothing started twice; a confirm meanwhile is refused.
    expect((await rollBack(run.id, { preview: true }, t.owner.token)).status).toBe(202);
    expect(orch.starts).toHaveLength(1);
    const meanwhile = await rollBack(run.id, { preview: false, confirm: true });
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.code).toBe('MIGRATION_NOT_FINISHED');
    const noList = await get(`/api/migrations/${run.id}/rollback/list`);
    expect(noList.body).toEqual({
      statusCode: 404,
      message: `Run ${run.id} has no finished rollback preview yet`,
      error: 'Not Found',
      code: 'ROLLBACK_NOT_FOUND',
    });

    // Act: the engine ends the preview
    await engineFinishes(run, true, previewCsv);

    // Assess: the run as it ended, the project as it was; the counts, the list, the stream
    const previewed = await storedRun(run.id);
    expect(previewed).toMatchObject({ status: 'PARTIAL', cursor: { phase: 10, index: 0 } });
    expect((await app.store.projects.get(t.tenantId, run.projectId))?.status).toBe(projectBefore);
    const after = await get(`/api/migrations/${run.id}/rollback`);
    expect(after.body).toEqual({
      id: run.id,
      status: 'PARTIAL',
      underWay: null,
      preview: { includeEdited: false, at: previewed.rollback?.previewed?.at, summary: counts },
      rollback: null,
      notUndone: [...NOT_UNDONE],
    });
    const list = await get(`/api/migrations/${run.id}/rollback/list`);
    expect(list.status).toBe(200);
    expect(list.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(list.headers['content-disposition']).toBe(`attachment; filename="rollback-preview-${run.id}.csv"`);
    expect(list.text).toBe(previewCsv);
    const events = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(events).toEqual([
      {
        type: 'log',
        message: 'Rollback preview started: each issue the run created read from Jira, nothing written',
      },
      { type: 'status', status: 'rolling_back' },
      {
        type: 'log',
        message:
          'Rollback preview done: 2 of 4 issues would be deleted, 2 kept, 0 gone already; on issues it did not create, 2 comments, 0 issue links, 1 remote link, 0 files, 0 worklogs would be removed and 1 field would be restored, 0 kept, 1 status move not undone; 1 sprint and 0 components the run made would be removed, 1 kept',
      },
      { type: 'rollback', summary: { preview: true, ...counts } },
      { type: 'status', status: 'partial' },
      { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } },
    ]);

    // Act + Assess: not confirmed, or with another choice on edited issues than the preview's: refused
    const unconfirmed = await rollBack(run.id, { preview: false });
    expect(unconfirmed.body).toEqual({
      statusCode: 400,
      message: `The rollback of run ${run.id} deletes issues from Jira: send confirm: true to carry out its preview`,
      error: 'Bad Request',
      code: 'ROLLBACK_NOT_CONFIRMED',
    });
    const otherChoice = await rollBack(run.id, { preview: false, confirm: true, includeEdited: true });
    expect(otherChoice.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id}: its preview kept issues edited after the run: preview it again with includeEdited first`,
      error: 'Conflict',
      code: 'ROLLBACK_PREVIEW_REQUIRED',
    });

    // Act: confirmed
    const confirmed = await rollBack(run.id, { preview: false, confirm: true });

    // Assess: the preview carried out by the run's next execution, then ROLLED_BACK with what it did
    expect(confirmed.status).toBe(202);
    expect(confirmed.body).toMatchObject({ id: run.id, status: 'ROLLING_BACK', preview: false });
    expect(await storedRun(run.id)).toMatchObject({
      status: 'ROLLING_BACK',
      cursor: { phase: 10, index: 0 },
      rollback: { preview: false, includeEdited: false, endedAs: 'PARTIAL' },
    });
    await engineFinishes(run, false, previewCsv.replace(',would,', ',did,'));
    const done = await get(`/api/migrations/${run.id}/rollback`);
    expect(done.body).toMatchObject({ status: 'ROLLED_BACK', underWay: null, rollback: counts });
    const did = await get(`/api/migrations/${run.id}/rollback/list?of=rollback`);
    expect(did.text.split('\r\n')[0]).toBe('source_id,jira_key,did,reason');
    expect((await app.store.projects.get(t.tenantId, run.projectId))?.status).toBe(projectBefore);
    const told = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(told.slice(-2)).toEqual([
      { type: 'status', status: 'rolled_back' },
      { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } },
    ]);
    // Rolled back once: nothing more to roll back.
    const again = await rollBack(run.id);
    expect(again.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id} has nothing to roll back: it is rolled back already`,
      error: 'Conflict',
      code: 'NOTHING_TO_ROLL_BACK',
    });
  });

  it('a member is refused on every rollback path (403), before anything moves', async () => {
    const run = await finishedRun('COMPLETED');
    const answers = [
      await rollBack(run.id, {}, t.member.token),
      await get(`/api/migrations/${run.id}/rollback`, t.member.token),
      await get(`/api/migrations/${run.id}/rollback/list`, t.member.token),
    ];
    expect(answers.map((res) => [res.status, res.body.code])).toEqual([
      [403, 'FORBIDDEN'],
      [403, 'FORBIDDEN'],
      [403, 'FORBIDDEN'],
    ]);
    expect((await storedRun(run.id)).status).toBe('COMPLETED');
    expect(orch.starts).toEqual([]);
  });

  it("another tenant's run is 404 MIGRATION_NOT_FOUND on every rollback path", async () => {
    const run = await finishedRun('COMPLETED');
    const answers = [
      await rollBack(run.id, {}, other.owner.token),
      await get(`/api/migrations/${run.id}/rollback`, other.admin.token),
      await get(`/api/migrations/${run.id}/rollback/list`, other.owner.token),
    ];
    expect(answers.map((res) => [res.status, res.body.code])).toEqual([
      [404, 'MIGRATION_NOT_FOUND'],
      [404, 'MIGRATION_NOT_FOUND'],
      [404, 'MIGRATION_NOT_FOUND'],
    ]);
    expect((await storedRun(run.id)).status).toBe('COMPLETED');
    expect(orch.starts).toEqual([]);
  });

  it('a confirmed rollback without a finished preview is refused: 409 ROLLBACK_PREVIEW_REQUIRED', async () => {
    const run = await finishedRun('CANCELLED');
    const res = await rollBack(run.id, { preview: false, confirm: true });
    expect(res.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id}: a rollback carries out a finished preview: preview it first`,
      error: 'Conflict',
      code: 'ROLLBACK_PREVIEW_REQUIRED',
    });
    expect((await storedRun(run.id)).status).toBe('CANCELLED');
    expect(orch.starts).toEqual([]);
  });

  it('a run at work is refused (409 MIGRATION_NOT_FINISHED), a dry run has nothing to roll back', async () => {
    const running = await finishedRun('RUNNING');
    const res = await rollBack(running.id);
    expect(res.body).toEqual({
      statusCode: 409,
      message: `Run ${running.id} is RUNNING: only a finished run (COMPLETED, PARTIAL, FAILED or CANCELLED) can be rolled back`,
      error: 'Conflict',
      code: 'MIGRATION_NOT_FINISHED',
    });
    const dry = await finishedRun('COMPLETED', { dryRun: true });
    expect((await rollBack(dry.id)).body).toMatchObject({
      statusCode: 409,
      message: `Run ${dry.id} has nothing to roll back: it is a dry run, which wrote nothing to Jira`,
      code: 'NOTHING_TO_ROLL_BACK',
    });
    expect(orch.starts).toEqual([]);
  });

  it("a project's runs roll back newest first: an older run waits for the newer one", async () => {
    // Prepare: two runs of one project, the older first
    const project = await newProject();
    const older = await finishedRun('COMPLETED', { projectId: project.id });
    await new Promise((r) => setTimeout(r, 5));
    const newer = await finishedRun('FAILED', { projectId: project.id });

    // Act + Assess: the older one is refused, naming the newer
    const refused = await rollBack(older.id);
    expect(refused.body).toEqual({
      statusCode: 409,
      message: `Run ${newer.id}, a later run of the same project, is not rolled back: roll back ${newer.id} first (newest first), then run ${older.id}`,
      error: 'Conflict',
      code: 'NEWER_RUN_NOT_ROLLED_BACK',
    });
    expect(orch.starts).toEqual([]);

    // Act + Assess: the newer one rolled back, the older one's preview starts
    await app.store.runs.setStatus(t.tenantId, newer.id, ['FAILED'], 'ROLLED_BACK');
    expect((await rollBack(older.id)).status).toBe(202);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: older.id, generation: 1 }]);
  });

  it('a preview older than a later run that wrote to Jira is not carried out: the older run is previewed again', async () => {
    // Prepare: the older run previewed, then a later run of the project that wrote to Jira, rolled back since
    const project = await newProject();
    const older = await finishedRun('COMPLETED', { projectId: project.id });
    expect((await rollBack(older.id)).status).toBe(202);
    await engineFinishes(older, true, previewCsv);
    const previewedAt = (await storedRun(older.id)).rollback?.previewed?.at;
    await new Promise((r) => setTimeout(r, 5));
    const newer = await finishedRun('COMPLETED', { projectId: project.id });
    expect(newer.createdAt > (previewedAt ?? '')).toBe(true);
    expect(await app.store.runs.setStatus(t.tenantId, newer.id, ['COMPLETED'], 'ROLLED_BACK')).toBe(true);

    // Act: the older run's preview confirmed
    const res = await rollBack(older.id, { preview: false, confirm: true });

    // Assess: refused; nothing moves; a new preview is what a rollback carries out
    expect(res.body).toEqual({
      statusCode: 409,
      message: `Run ${older.id}: run ${newer.id}, a later run of the same project, wrote to Jira after its preview: preview it again first`,
      error: 'Conflict',
      code: 'ROLLBACK_PREVIEW_REQUIRED',
    });
    expect((await storedRun(older.id)).status).toBe('COMPLETED');
    expect((await rollBack(older.id)).status).toBe(202);
    await engineFinishes(older, true, previewCsv);
    expect((await rollBack(older.id, { preview: false, confirm: true })).status).toBe(202);
    expect(orch.starts.map((s) => s.runId)).toEqual([older.id, older.id, older.id]);
  });

  it('a run that failed before it created an issue has nothing to roll back, and holds no older run back', async () => {
    // Prepare: an older finished run, then a later one that failed at preflight
    const project = await newProject();
    const older = await finishedRun('COMPLETED', { projectId: project.id });
    await new Promise((r) => setTimeout(r, 5));
    const failed = await createRun(app.store, t.tenantId, project.id, 'FULL');
    await app.store.runs.setStatus(t.tenantId, failed.id, ['RUNNING'], 'FAILED', {
      finishedAt: new Date().toISOString(),
    });

    // Act
    const refused = await rollBack(failed.id);
    const allowed = await rollBack(older.id);

    // Assess
    expect(refused.body).toEqual({
      statusCode: 409,
      message: `Run ${failed.id} has nothing to roll back: it ended before it created any issue`,
      error: 'Conflict',
      code: 'NOTHING_TO_ROLL_BACK',
    });
    expect(allowed.status).toBe(202);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: older.id, generation: 1 }]);
  });

  it('a later run at work, though it created nothing yet, is rolled back (or ends) first', async () => {
    const project = await newProject();
    const older = await finishedRun('COMPLETED', { projectId: project.id });
    await new Promise((r) => setTimeout(r, 5));
    const running = await finishedRun('RUNNING', { projectId: project.id });
    expect(running.cursor.phase).toBe(1);
    const res = await rollBack(older.id);
    expect(res.body).toMatchObject({ statusCode: 409, code: 'NEWER_RUN_NOT_ROLLED_BACK' });
    expect(res.body.message).toContain(`roll back ${running.id} first`);
  });

  it('no run of the project starts while one of its runs is being rolled back', async () => {
    const run = await finishedRun('COMPLETED');
    await markProjectStatus(app.store, t.tenantId, run.projectId, 'COMPLETED');
    expect((await rollBack(run.id)).status).toBe(202);
    const body = {
      type: 'FULL',
      enginePayload: {
        source: { org: 'contoso', project: 'Fabrikam', pat: 'ado-pat-secret' },
        target: {
          base_url: 'https://contoso.atlassian.net',
          email: 'migrator@contoso.example.com',
          api_token: 'jira-token-secret',
          project_key: 'MIG',
        },
      },
    };
    const started = await app.call('POST', `/api/migrations/project/${run.projectId}/start`, {
      token: t.admin.token,
      body,
    });
    expect(started.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id} of this project is being rolled back: start a run once its rollback has ended`,
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    });
    expect(orch.starts).toHaveLength(1);
  });

  it('pause, resume and cancel work on a rollback: ROLLBACK_PAUSED, ROLLING_BACK again, then back as it ended', async () => {
    const run = await finishedRun('COMPLETED');
    expect((await rollBack(run.id)).status).toBe(202);

    // Pause: the flag set at once, the engine pauses at its checkpoint (its control check, played here)
    const paused = await app.call('POST', `/api/migrations/${run.id}/pause`, { token: t.admin.token });
    expect(paused.body).toEqual({ id: run.id, status: 'ROLLBACK_PAUSED' });
    const deps = { store: app.store, journal: new StoreRunJournal(app.store), artifacts: disk() };
    expect(await finalizeStep(deps as unknown as EngineDeps, { tenantId: t.tenantId, runId: run.id })).toBe(
      'paused',
    );
    expect(await storedRun(run.id)).toMatchObject({ status: 'ROLLBACK_PAUSED', control: 'pause' });

    // Resume: ROLLING_BACK, in the run's next execution
    const resumed = await app.call('POST', `/api/migrations/${run.id}/resume`, { token: t.owner.token });
    expect(resumed.body).toEqual({ id: run.id, status: 'ROLLING_BACK' });
    expect(orch.starts).toHaveLength(2);
    expect(await storedRun(run.id)).toMatchObject({ status: 'ROLLING_BACK', control: 'run' });

    // Cancel: at once, the run back as it ended, its execution stopped
    const cancelled = await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: t.admin.token });
    expect(cancelled.body).toEqual({ id: run.id, status: 'COMPLETED' });
    expect(orch.stops).toEqual([run.id]);
    expect(await storedRun(run.id)).toMatchObject({ status: 'COMPLETED', rollback: { previewed: null } });
    const events = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(events.slice(-3)).toEqual([
      { type: 'log', message: 'Rollback cancelled' },
      { type: 'status', status: 'completed' },
      { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } },
    ]);
  });

  it('a project is not deleted while one of its runs is being rolled back, under way or paused (409)', async () => {
    // Prepare: a rollback under way
    const run = await finishedRun('COMPLETED');
    expect((await rollBack(run.id)).status).toBe(202);
    const remove = () => app.call('DELETE', `/api/projects/${run.projectId}`, { token: t.owner.token });
    const refused = {
      statusCode: 409,
      message: `Run ${run.id} of this project is being rolled back: delete the project once its rollback has ended (or cancel it)`,
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    };

    // Act + Assess: under way, then paused: refused, the project and its run still there
    expect((await remove()).body).toEqual(refused);
    expect(await app.store.runs.setStatus(t.tenantId, run.id, ['ROLLING_BACK'], 'ROLLBACK_PAUSED')).toBe(
      true,
    );
    expect((await remove()).body).toEqual(refused);
    expect(await app.store.projects.get(t.tenantId, run.projectId)).toBeDefined();
    expect((await storedRun(run.id)).status).toBe('ROLLBACK_PAUSED');

    // Act + Assess: the rollback cancelled, the run back as it ended: the project can go
    expect(
      (await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: t.admin.token })).status,
    ).toBe(200);
    expect((await remove()).status).toBe(204);
    expect(await app.store.projects.get(t.tenantId, run.projectId)).toBeUndefined();
  });

  it('a member can neither pause, resume nor cancel a rollback (403), and the rollback does not move', async () => {
    // Prepare: a rollback under way
    const run = await finishedRun('COMPLETED');
    expect((await rollBack(run.id)).status).toBe(202);
    const control = (action: string, token = t.member.token) =>
      app.call('POST', `/api/migrations/${run.id}/${action}`, { token });
    const forbidden = (action: string) => ({
      statusCode: 403,
      message: `Only an owner or admin can ${action} a rollback: it deletes issues from Jira`,
      error: 'Forbidden',
      code: 'FORBIDDEN',
    });

    // Act + Assess: under way, a member's pause is refused and sets no flag
    expect((await control('pause')).body).toEqual(forbidden('pause'));
    expect(await storedRun(run.id)).toMatchObject({ status: 'ROLLING_BACK', control: 'run' });
    // Cancel is owners' and admins' for every run: the route refuses it
    expect((await control('cancel')).body).toEqual({
      statusCode: 403,
      message: 'Your role does not allow this action',
      error: 'Forbidden',
      code: 'FORBIDDEN',
    });

    // Act + Assess: paused (by an admin, at the engine's checkpoint), a member's resume is refused too
    expect((await control('pause', t.admin.token)).body).toEqual({ id: run.id, status: 'ROLLBACK_PAUSED' });
    const deps = { store: app.store, journal: new StoreRunJournal(app.store), artifacts: disk() };
    expect(await finalizeStep(deps as unknown as EngineDeps, { tenantId: t.tenantId, runId: run.id })).toBe(
      'paused',
    );
    expect((await control('resume')).body).toEqual(forbidden('resume'));
    expect((await control('pause')).body).toEqual(forbidden('pause'));
    expect(await storedRun(run.id)).toMatchObject({ status: 'ROLLBACK_PAUSED', control: 'pause' });
    expect(orch.starts).toHaveLength(1);
    expect(orch.stops).toEqual([]);
  });

  it("a member still pauses and resumes an ordinary run: the rollback's rule is the rollback's only", async () => {
    const run = await finishedRun('RUNNING');
    const control = (action: string) =>
      app.call('POST', `/api/migrations/${run.id}/${action}`, { token: t.member.token });
    expect((await control('pause')).body).toEqual({ id: run.id, status: 'PAUSED' });
    // The engine pauses at its checkpoint (played here), then the member resumes it
    expect(await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED')).toBe(true);
    expect((await control('resume')).body).toEqual({ id: run.id, status: 'RUNNING' });
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);
  });

  it('a tracker token that cannot be had pauses a rollback with the reason; the status says it', async () => {
    // Prepare: a rollback under way, as the engine reads it
    const run = await finishedRun('COMPLETED');
    expect((await rollBack(run.id)).status).toBe(202);

    // Act: the engine's clients cannot get Jira's token
    const answer = await answerInterrupt(
      { journal: new StoreRunJournal(app.store) },
      await storedRun(run.id),
      {
        kind: 'credentials-refused',
        tracker: 'target',
        code: 'invalid_grant',
        message: 'Token exchange failed: invalid_grant',
        reconnect: true,
      },
    );

    // Assess: paused at its checkpoint with why, told on the stream and by the run's status
    expect(answer).toBe('paused');
    expect(await storedRun(run.id)).toMatchObject({ status: 'ROLLBACK_PAUSED', control: 'pause' });
    const status = await get(`/api/migrations/${run.id}/status`);
    expect(status.body).toMatchObject({
      status: 'ROLLBACK_PAUSED',
      pauseReason: 'Token exchange failed: invalid_grant',
    });
    const events = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(events.slice(-2)).toEqual([
      { type: 'log', message: 'Rollback paused: Token exchange failed: invalid_grant, then resume the run' },
      { type: 'status', status: 'rollback_paused' },
    ]);
  });
});
