/**
 * A finished run's verification over HTTP, with a recording (or failing) orchestrator in place of Step Functions
 * and the real DynamoDB Local underneath: the start (202, the run VERIFYING at the phase after its last, a new
 * execution), its refusals (409 for a run that has not finished or wrote nothing, 404 for another tenant's run),
 * a cancel that ends it, and the reads (summary, status, audit downloads) once the engine has written them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import type { Run, RunStatus } from '../../functions/domain/runs.ts';
import { answerInterrupt } from '../../functions/engine/control.ts';
import { writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { createProject } from '../../functions/services/projects.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { emptyPreflight } from '../support/preflight.ts';
import { failingOrchestrator, RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

let app: TestApp;
let t: TestTenant;
let other: TestTenant;
let dataDir: string;
let orch: RecordingOrchestrator;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'verification-test-'));
  app = await startTestApp({ DATA_DIR: dataDir });
  [t, other] = await Promise.all([app.createTenant('Verify'), app.createTenant('Other')]);
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

/** The preflight of a run that took one plugin: its last phase is 8, its verification works phase 9. */
const preflight = emptyPreflight({ plugins: ['time-logs'] });

/** A run of a COMPLETED project that ended `status` (as the engine's Finalize leaves it), its preflight kept. */
async function finishedRun(status: RunStatus, opts: { dryRun?: boolean } = {}): Promise<Run> {
  const project = await createProject(app.store, t.tenantId, {
    name: 'Verified project',
    sourceSystem: 'AZURE_DEVOPS',
    targetSystem: 'JIRA_CLOUD',
  });
  await markProjectStatus(app.store, t.tenantId, project.id, 'COMPLETED');
  const run = await createRun(app.store, t.tenantId, project.id, 'FULL', { dryRun: opts.dryRun ?? false });
  await writePreflight(disk(), { tenantId: t.tenantId, runId: run.id }, preflight);
  if (status !== 'RUNNING')
    expect(
      await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], status, {
        finishedAt: new Date().toISOString(),
      }),
    ).toBe(true);
  return (await app.store.runs.get(t.tenantId, run.id))!;
}

const verify = (runId: string, token = t.member.token) =>
  app.call('POST', `/api/migrations/${runId}/verification`, { token });
const get = (path: string, token = t.member.token) => app.call('GET', path, { token });
const storedRun = async (runId: string) => (await app.store.runs.get(t.tenantId, runId))!;

const summary = {
  itemsChecked: 2,
  fullyFaithful: 1,
  differencesByField: { labels: 1 },
  itemsWithNotes: 0,
  unverified: 1,
};

