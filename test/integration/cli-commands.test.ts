/**
 * The `tms` commands cli.test.ts leaves out, run as a user runs them (the CLI's program in this process with the
 * environment and output each command is given, test/support/cli.ts) against the real local gateway: `connect`
 * and `scan` through the API to the sandbox trackers, `resume`, `report` over the artifacts a finished run
 * leaves, `rollback` followed to the end of its preview, and what `watch` prints when its output is not a
 * terminal.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { runImportFiles, serialiseImportFile } from '../../functions/domain/jira-import/index.ts';
import { NOT_UNDONE } from '../../functions/domain/rollback/plan.ts';
import { chunkEventId, type RunEvent, statusEventId } from '../../functions/domain/run-events.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { finalizeStep } from '../../functions/engine/finalize.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { ImportFileArchive } from '../../functions/store/import-files.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { type CliResult, runTms, spawnTms } from '../support/cli.ts';
import { bugsOnlyMapping, importItemFields } from '../support/import-items.ts';
import { emptyPreflight } from '../support/preflight.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';
import { sandboxControl } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
let dataDir: string;
let home: string;
let orch: RecordingOrchestrator;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '40', SANDBOX_SEED: '11' });

const tms = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  runTms(args, { api: `${app.url}/api`, home, env });
const login = () => tms(['login', '--email', t.admin.email], { TMS_PASSWORD: TEST_PASSWORD });
const disk = () => new DiskArtifactStore(join(dataDir, 'artifacts'));

async function newProject(name = 'CLI commands'): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

const projectStatus = async (projectId: string): Promise<string> =>
  (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body.status;

interface Truth {
  totalWorkItems: number;
  typeCounts: Record<string, number>;
}
const truth = () => sandboxControl(sb.ado.url, 'GET', '/_sandbox/ado/truth') as Promise<Truth>;

/** The tracker flags a user types: the organisation by name (the API resolves it against ADO_BASE_URL). */
const trackerArgs = (over: Record<string, string> = {}) =>
  Object.entries({
    '--ado-org': config.ado.org,
    '--ado-project': config.ado.project,
    '--jira-url': sb.jira.url,
    '--jira-email': config.jira.email,
    '--jira-key': config.jira.projectKey,
    ...over,
  }).flat();
/** Secrets from the environment, as the README recommends. */
const secrets = (over: Record<string, string> = {}) => ({
  TMS_ADO_PAT: config.ado.pat,
  TMS_JIRA_TOKEN: config.jira.apiToken,
  ...over,
});

// One login serves the whole file.
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tms-cli-data-'));
  home = await mkdtemp(join(tmpdir(), 'tms-cli-'));
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, DATA_DIR: dataDir });
  t = await app.createTenant('CliCommands');
  expect((await login()).code).toBe(0);
});
afterAll(async () => {
  await app?.close();
  await sb?.stop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});
beforeEach(() => {
  orch = new RecordingOrchestrator();
  setOrchestrator(orch);
});
afterEach(() => {
  setOrchestrator(undefined);
});

