/**
 * The run API over HTTP, with a recording (or failing) orchestrator in place of Step Functions and the real
 * DynamoDB Local underneath. The engine's own moves (RUNNING -> PAUSED at a checkpoint, -> PARTIAL at the end)
 * are made here through the same repository call the runner uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runImportFiles } from '../../functions/domain/jira-import/index.ts';
import type { Orchestrator } from '../../functions/domain/orchestration.ts';
import type { ProjectStatus } from '../../functions/domain/projects.ts';
import { resetMetrics } from '../../functions/platform/metrics.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { ImportFileArchive } from '../../functions/store/import-files.ts';
import { keys } from '../../functions/store/keys.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { bugsOnlyMapping, importItemFields } from '../support/import-items.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';

const PAT = 'ado-pat-SECRET-4f1c2a9e7d';
const API_TOKEN = 'jira-token-SECRET-93be11c0aa';
const SECRETS = [PAT, API_TOKEN];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UNKNOWN_RUN = '01a20392-0000-7000-8000-000000000000';

const failing: Orchestrator = {
  start: async () => {
    throw new Error('StartExecution: AccessDenied');
  },
  stop: async () => {},
};

let app: TestApp;
let t: TestTenant;
let other: TestTenant;
let dataDir: string;
let orch: RecordingOrchestrator;
const logged: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'migrations-test-'));
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    const original = console[m].bind(console);
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      logged.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
      original(...args);
    });
  }
  app = await startTestApp({ DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'DEBUG' });
  [t, other] = await Promise.all([app.createTenant('Runs'), app.createTenant('Other')]);
});
afterAll(async () => {
  setOrchestrator(undefined);
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  orch = new RecordingOrchestrator();
  setOrchestrator(orch);
});
afterEach(() => setOrchestrator(undefined));

/** A paid project (READY), arranged through the store: the flow to READY is project-lifecycle.test.ts's. */
async function newProject(tenant = t, status: ProjectStatus = 'READY'): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: tenant.admin.token,
    body: { name: 'Runs project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  await markProjectStatus(app.store, tenant.tenantId, res.body.id, status);
  return res.body.id;
}

type Options = Record<string, unknown>;
const startBody = (options: Options = {}, type = 'FULL', source: Options = {}) => ({
  type,
  enginePayload: {
    source: { org: 'contoso', project: 'Fabrikam', pat: PAT, type_filter: 'Bug, Task', ...source },
    target: {
      base_url: 'https://contoso.atlassian.net',
      email: 'migrator@contoso.example.com',
      api_token: API_TOKEN,
      project_key: 'MIG',
    },
    options: { migrate_attachments: true, migrate_comments: false, ...options },
  },
});

const start = (projectId: string, body: unknown = startBody(), token = t.member.token) =>
  app.call('POST', `/api/migrations/project/${projectId}/start`, { token, body });
const post = (runId: string, action: string, token = t.admin.token) =>
  app.call('POST', `/api/migrations/${runId}/${action}`, { token });