describe('POST /api/migrations/{runId}/verification', () => {
  it("a member starts a finished run's verification: 202 VERIFYING, at the phase after the run's last, in a new execution", async () => {
    const run = await finishedRun('COMPLETED');
    const projectBefore = await app.store.projects.get(t.tenantId, run.projectId);

    const res = await verify(run.id);

    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: run.id, status: 'VERIFYING' });
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);
    const stored = await storedRun(run.id);
    expect(stored).toMatchObject({
      status: 'VERIFYING',
      control: 'run',
      cursor: { phase: 9, index: 0 },
      currentPhase: 9,
      finishedAt: run.finishedAt,
    });
    // The verification's phase starts now (its duration is measured from here).
    expect(Date.parse(stored.phaseStartedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(run.finishedAt ?? ''));
    // The project stays as its run left it.
    expect((await app.store.projects.get(t.tenantId, run.projectId))?.status).toBe(projectBefore?.status);
    // The stream tells it.
    const events = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(events).toEqual([
      {
        type: 'log',
        message: 'Verification started: each migrated item read back from Jira and compared with its source',
      },
      { type: 'status', status: 'verifying' },
    ]);

    // Asked again while it works: the same answer, nothing started twice.
    const again = await verify(run.id, t.admin.token);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id: run.id, status: 'VERIFYING' });
    expect(orch.starts).toHaveLength(1);
  });

  it('refuses a run that has not finished, or ended FAILED or CANCELLED: 409 MIGRATION_NOT_FINISHED', async () => {
    for (const status of ['RUNNING', 'FAILED', 'CANCELLED'] as const) {
      const run = await finishedRun(status);
      const res = await verify(run.id);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        statusCode: 409,
        message: `Run ${run.id} is ${status}: only a COMPLETED or PARTIAL run can be verified`,
        error: 'Conflict',
        code: 'MIGRATION_NOT_FINISHED',
      });
      expect((await storedRun(run.id)).status).toBe(status);
    }
    expect(orch.starts).toEqual([]);
  });

  it('refuses a dry run, which wrote nothing to Jira: 409 DRY_RUN_NOT_VERIFIABLE', async () => {
    const run = await finishedRun('COMPLETED', { dryRun: true });
    const res = await verify(run.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id} is a dry run: it wrote nothing to Jira to verify`,
      error: 'Conflict',
      code: 'DRY_RUN_NOT_VERIFIABLE',
    });
  });

  it("another tenant's finished and verified run is 404 MIGRATION_NOT_FOUND, and stays as it was", async () => {
    const run = await finishedRun('PARTIAL');
    await disk().put(artifactKeys.verificationSummary(t.tenantId, run.id), JSON.stringify(summary));
    const answers = [
      await verify(run.id, other.admin.token),
      await get(`/api/migrations/${run.id}/verification`, other.member.token),
      await get(`/api/migrations/${run.id}/verification/audit?format=csv`, other.owner.token),
    ];
    expect(answers.map((res) => [res.status, res.body.code])).toEqual([
      [404, 'MIGRATION_NOT_FOUND'],
      [404, 'MIGRATION_NOT_FOUND'],
      [404, 'MIGRATION_NOT_FOUND'],
    ]);
    expect(answers[0]?.body.message).toBe(`Migration run ${run.id} not found`);
    expect((await storedRun(run.id)).status).toBe('PARTIAL');
    expect(orch.starts).toEqual([]);
  });

  it('a worker that cannot be started: 502, and the run back as it ended', async () => {
    setOrchestrator(failingOrchestrator);
    const run = await finishedRun('COMPLETED');
    const res = await verify(run.id);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('ENGINE_DISPATCH_FAILED');
    expect((await storedRun(run.id)).status).toBe('COMPLETED');
  });

  it('cancel ends a verification at once: the run back as it ended, its execution stopped', async () => {
    const run = await finishedRun('COMPLETED');
    expect((await verify(run.id)).status).toBe(202);

    const res = await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: t.admin.token });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: run.id, status: 'COMPLETED' });
    expect(orch.stops).toEqual([run.id]);
    expect((await storedRun(run.id)).status).toBe('COMPLETED');
    const events = (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event);
    expect(events.slice(-3)).toEqual([
      { type: 'log', message: 'Verification cancelled' },
      { type: 'status', status: 'completed' },
      { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } },
    ]);
  });

  it('a project is not deleted while one of its runs is being verified (409); once the verification ends it is', async () => {
    // Prepare: a verification under way
    const run = await finishedRun('COMPLETED');
    expect((await verify(run.id)).status).toBe(202);
    const remove = () => app.call('DELETE', `/api/projects/${run.projectId}`, { token: t.owner.token });

    // Act + Assess: refused, the project and its run still there, the verification untouched
    expect((await remove()).body).toEqual({
      statusCode: 409,
      message: `Run ${run.id} of this project is being verified: delete the project once its verification has ended (or cancel it)`,
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    });
    expect(await app.store.projects.get(t.tenantId, run.projectId)).toBeDefined();
    expect(await storedRun(run.id)).toMatchObject({ status: 'VERIFYING', control: 'run' });
    expect(orch.stops).toEqual([]);

    // Act + Assess: the verification cancelled, the run back as it ended: the project can go
    expect(
      (await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: t.admin.token })).status,
    ).toBe(200);
    expect((await remove()).status).toBe(204);
    expect(await app.store.projects.get(t.tenantId, run.projectId)).toBeUndefined();
  });
});

describe('GET /api/migrations/{runId}/verification and its audit', () => {
  it('404 VERIFICATION_NOT_FOUND before a verification has finished; then the summary, on the status too', async () => {
    const run = await finishedRun('COMPLETED');
    const missing = {
      statusCode: 404,
      message: `Run ${run.id} has no verification yet: its summary and audit are written when a verification ends`,
      error: 'Not Found',
      code: 'VERIFICATION_NOT_FOUND',
    };
    for (const path of ['verification', 'verification/audit', 'verification/audit?format=csv']) {
      const res = await get(`/api/migrations/${run.id}/${path}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(missing);
    }
    expect((await get(`/api/migrations/${run.id}/status`)).body.verification).toBeNull();

    await disk().put(artifactKeys.verificationSummary(t.tenantId, run.id), JSON.stringify(summary));
    const res = await get(`/api/migrations/${run.id}/verification`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(summary);
    const status = await get(`/api/migrations/${run.id}/status`);
    expect(status.body).toMatchObject({ id: run.id, status: 'COMPLETED', verification: summary });
  });

  it('downloads the audit as written: verification.json by default, verification.csv as text/csv', async () => {
    const run = await finishedRun('COMPLETED');
    const audit = {
      runId: run.id,
      verifiedAt: '2026-12-07T05:00:00.000Z',
      items: [
        { sourceId: 1, key: 'MIG-1', result: 'pass', differences: [], notes: [] },
        {
          sourceId: 2,
          key: 'MIG-2',
          result: 'differs',
          differences: [{ field: 'labels', expected: 'a, b', actual: 'a' }],
          notes: [],
        },
        {
          sourceId: 3,
          key: 'MIG-3',
          result: 'unverified',
          differences: [],
          notes: ['no longer in Azure DevOps'],
        },
      ],
      summary,
    };
    const csv =
      'source_id,jira_key,result,field,expected,actual,notes\r\n' +
      '1,MIG-1,pass,,,,\r\n' +
      '2,MIG-2,differs,labels,"a, b",a,\r\n' +
      '3,MIG-3,unverified,,,,no longer in Azure DevOps\r\n';
    await disk().put(artifactKeys.verificationAudit(t.tenantId, run.id), JSON.stringify(audit));
    await disk().put(artifactKeys.verificationAuditCsv(t.tenantId, run.id), csv);
    await disk().put(artifactKeys.verificationSummary(t.tenantId, run.id), JSON.stringify(summary));

    const json = await get(`/api/migrations/${run.id}/verification/audit`);
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.headers['content-disposition']).toBe(`attachment; filename="verification-${run.id}.json"`);
    expect(json.body).toEqual(audit);

    const asCsv = await get(`/api/migrations/${run.id}/verification/audit?format=csv`);
    expect(asCsv.status).toBe(200);
    expect(asCsv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(asCsv.headers['content-disposition']).toBe(`attachment; filename="verification-${run.id}.csv"`);
    expect(asCsv.text).toBe(csv);

    const bad = await get(`/api/migrations/${run.id}/verification/audit?format=xml`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      statusCode: 400,
      message: ['format must be one of: json, csv'],
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
  });
});