describe('tms connect', () => {
  it('tests both sides against the trackers, stores them (CONNECTED) and retests the stored ones', async () => {
    const projectId = await newProject();
    const issues = (await sandboxControl(sb.jira.url, 'GET', '/_sandbox/jira/issues')) as unknown[];
    const res = await tms(['connect', projectId, ...trackerArgs()], secrets());
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `source: ok (${config.ado.org} / ${config.ado.project}, ${(await truth()).totalWorkItems} items)`,
    );
    expect(lines[1]).toMatch(
      new RegExp(`^target: ok \\(${new URL(sb.jira.url).host} / .+, ${issues.length} items\\)$`),
    );
    expect(res.stdout).not.toContain(config.ado.pat);
    expect(res.stdout).not.toContain(config.jira.apiToken);
    expect(await projectStatus(projectId)).toBe('CONNECTED');

    // No options and no secrets: the API tests the credentials it stored.
    const again = await tms(['connect', projectId, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      source: expect.objectContaining({
        success: true,
        metadata: expect.objectContaining({ organisation: config.ado.org, project: config.ado.project }),
      }),
      target: expect.objectContaining({ success: true }),
    });
  });

  it('exits 1 and says which side failed and why when a test says no', async () => {
    const projectId = await newProject();
    const res = await tms(['connect', projectId, ...trackerArgs()], secrets({ TMS_ADO_PAT: 'wrong-pat' }));
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('');
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('source: failed: source connection failed with 401');
    expect(lines[1]).toMatch(/^target: ok \(/);
    expect(await projectStatus(projectId)).toBe('DRAFT');
  });

  it('refuses half a side as a usage error (exit 2) before calling the API', async () => {
    const projectId = await newProject();
    const res = await tms(['connect', projectId, '--ado-org', config.ado.org], { TMS_ADO_PAT: '' });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: missing --ado-project, --ado-pat (or TMS_ADO_PAT)\n');
    expect(res.stdout).toBe('');
    expect(await projectStatus(projectId)).toBe('DRAFT');
  });
});

describe('tms scan', () => {
  it("scans a connected project's source and prints the totals per type (SCANNED)", async () => {
    const projectId = await newProject();
    expect((await tms(['connect', projectId, ...trackerArgs()], secrets())).code).toBe(0);
    const expected = await truth();

    const res = await tms(['scan', projectId]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const [head, ...types] = res.stdout.trimEnd().split('\n');
    expect(head).toMatch(
      new RegExp(`^Scan [0-9a-f-]{36}: COMPLETED, ${expected.totalWorkItems} work items$`),
    );
    expect(types.sort()).toEqual(
      Object.entries(expected.typeCounts)
        .map(([type, n]) => `  ${type}: ${n}`)
        .sort(),
    );
    expect(await projectStatus(projectId)).toBe('SCANNED');
    const scanId = head?.split(' ')[1]?.replace(/:$/, '');
    const audit = await app.call('GET', `/api/audit/${scanId}`, { token: t.member.token });
    expect(audit.body).toMatchObject({
      projectId,
      status: 'COMPLETED',
      report: { totalWorkItems: expected.totalWorkItems, typeCounts: expected.typeCounts },
    });
  });

  it('a project without stored credentials is an API error (exit 3) naming the problem', async () => {
    const projectId = await newProject();
    const res = await tms(['scan', projectId]);
    expect(res.code).toBe(3);
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: VALIDATION_FAILED (HTTP 400)');
    expect(lines[1]).toContain(`project ${projectId} has no stored source credentials`);
    expect(res.stdout).toBe('');
  });
});

describe('tms resume', () => {
  it('moves a PAUSED run to RUNNING and starts the next execution', async () => {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    expect(
      await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PAUSED', { control: 'pause' }),
    ).toBe(true);
    const res = await tms(['resume', run.id]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`Run ${run.id} RUNNING\n`);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);
    expect((await app.store.runs.get(t.tenantId, run.id))?.status).toBe('RUNNING');
  });

  it('a run that is not paused: MIGRATION_NOT_PAUSED, exit 3, nothing started', async () => {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    const res = await tms(['resume', run.id]);
    expect(res.code).toBe(3);
    expect(res.stderr).toBe(`error: MIGRATION_NOT_PAUSED (HTTP 400)\n  Run ${run.id} is not paused\n`);
    expect(res.stdout).toBe('');
    expect(orch.starts).toEqual([]);
  });
});