const projectStatus = async (projectId: string) =>
  (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body.status;
const runStatus = async (runId: string) =>
  (await app.call('GET', `/api/migrations/${runId}/status`, { token: t.member.token })).body.status;

describe('POST /api/migrations/project/{projectId}/start: validation', () => {
  it('lists every problem of a body, one sentence per field', async () => {
    const projectId = await newProject();
    const empty = await start(projectId, {});
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({
      statusCode: 400,
      message: ['type is required', 'enginePayload is required'],
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });

    const res = await start(projectId, {
      type: 'EVERYTHING',
      enginePayload: {
        source: { org: 'contoso', project: '' },
        target: { base_url: 'not a url', email: 'nobody', api_token: 'x', project_key: '1AB' },
        options: { dry_run: 'yes', type_overrides: { Bug: 3 }, migrate_everything: true },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.message).toEqual(
      expect.arrayContaining([
        'type must be one of: FULL, SAMPLE, INCREMENTAL',
        'enginePayload.source.project must not be empty',
        'enginePayload.source.pat is required',
        'enginePayload.target.base_url must be a valid url',
        'enginePayload.target.email must be a valid e-mail address',
        'enginePayload.target.project_key must be a Jira project key (a letter, then at most 9 letters, digits or underscores)',
        'enginePayload.options.dry_run must be a boolean',
        'enginePayload.options.type_overrides.Bug must be a string',
        'enginePayload.options.migrate_everything is not a known field',
      ]),
    );
    expect(orch.starts).toEqual([]);
    expect(await projectStatus(projectId)).toBe('READY');
  });

  it("answers 404 for an unknown, malformed or another tenant's project", async () => {
    const theirs = await newProject(other);
    for (const id of [theirs, UNKNOWN_RUN, 'not-a-uuid']) {
      const res = await start(id);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('PROJECT_NOT_FOUND');
    }
    expect(orch.starts).toEqual([]);
  });
});

describe('starting a run', () => {
  it('publishes RunsStarted with the request that started the run (and CANCELLED with the cancel)', async () => {
    vi.stubEnv('METRICS', 'on');
    resetMetrics();
    const emf: Record<string, unknown>[] = [];
    const keep = (chunk: unknown) => {
      for (const line of String(chunk).split('\n'))
        if (line.includes('"_aws"')) emf.push(JSON.parse(line) as Record<string, unknown>);
    };
    const write = process.stdout.write.bind(process.stdout);
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk, ...rest) => {
        keep(chunk);
        return write(chunk as string, ...(rest as []));
      }),
      vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => keep(args.join(' '))),
    ];
    try {
      const run = (await start(await newProject())).body;
      // Written by the time the answer came: nothing waits in a buffer for a later request.
      expect(emf.map((d) => d.RunsStarted)).toEqual([1]);
      await post(run.id, 'cancel');
      expect(emf.map((d) => d.RunsCancelled).filter(Boolean)).toEqual([1]);
    } finally {
      for (const spy of spies) spy.mockRestore();
      vi.unstubAllEnvs();
      resetMetrics();
    }
  });

  it('answers the run object and hands the orchestrator ids only', async () => {
    const projectId = await newProject();
    const res = await start(projectId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      projectId,
      status: 'RUNNING',
      type: 'FULL',
      totalItems: 0,
      successCount: 0,
      failureCount: 0,
      progressPercent: 0,
      startedAt: expect.stringMatching(ISO),
      createdAt: expect.stringMatching(ISO),
    });
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: res.body.id, generation: 0 }]);
    const everything = JSON.stringify(orch.starts) + res.text + logged.join('\n');
    for (const secret of SECRETS) expect(everything).not.toContain(secret);

    // The options the engine reads, from the body's wire names.
    const run = await app.store.runs.get(t.tenantId, res.body.id);
    expect(run?.options).toEqual({
      migrateAttachments: true,
      migrateComments: false,
      migrateLinks: true,
      dryRun: false,
      areaFilter: null,
      typeFilter: ['Bug', 'Task'],
      typeOverrides: {},
      stateOverrides: {},
      // Not asked otherwise: the run verifies every migrated item at its end.
      verify: true,
    });
  });

  it("stores the credentials sealed as the project's connections, shown without secrets", async () => {
    const projectId = await newProject();
    expect((await start(projectId)).status).toBe(200);
    const detail = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(detail.body.connections.source).toMatchObject({
      ok: true,
      organizationUrl: 'contoso',
      projectName: 'Fabrikam',
    });
    expect(detail.body.connections.target).toMatchObject({
      ok: true,
      baseUrl: 'https://contoso.atlassian.net',
      projectKey: 'MIG',
    });
    for (const secret of SECRETS) expect(detail.text).not.toContain(secret);
    for (const kind of ['source', 'target'] as const) {
      const raw = await app.db.send(
        new GetCommand({ TableName: app.tableName, Key: keys.connection(t.tenantId, projectId, kind) }),
      );
      expect(raw.Item?.sealed).toBeDefined();
      for (const secret of SECRETS) expect(JSON.stringify(raw.Item)).not.toContain(secret);
    }
  });

  it('moves the project to MIGRATING, and a dry run leaves it as it was', async () => {
    const real = await newProject();
    expect((await start(real)).status).toBe(200);
    expect(await projectStatus(real)).toBe('MIGRATING');

    const dry = await newProject(t, 'MAPPED');
    expect((await start(dry, startBody({ dry_run: true }))).status).toBe(200);
    expect(await projectStatus(dry)).toBe('MAPPED');
  });

  describe('the project status a run needs (domain/lifecycle.ts)', () => {
    const code = 'PROJECT_NOT_READY';
    it.each([
      ['DRAFT', /project [0-9a-f-]+ is DRAFT: connect both trackers: POST \/api\/connectors\/test/],
      ['CONNECTED', /is CONNECTED: scan the source: POST \/api\/connectors\/scan/],
      ['SCANNED', /is SCANNED: confirm the mappings: .*POST \/api\/projects\/[0-9a-f-]+\/mappings\/confirm/],
    ] as const)('refuses every run on a %s project with 409 and the next step', async (status, next) => {
      const projectId = await newProject(t, status);
      for (const body of [
        startBody(),
        startBody({}, 'SAMPLE'),
        startBody({ dry_run: true }),
        startBody({}, 'INCREMENTAL'),
      ]) {
        const res = await start(projectId, body);
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict', code });
        expect(res.body.message).toMatch(next);
      }
      expect(await projectStatus(projectId)).toBe(status);
      expect(orch.starts).toHaveLength(0);
      // Nothing was kept from the refused start: no run, no stored credentials.
      const runs = await app.call('GET', `/api/migrations?projectId=${projectId}`, { token: t.member.token });
      expect(runs.body).toEqual([]);
      const detail = (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body;
      expect(detail.connections).toEqual({ source: null, target: null });
    });

    it('refuses FULL and INCREMENTAL on a MAPPED project (pay first), and lets SAMPLE and dry runs start', async () => {
      const projectId = await newProject(t, 'MAPPED');
      for (const type of ['FULL', 'INCREMENTAL']) {
        const res = await start(projectId, startBody({}, type));
        expect(res.status).toBe(409);
        expect(res.body.code).toBe(code);
        expect(res.body.message).toMatch(
          new RegExp(
            `A ${type} migration needs a paid project \\(READY\\); project ${projectId} is MAPPED: accept the quote: .*quote\\/accept.*; a SAMPLE run or a dry run can start now`,
          ),
        );
      }
      const sample = await start(projectId, startBody({}, 'SAMPLE'));
      expect(sample.status).toBe(200);
      // A trial never moves the project: not while it runs, not when it ends.
      expect(await projectStatus(projectId)).toBe('MAPPED');
      await app.store.runs.setStatus(t.tenantId, sample.body.id, ['RUNNING', 'PENDING'], 'COMPLETED', {
        finishedAt: new Date().toISOString(),
      });
      expect(await projectStatus(projectId)).toBe('MAPPED');
      const dry = await start(projectId, startBody({ dry_run: true }, 'FULL'));
      expect(dry.status).toBe(200);
      expect(await projectStatus(projectId)).toBe('MAPPED');
    });

    it.each(['READY', 'COMPLETED', 'FAILED', 'CANCELLED'] as const)(
      'starts a FULL run on a %s project (re-runs of a paid project need no new payment)',
      async (status) => {
        const projectId = await newProject(t, status);
        const res = await start(projectId, startBody({}, status === 'READY' ? 'FULL' : 'INCREMENTAL'));
        expect(res.status).toBe(200);
        expect(await projectStatus(projectId)).toBe('MIGRATING');
      },
    );
  });

  it('starts a run of a project delivered by Jira import: the engine builds its files and waits for the imports', async () => {
    const projectId = await newProject();
    const set = await app.call('PUT', `/api/projects/${projectId}/delivery`, {
      token: t.admin.token,
      body: { deliveryMode: 'jira-import' },
    });
    expect(set.status).toBe(200);
    const res = await start(projectId);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('RUNNING');
    expect(orch.starts).toHaveLength(1);
    expect(await projectStatus(projectId)).toBe('MIGRATING');
  });

  it('answers the active run to the same request, and 409 to another', async () => {
    const projectId = await newProject();
    const first = await start(projectId);
    // The same request written differently: explicit defaults, the type filter reordered, new secrets.
    const again = startBody({ migrate_links: true, dry_run: false }, 'FULL', {
      type_filter: 'Task,Bug',
      pat: 'a-rotated-pat',
    });
    const second = await start(projectId, again, t.owner.token);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(orch.starts).toHaveLength(1);

    for (const different of [
      startBody({}, 'SAMPLE'),
      startBody({ migrate_comments: true }),
      startBody({ state_overrides: { Active: 'In Progress' } }),
      startBody({}, 'FULL', { area_filter: 'Fabrikam\\Web' }),
    ]) {
      const res = await start(projectId, different);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        statusCode: 409,
        message: `Migration run ${first.body.id} is already active for this project`,
        error: 'Conflict',
        code: 'MIGRATION_ALREADY_RUNNING',
      });
    }
    expect(orch.starts).toHaveLength(1);
    const list = await app.call('GET', `/api/migrations?projectId=${projectId}`, { token: t.member.token });
    expect(list.body.map((r: { id: string }) => r.id)).toEqual([first.body.id]);
  });

  it('answers 502 when the worker cannot start, fails the run and leaves no lock behind', async () => {
    const projectId = await newProject();
    setOrchestrator(failing);
    const res = await start(projectId);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      statusCode: 502,
      message: 'Could not start migration worker',
      error: 'Bad Gateway',
      code: 'ENGINE_DISPATCH_FAILED',
    });
    expect(await app.store.runs.getLock(t.tenantId, projectId)).toBeUndefined();
    const [failed] = (
      await app.call('GET', `/api/migrations?projectId=${projectId}`, { token: t.member.token })
    ).body;
    expect(failed).toMatchObject({ status: 'FAILED', finishedAt: expect.stringMatching(ISO) });
    expect(await projectStatus(projectId)).toBe('FAILED');
    expect(logged.join('\n')).toContain('StartExecution: AccessDenied');

    setOrchestrator(orch);
    const later = await start(projectId);
    expect(later.status).toBe(200);
    expect(later.body.id).not.toBe(failed.id);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: later.body.id, generation: 0 }]);
    expect(await projectStatus(projectId)).toBe('MIGRATING');
  });

  it('takes over a lock a crash left behind a run that has ended', async () => {
    const projectId = await newProject();
    const first = await start(projectId);
    // The run ended but the release never happened (written around the repository, as a crash would leave it).
    await app.db.send(
      new UpdateCommand({
        TableName: app.tableName,
        Key: keys.run(t.tenantId, first.body.id),
        UpdateExpression: 'SET #s = :done',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':done': 'COMPLETED' },
      }),
    );
    expect((await app.store.runs.getLock(t.tenantId, projectId))?.runId).toBe(first.body.id);
    const next = await start(projectId, startBody({}, 'INCREMENTAL'));
    expect(next.status).toBe(200);
    expect(next.body.id).not.toBe(first.body.id);
    expect((await app.store.runs.getLock(t.tenantId, projectId))?.runId).toBe(next.body.id);
  });
});