describe('a verification the engine cannot carry on', () => {
  /** A finished run, VERIFYING through the API (its execution only recorded), as the engine reads it. */
  async function verifying(): Promise<Run> {
    const run = await finishedRun('COMPLETED');
    expect((await verify(run.id)).status).toBe(202);
    return storedRun(run.id);
  }
  const lastEvents = async (run: Run) =>
    (await app.store.runs.events(t.tenantId, run.projectId, run.id)).map((e) => e.event).slice(-3);

  it('a tracker that keeps not answering ends the verification, never the run', async () => {
    const run = await verifying();
    // The streak of engine calls that met Jira not answering is kept for a VERIFYING run as for a RUNNING one.
    expect(
      await app.store.runs.recordTrackerFaults(t.tenantId, run.id, { phase: 9, index: 0, count: 1 }),
    ).toBe(true);
    const answer = await answerInterrupt({ journal: new StoreRunJournal(app.store) }, run, {
      kind: 'tracker-unavailable',
      tracker: 'target',
      status: 503,
      count: 8,
    });
    expect(answer).toBe('failed');
    expect(await storedRun(run.id)).toMatchObject({ status: 'COMPLETED', failureReason: null });
    expect((await lastEvents(run))[1]).toEqual({ type: 'status', status: 'completed' });
  });

  it('a tracker token that cannot be had ends the verification, the run back as it ended', async () => {
    const run = await verifying();
    const answer = await answerInterrupt({ journal: new StoreRunJournal(app.store) }, run, {
      kind: 'credentials-refused',
      tracker: 'target',
      code: 'invalid_grant',
      message: 'Token exchange failed: invalid_grant',
      reconnect: true,
    });
    expect(answer).toBe('paused');
    expect(await storedRun(run.id)).toMatchObject({ status: 'COMPLETED', control: 'run' });
    expect(await lastEvents(run)).toEqual([
      {
        type: 'log',
        message: 'Verification stopped: Token exchange failed: invalid_grant, then verify again',
      },
      { type: 'status', status: 'completed' },
      { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } },
    ]);
  });
});