describe('tms report', () => {
  async function finishedRun(): Promise<Run> {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'PARTIAL', {
      finishedAt: new Date().toISOString(),
    });
    return run;
  }
  const failures = [
    {
      sourceId: 12,
      sourceType: 'Bug',
      phase: 5,
      phaseName: 'attachments',
      reasons: ['file over the limit', 'second "try", same'],
      targetKey: 'MIG-3',
    },
    {
      sourceId: 14,
      sourceType: 'Task',
      phase: 2,
      phaseName: 'create',
      reasons: ['refused'],
      targetKey: null,
    },
  ];

  it('prints the failure report as CSV by default and as JSON with --format json', async () => {
    const run = await finishedRun();
    await disk().put(
      artifactKeys.failureReport(t.tenantId, run.id),
      JSON.stringify({ runId: run.id, projectId: run.projectId, failures }),
    );
    const csv = await tms(['report', run.id]);
    expect(csv.stderr).toBe('');
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe(
      'sourceId,sourceType,phase,phaseName,reasons,targetKey\n' +
        '12,Bug,5,attachments,"[""file over the limit"",""second \\""try\\"", same""]",MIG-3\n' +
        '14,Task,2,create,"[""refused""]",\n',
    );
    // --json alone means JSON; --failures names the default.
    const json = await tms(['--json', 'report', run.id, '--failures']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(failures);
  });

  it('an empty failure report as CSV is still a header row', async () => {
    const run = await finishedRun();
    await disk().put(
      artifactKeys.failureReport(t.tenantId, run.id),
      JSON.stringify({ runId: run.id, projectId: run.projectId, failures: [] }),
    );
    const res = await tms(['report', run.id]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('sourceId,sourceType,phase,phaseName,reasons,targetKey\n');
  });

  it('prints the dry-run preview as JSON, and refuses it as CSV (exit 2)', async () => {
    const run = await finishedRun();
    const preview = { runId: run.id, totalItems: 3, wouldCreate: 2, warnings: ['#7: undated iteration'] };
    await disk().put(artifactKeys.preview(t.tenantId, run.id), JSON.stringify(preview));
    const res = await tms(['report', run.id, '--preview']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(preview);
    const csv = await tms(['report', run.id, '--preview', '--format', 'csv']);
    expect(csv.code).toBe(2);
    expect(csv.stderr).toBe('error: --preview is JSON only\n');
  });

  it("prints the id map as the API's own CSV export, or as JSON rows", async () => {
    const run = await finishedRun();
    const csv =
      'source_id,source_type,target_key,origin,run_id\r\n' +
      `101,Epic,MIG-1,created,${run.id}\r\n` +
      `102,"User Story, legacy",MIG-2,found,${run.id}\r\n`;
    await disk().put(artifactKeys.idMapExport(t.tenantId, run.id), csv);
    const asCsv = await tms(['report', run.id, '--id-map']);
    expect(asCsv.code).toBe(0);
    expect(asCsv.stdout).toBe(csv);
    const asJson = await tms(['report', run.id, '--id-map', '--format', 'json']);
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual([
      { sourceId: 101, sourceType: 'Epic', targetKey: 'MIG-1', origin: 'created', runId: run.id },
      { sourceId: 102, sourceType: 'User Story, legacy', targetKey: 'MIG-2', origin: 'found', runId: run.id },
    ]);
  });

  it('refuses two kinds or an unknown format (exit 2), and a missing report is REPORT_NOT_FOUND (exit 3)', async () => {
    const run = await finishedRun();
    const two = await tms(['report', run.id, '--failures', '--id-map']);
    expect(two.code).toBe(2);
    expect(two.stderr).toBe('error: choose one of --failures, --preview, --id-map, --verification\n');
    const xml = await tms(['report', run.id, '--format', 'xml']);
    expect(xml.code).toBe(2);
    expect(xml.stderr).toBe('error: --format must be csv or json\n');
    const missing = await tms(['report', run.id]);
    expect(missing.code).toBe(3);
    expect(missing.stderr.split('\n')[0]).toBe('error: REPORT_NOT_FOUND (HTTP 404)');
  });
});

describe('tms import-files', () => {
  const someone = { displayName: 'Dee Ng', uniqueName: 'dee.ng@fabrikam.example' };

  it('lists the batches, saves one file as written (0600); a bad number is a usage error, none yet exit 3', async () => {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    expect(await login()).toMatchObject({ code: 0 });
    const none = await tms(['import-files', run.id]);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('error: IMPORT_FILE_NOT_FOUND (HTTP 404)');

    const records = [1, 2, 3].map((id) => ({
      item: { id, fields: importItemFields(id, 'Bug', someone) },
      revisions: [],
      comments: [],
    }));
    const built = runImportFiles(records, bugsOnlyMapping, { runId: run.id, size: 2 });
    // Batch 1's first issue carries a file, as the run's copy: its download links to it.
    const first = built.files[0] as { text: string };
    const withFile = JSON.parse(first.text) as { projects: { issues: Record<string, unknown>[] }[] };
    (withFile.projects[0]?.issues[0] as Record<string, unknown>).attachments = [
      { name: 'trace.log', created: '2024-03-05T10:00:00.000+0000', uri: 'tms-copy:0f4c7a93-8d2e-4b55' },
    ];
    first.text = serialiseImportFile(withFile as Parameters<typeof serialiseImportFile>[0]);
    await new ImportFileArchive(disk()).write(t.tenantId, run.id, built);
    const list = await tms(['import-files', run.id]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^1\\s+tms-import-${run.id}-1\\s+2\\s+written$`, 'm'));
    expect(list.stdout).toMatch(new RegExp(`^2\\s+tms-import-${run.id}-2\\s+1\\s+written$`, 'm'));
    expect(list.stdout).toContain('Jira settings > System > External System Import > JSON');
    expect(list.stdout).toContain('People without a Jira account: 1 (their names stay as text)');

    const file = join(home, 'batch-2.json');
    const saved = await tms(['import-files', run.id, '--batch', '2', '--out', file]);
    expect(saved.code).toBe(0);
    expect(saved.stdout.trim()).toBe(`Saved batch 2 to ${file}`);
    expect(await readFile(file, 'utf8')).toBe(built.files[1]?.text);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // A file with links says when they expire (the download's X-Links-Expire-At): saved, printed, or as JSON.
    const expiry =
      /^Its attachment links expire at (\S+): import it in Jira before then, or download it again for new links\.$/m;
    const linked = await tms(['import-files', run.id, '--batch', '1', '--out', join(home, 'batch-1.json')]);
    expect(linked.code).toBe(0);
    const [said, at] = linked.stdout.trim().split('\n');
    expect(said).toBe(`Saved batch 1 to ${join(home, 'batch-1.json')}`);
    const expiresAt = expiry.exec(at ?? '')?.[1] as string;
    expect(new Date(expiresAt).toISOString()).toBe(expiresAt);
    expect(await readFile(join(home, 'batch-1.json'), 'utf8')).toContain(
      `?expires=${Date.parse(expiresAt) / 1000}&`,
    );
    const printed = await tms(['import-files', run.id, '--batch', '1']);
    expect(printed.stdout).toMatch(/"uri": "http:\/\/[^"]+\/api\/artifact-links\//);
    expect(printed.stderr).toMatch(expiry);
    const asJson = await tms([
      '--json',
      'import-files',
      run.id,
      '--batch',
      '1',
      '--out',
      join(home, 'batch-1.json'),
    ]);
    expect(JSON.parse(asJson.stdout)).toEqual({
      runId: run.id,
      batch: 1,
      file: join(home, 'batch-1.json'),
      linksExpireAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
    });

    const bad = await tms(['import-files', run.id, '--batch', 'two']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--batch must be a batch number');
  });
});

describe('tms verify and tms report --verification', () => {
  it("starts a finished run's verification, then downloads its audit as CSV (default) or JSON", async () => {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
    });
    await writePreflight(disk(), { tenantId: t.tenantId, runId: run.id }, emptyPreflight());
    const started = await tms(['verify', run.id]);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    expect(started.stdout).toBe(`Run ${run.id} VERIFYING; follow it with: tms watch ${run.id}\n`);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);

    const missing = await tms(['report', run.id, '--verification']);
    expect(missing.code).toBe(3);
    expect(missing.stderr.split('\n')[0]).toBe('error: VERIFICATION_NOT_FOUND (HTTP 404)');

    const summary = {
      itemsChecked: 1,
      fullyFaithful: 1,
      differencesByField: {},
      itemsWithNotes: 0,
      unverified: 0,
    };
    const csv = 'source_id,jira_key,result,field,expected,actual,notes\r\n1,MIG-1,pass,,,,\r\n';
    const audit = { runId: run.id, verifiedAt: new Date().toISOString(), items: [], summary };
    await disk().put(artifactKeys.verificationAuditCsv(t.tenantId, run.id), csv);
    await disk().put(artifactKeys.verificationAudit(t.tenantId, run.id), JSON.stringify(audit));
    await disk().put(artifactKeys.verificationSummary(t.tenantId, run.id), JSON.stringify(summary));
    const asCsv = await tms(['report', run.id, '--verification']);
    expect(asCsv.code).toBe(0);
    expect(asCsv.stdout).toBe(csv);
    const asJson = await tms(['report', run.id, '--verification', '--format', 'json']);
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual(audit);
    const two = await tms(['report', run.id, '--verification', '--id-map']);
    expect(two.code).toBe(2);
    expect(two.stderr).toBe('error: choose one of --failures, --preview, --id-map, --verification\n');
  });
});

describe('tms rollback', () => {
  it("previews a finished run's rollback to its end: the counts, what it cannot undo, the list saved", async () => {
    // Prepare: a finished run past its last phase, its preflight kept
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
      cursor: { phase: 8, index: 0 },
    });
    await writePreflight(disk(), { tenantId: t.tenantId, runId: run.id }, emptyPreflight());
    const file = join(home, 'rollback.csv');
    const csv = 'source_id,jira_key,would,reason\r\n1,MIG-1,delete,\r\n';
    const counts = { items: 1, deleted: 1, keptEdited: 0, keptFound: 0, keptOtherRun: 0, gone: 0 };

    // Act: the CLI starts the preview and follows it; the engine (played here) ends it
    const cli = spawnTms(['rollback', run.id, '--out', file], { api: `${app.url}/api`, home });
    await vi.waitFor(
      async () => expect((await app.store.runs.get(t.tenantId, run.id))?.status).toBe('ROLLING_BACK'),
      { timeout: 30_000 },
    );
    await disk().put(artifactKeys.rollbackList(t.tenantId, run.id, true), csv);
    await disk().put(
      artifactKeys.rollbackSummary(t.tenantId, run.id, true),
      JSON.stringify({ preview: true, ...counts }),
    );
    const deps = { store: app.store, journal: new StoreRunJournal(app.store), artifacts: disk() };
    await finalizeStep(deps as unknown as EngineDeps, { tenantId: t.tenantId, runId: run.id });
    const done = await cli.result;

    // Assess
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      [
        `Run ${run.id} COMPLETED: 1 of 1 issues would be deleted; kept: 0 edited after the run (or with a sub-task that stays), 0 found by the run, 0 of another run; 0 gone already`,
        `List saved to ${file}`,
        'A rollback does not undo:',
        ...NOT_UNDONE.map((line) => `  - ${line}`),
        `Roll back for real with: tms rollback ${run.id} --confirm`,
        '',
      ].join('\n'),
    );
    expect(await readFile(file, 'utf8')).toBe(csv);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 1 }]);

    // Both passes at once is a usage error
    const both = await tms(['rollback', run.id, '--preview', '--confirm']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('error: choose one of --preview and --confirm\n');
  });
});

describe('tms watch, output not a terminal', () => {
  const append = (run: Run, id: string, event: RunEvent) =>
    app.store.runs.appendEvent(run.tenantId, run.projectId, run.id, id, event);

  /** A run that ended in phase 3, its stream holding a log line, progress, the status change and done. */
  async function endedRun(): Promise<Run> {
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    expect(
      await app.store.runs.checkpoint(t.tenantId, run.id, {
        from: run.cursor,
        to: { phase: 3, index: 0 },
        progressPercent: 40,
        events: [
          { id: chunkEventId(3, 0, 0), event: { type: 'log', message: '#1 Task -> MIG-1' } },
          {
            id: chunkEventId(3, 0, 1),
            event: { type: 'progress', current: 5, total: 10, percent: 40, speed: 12.5 },
          },
        ],
      }),
    ).toBe(true);
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
    });
    await append(run, statusEventId(8, 0, 1), { type: 'status', status: 'completed' });
    await append(run, statusEventId(8, 0, 2), {
      type: 'done',
      stats: { created: 9, skipped: 1, failed: 0 },
    });
    return run;
  }

  it('prints plain lines: the phase, the log lines and status changes, then the result; no bar', async () => {
    const run = await endedRun();
    const res = await tms(['watch', run.id]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      [
        'phase: 3 hierarchy',
        '#1 Task -> MIG-1',
        'status: completed',
        `Run ${run.id} COMPLETED: created 9, skipped 1, failed 0`,
        '',
      ].join('\n'),
    );
  });

  it("starts at the run's newest events with --tail, and replays the whole log with --all", async () => {
    const run = await endedRun();
    // Four events: the log line, progress, the status change, done. The newest two are the status and done.
    const tail = await tms(['watch', run.id, '--tail', '2']);
    expect(tail.stderr).toBe('');
    expect(tail.stdout).toBe(
      [
        'phase: 3 hierarchy',
        'status: completed',
        `Run ${run.id} COMPLETED: created 9, skipped 1, failed 0`,
        '',
      ].join('\n'),
    );
    const all = await tms(['watch', run.id, '--all']);
    expect(all.stdout).toContain('#1 Task -> MIG-1');
    const refused = await tms(['watch', run.id, '--tail', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--tail takes a whole number from 1 to 1000');
  });

  it('follows a verification that begins while it watches, to the done the stream ends with', async () => {
    const run = await endedRun();
    await app.store.runs.setStatus(t.tenantId, run.id, ['COMPLETED'], 'VERIFYING');
    await append(run, statusEventId(9, 0, 3), { type: 'status', status: 'verifying' });
    const watching = spawnTms(['watch', run.id], { api: `${app.url}/api`, home });
    // The run's own `done` has been read and shown: what the verification tells comes after it.
    await vi.waitFor(() => expect(watching.stdout()).toContain('status: verifying'), { timeout: 30_000 });
    await append(run, statusEventId(10, 0, 4), {
      type: 'log',
      message: 'Verification done: 9 of 9 items fully faithful',
    });
    await app.store.runs.setStatus(t.tenantId, run.id, ['VERIFYING'], 'COMPLETED');
    await append(run, statusEventId(10, 0, 5), { type: 'status', status: 'completed' });
    await append(run, statusEventId(10, 0, 6), {
      type: 'done',
      stats: { created: 9, skipped: 1, failed: 0 },
    });
    const res = await watching.result;
    expect(res.stderr).toBe('');
    expect(res.stdout.split('\n').filter((l) => !l.startsWith('phase:'))).toEqual([
      '#1 Task -> MIG-1',
      'status: completed',
      'status: verifying',
      'Verification done: 9 of 9 items fully faithful',
      'status: completed',
      `Run ${run.id} COMPLETED: created 9, skipped 1, failed 0`,
      '',
    ]);
  });

  it('with --quiet prints only the result', async () => {
    const run = await endedRun();
    const res = await tms(['watch', run.id, '--quiet']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`Run ${run.id} COMPLETED: created 9, skipped 1, failed 0\n`);
  });
});