describe('status, pause, resume, cancel', () => {
  it.each([
    ['a run', 'READY', {}, false],
    ["a dry run (the console offers a dry run's preview from it)", 'MAPPED', { dry_run: true }, true],
  ] as const)('answers the status fields of %s', async (_, projectIn, options, dryRun) => {
    const projectId = await newProject(t, projectIn);
    const run = (await start(projectId, startBody(options))).body;
    const res = await app.call('GET', `/api/migrations/${run.id}/status`, { token: t.member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: run.id,
      projectId,
      status: 'RUNNING',
      totalItems: 0,
      successCount: 0,
      failureCount: 0,
      skippedCount: 0,
      progressPercent: 0,
      currentPhase: 1,
      dryRun,
      startedAt: run.startedAt,
      pauseReason: null,
      verification: null,
    });
  });

  it('pauses through the engine, resumes with the next generation, refuses to resume what is not paused', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;

    const notPaused = await post(run.id, 'resume', t.member.token);
    expect(notPaused.status).toBe(400);
    expect(notPaused.body).toEqual({
      statusCode: 400,
      message: `Run ${run.id} is not paused`,
      error: 'Bad Request',
      code: 'MIGRATION_NOT_PAUSED',
    });

    const paused = await post(run.id, 'pause', t.member.token);
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ id: run.id, status: 'PAUSED' });
    expect((await app.store.runs.get(t.tenantId, run.id))?.control).toBe('pause');
    // Until the engine reaches its checkpoint the run is still RUNNING, and so not resumable.
    expect(await runStatus(run.id)).toBe('RUNNING');
    expect((await post(run.id, 'resume')).body.code).toBe('MIGRATION_NOT_PAUSED');

    // The engine's move at its next checkpoint.
    expect(await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED')).toBe(true);
    expect(await runStatus(run.id)).toBe('PAUSED');
    expect((await post(run.id, 'pause')).body).toEqual({ id: run.id, status: 'PAUSED' });
    expect(await projectStatus(projectId)).toBe('MIGRATING');

    const resumed = await post(run.id, 'resume', t.member.token);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({ id: run.id, status: 'RUNNING' });
    expect((await app.store.runs.get(t.tenantId, run.id))?.control).toBe('run');
    expect(orch.starts).toEqual([
      { tenantId: t.tenantId, runId: run.id, generation: 0 },
      { tenantId: t.tenantId, runId: run.id, generation: 1 },
    ]);
    expect((await post(run.id, 'resume')).body.code).toBe('MIGRATION_NOT_PAUSED');

    // Once the engine has recorded generation 1 working the run, the next resume starts generation 2.
    await app.store.runs.recordGeneration(t.tenantId, run.id, 1);
    await post(run.id, 'pause');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED');
    expect((await post(run.id, 'resume')).status).toBe(200);
    expect(orch.starts.at(-1)).toEqual({ tenantId: t.tenantId, runId: run.id, generation: 2 });
  });

  it('puts a run back to PAUSED when its resume cannot start a worker', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    await post(run.id, 'pause');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED');
    setOrchestrator(failing);
    const res = await post(run.id, 'resume');
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('ENGINE_DISPATCH_FAILED');
    expect(await runStatus(run.id)).toBe('PAUSED');
    setOrchestrator(orch);
    expect((await post(run.id, 'resume')).body).toEqual({ id: run.id, status: 'RUNNING' });
    // The failed dispatch started nothing: the same generation is tried again.
    expect(orch.starts.at(-1)).toEqual({ tenantId: t.tenantId, runId: run.id, generation: 1 });
  });

  it('cancels for good: stops the worker, releases the lock, the project follows, the reports are written', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const res = await post(run.id, 'cancel');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: run.id, status: 'CANCELLED' });
    expect(orch.stops).toEqual([run.id]);
    expect(await runStatus(run.id)).toBe('CANCELLED');
    expect((await app.store.runs.get(t.tenantId, run.id))?.control).toBe('cancel');
    expect(await projectStatus(projectId)).toBe('CANCELLED');
    expect(await app.store.runs.getLock(t.tenantId, projectId)).toBeUndefined();
    const failures = await app.call('GET', `/api/migrations/${run.id}/failures`, { token: t.member.token });
    expect(failures.status).toBe(200);
    expect(failures.body).toEqual([]);

    // Final: cancelling again answers the same; it cannot be paused or resumed.
    expect((await post(run.id, 'cancel')).body).toEqual({ id: run.id, status: 'CANCELLED' });
    const pause = await post(run.id, 'pause');
    expect(pause.status).toBe(409);
    expect(pause.body).toEqual({
      statusCode: 409,
      message: `Run ${run.id} has already ended (CANCELLED)`,
      error: 'Conflict',
      code: 'MIGRATION_FINISHED',
    });
    expect((await post(run.id, 'resume')).status).toBe(400);

    // The lock is gone: the same request starts a new run.
    const next = await start(projectId);
    expect(next.status).toBe(200);
    expect(next.body.id).not.toBe(run.id);
    expect(await projectStatus(projectId)).toBe('MIGRATING');
  });

  it('refuses to delete the project under an active run (409), and deletes it once the run is cancelled', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const refused = await app.call('DELETE', `/api/projects/${projectId}`, { token: t.owner.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      statusCode: 409,
      message: `Migration run ${run.id} is active for this project: cancel it before deleting the project`,
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    });
    expect(await projectStatus(projectId)).toBe('MIGRATING');
    expect((await post(run.id, 'cancel')).status).toBe(200);
    const deleted = await app.call('DELETE', `/api/projects/${projectId}`, { token: t.owner.token });
    expect(deleted.status).toBe(204);
  });

  it('cancels a paused run too', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    await post(run.id, 'pause');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED');
    expect((await post(run.id, 'cancel', t.owner.token)).body).toEqual({ id: run.id, status: 'CANCELLED' });
    expect(await runStatus(run.id)).toBe('CANCELLED');
  });

  it("follows the engine's end: a PARTIAL run completes the project, frees the lock and refuses cancel", async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    expect(await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PARTIAL')).toBe(true);
    expect(await projectStatus(projectId)).toBe('COMPLETED');
    expect(await app.store.runs.getLock(t.tenantId, projectId)).toBeUndefined();
    const cancel = await post(run.id, 'cancel');
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('MIGRATION_FINISHED');
    expect((await post(run.id, 'pause')).body.code).toBe('MIGRATION_FINISHED');
    expect(orch.stops).toEqual([]);

    const next = (await start(projectId)).body;
    await app.store.runs.setStatus(t.tenantId, next.id, ['RUNNING'], 'FAILED');
    expect(await projectStatus(projectId)).toBe('FAILED');
  });

  it("answers 404 for an unknown, malformed or another tenant's run", async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    for (const [method, action] of [
      ['GET', 'status'],
      ['POST', 'pause'],
      ['POST', 'resume'],
      ['POST', 'cancel'],
      ['GET', 'failures'],
      ['GET', 'preview'],
      ['GET', 'id-map'],
      ['POST', 'verification'],
      ['GET', 'verification'],
      ['GET', 'verification/audit'],
    ] as const) {
      for (const [id, token] of [
        [run.id, other.owner.token],
        [UNKNOWN_RUN, t.owner.token],
        ['nope', t.owner.token],
      ] as const) {
        const res = await app.call(method, `/api/migrations/${id}/${action}`, { token });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({
          statusCode: 404,
          message: `Migration run ${id} not found`,
          error: 'Not Found',
          code: 'MIGRATION_NOT_FOUND',
        });
      }
    }
    expect(await runStatus(run.id)).toBe('RUNNING');
    expect((await app.store.runs.get(t.tenantId, run.id))?.control).toBe('run');
    expect(orch.stops).toEqual([]);
  });
});

describe('GET /api/migrations', () => {
  it('needs a UUID projectId and a known status', async () => {
    const list = (q: string) => app.call('GET', `/api/migrations${q}`, { token: t.member.token });
    expect((await list('')).body).toMatchObject({ statusCode: 400, message: ['projectId is required'] });
    expect((await list('?projectId=abc')).body.message).toEqual(['projectId must be a UUID']);
    const projectId = await newProject();
    expect((await list(`?projectId=${projectId}&status=DONE`)).body.message).toEqual([
      'status must be one of: PENDING, RUNNING, PAUSED, COMPLETED, PARTIAL, FAILED, CANCELLED, VERIFYING, ROLLING_BACK, ROLLBACK_PAUSED, ROLLED_BACK',
    ]);
    const theirs = await list(`?projectId=${await newProject(other)}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('PROJECT_NOT_FOUND');
  });

  it("lists the project's runs most recent first, filtered by status", async () => {
    const projectId = await newProject();
    const ids: string[] = [];
    for (const type of ['FULL', 'SAMPLE', 'INCREMENTAL']) {
      const run = (await start(projectId, startBody({}, type))).body;
      ids.push(run.id);
      if (type !== 'INCREMENTAL') expect((await post(run.id, 'cancel')).status).toBe(200);
    }
    const res = await app.call('GET', `/api/migrations?projectId=${projectId}`, { token: t.member.token });
    expect(res.status).toBe(200);
    expect(res.body.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect(res.body[0]).toEqual({
      id: ids[2],
      projectId,
      status: 'RUNNING',
      type: 'INCREMENTAL',
      totalItems: 0,
      successCount: 0,
      failureCount: 0,
      skippedCount: 0,
      progressPercent: 0,
      currentPhase: 1,
      dryRun: false,
      startedAt: expect.stringMatching(ISO),
      finishedAt: null,
      createdAt: expect.stringMatching(ISO),
    });
    const cancelled = await app.call('GET', `/api/migrations?projectId=${projectId}&status=CANCELLED`, {
      token: t.member.token,
    });
    expect(cancelled.body.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[0]]);
    const none = await app.call('GET', `/api/migrations?projectId=${projectId}&status=COMPLETED`, {
      token: t.member.token,
    });
    expect(none.body).toEqual([]);
  });
});

describe('reports', () => {
  const disk = () => new DiskArtifactStore(join(dataDir, 'artifacts'));

  it('answers the dry-run preview, 404 PREVIEW_NOT_FOUND before there is one', async () => {
    const projectId = await newProject();
    const run = (await start(projectId, startBody({ dry_run: true }))).body;
    const missing = await app.call('GET', `/api/migrations/${run.id}/preview`, { token: t.member.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      statusCode: 404,
      message: `Run ${run.id} has no preview: only a finished dry run has one`,
      error: 'Not Found',
      code: 'PREVIEW_NOT_FOUND',
    });
    const preview = { runId: run.id, totalItems: 3, wouldCreate: 2, warnings: ['#7: undated iteration'] };
    await disk().put(artifactKeys.preview(t.tenantId, run.id), JSON.stringify(preview));
    const res = await app.call('GET', `/api/migrations/${run.id}/preview`, { token: t.member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(preview);
  });

  it('answers the failure report as a list, 404 REPORT_NOT_FOUND before the run ends', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const missing = await app.call('GET', `/api/migrations/${run.id}/failures`, { token: t.member.token });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('REPORT_NOT_FOUND');
    const row = {
      sourceId: 12,
      sourceType: 'Bug',
      phase: 5,
      phaseName: 'attachments',
      reasons: ['file over the limit'],
      targetKey: 'MIG-3',
    };
    await disk().put(
      artifactKeys.failureReport(t.tenantId, run.id),
      JSON.stringify({ runId: run.id, projectId, failures: [row] }),
    );
    const res = await app.call('GET', `/api/migrations/${run.id}/failures`, { token: t.member.token });
    expect(res.body).toEqual([row]);
  });

  it('answers the id map as JSON rows or as the CSV export', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const csv =
      'source_id,source_type,target_key,origin,run_id\r\n' +
      `101,Epic,MIG-1,created,${run.id}\r\n` +
      `102,"User Story, legacy",MIG-2,found,${run.id}\r\n`;
    await disk().put(artifactKeys.idMapExport(t.tenantId, run.id), csv);

    const json = await app.call('GET', `/api/migrations/${run.id}/id-map`, { token: t.member.token });
    expect(json.status).toBe(200);
    expect(json.body).toEqual([
      { sourceId: 101, sourceType: 'Epic', targetKey: 'MIG-1', origin: 'created', runId: run.id },
      { sourceId: 102, sourceType: 'User Story, legacy', targetKey: 'MIG-2', origin: 'found', runId: run.id },
    ]);
    const asCsv = await app.call('GET', `/api/migrations/${run.id}/id-map?format=csv`, {
      token: t.member.token,
    });
    expect(asCsv.status).toBe(200);
    expect(asCsv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(asCsv.text).toBe(csv);

    const bad = await app.call('GET', `/api/migrations/${run.id}/id-map?format=xml`, {
      token: t.member.token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['format must be one of: json, csv']);
  });
});

describe('Jira import files', () => {
  const record = (id: number) => ({
    item: {
      id,
      url: `https://dev.azure.com/contoso/_apis/wit/workItems/${id}`,
      fields: importItemFields(id, 'Bug', { displayName: 'Ana Silva', uniqueName: 'ana.silva@fabrikam.com' }),
    },
    revisions: [],
    comments: [],
  });
  const files = (runId: string) =>
    app.call('GET', `/api/migrations/${runId}/import-files`, { token: t.admin.token });
  const file = (runId: string, batch: string, token = t.admin.token) =>
    app.call('GET', `/api/migrations/${runId}/import-files/${batch}`, { token });

  it('lists the files and hands each to an owner or admin as written, with no credential of the run', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const missing = await files(run.id);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      statusCode: 404,
      message: `Run ${run.id} has no Jira import files: only a run delivered by Jira import has them, once built`,
      error: 'Not Found',
      code: 'IMPORT_FILE_NOT_FOUND',
    });

    const built = runImportFiles([1, 2, 3].map(record), bugsOnlyMapping, { runId: run.id, size: 2 });
    await new ImportFileArchive(new DiskArtifactStore(join(dataDir, 'artifacts'))).write(
      t.tenantId,
      run.id,
      built,
    );
    const list = await files(run.id);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      runId: run.id,
      batchSize: 2,
      files: [
        { number: 1, label: `tms-import-${run.id}-1`, issues: 2, written: true },
        { number: 2, label: `tms-import-${run.id}-2`, issues: 1, written: true },
      ],
      leftOut: [],
      // No account in the mapping: named as text in the files, listed here.
      unmappedPeople: ['ana.silva@fabrikam.com'],
    });
    for (const [n, token] of [
      [1, t.admin.token],
      [2, t.owner.token],
    ] as const) {
      const res = await file(run.id, String(n), token);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="jira-import-${run.id}-${n}.json"`,
      );
      expect(res.text).toBe(built.files[n - 1]?.text);
      for (const secret of [...SECRETS, 'dev.azure.com', 'ana.silva@'])
        expect(res.text).not.toContain(secret);
    }
  });

  it('serves no file of a run that ended before its batch was imported: 410, the copies its links named are gone', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const built = runImportFiles([1, 2, 3].map(record), bugsOnlyMapping, { runId: run.id, size: 2 });
    await new ImportFileArchive(new DiskArtifactStore(join(dataDir, 'artifacts'))).write(
      t.tenantId,
      run.id,
      built,
    );
    expect((await file(run.id, '1')).status).toBe(200);
    const cancelled = await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: t.admin.token });
    expect(cancelled.status).toBe(200);
    const res = await file(run.id, '1');
    expect(res.status).toBe(410);
    expect(res.body).toEqual({
      statusCode: 410,
      error: 'Gone',
      code: 'IMPORT_RUN_ENDED',
      message: `Run ${run.id} ended (CANCELLED) before batch 1 was imported: an import of its file would not be verified, and its attachment copies are removed; a new run builds new files`,
    });
  });

  it('refuses a member (403), answers 404 for another tenant and for a batch it does not have', async () => {
    const projectId = await newProject();
    const run = (await start(projectId)).body;
    const built = runImportFiles([record(1)], bugsOnlyMapping, { runId: run.id, size: 2 });
    await new ImportFileArchive(new DiskArtifactStore(join(dataDir, 'artifacts'))).write(
      t.tenantId,
      run.id,
      built,
    );
    for (const path of ['import-files', 'import-files/1']) {
      const member = await app.call('GET', `/api/migrations/${run.id}/${path}`, { token: t.member.token });
      expect(member.status).toBe(403);
      expect(member.body.code).toBe('FORBIDDEN');
      const elsewhere = await app.call('GET', `/api/migrations/${run.id}/${path}`, {
        token: other.owner.token,
      });
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.body).toEqual({
        statusCode: 404,
        message: `Migration run ${run.id} not found`,
        error: 'Not Found',
        code: 'MIGRATION_NOT_FOUND',
      });
    }
    for (const batch of ['2', '0', '01', 'x', '-1']) {
      const res = await file(run.id, batch);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        statusCode: 404,
        message: `Run ${run.id} has no Jira import file ${batch}`,
        error: 'Not Found',
        code: 'IMPORT_FILE_NOT_FOUND',
      });
    }
  });
});
