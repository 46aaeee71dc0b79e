/**
 * The `tms` CLI as a user runs it, against the real local gateway, with a recording orchestrator in place of Step
 * Functions: its program (bin/cli/main.ts) run in this process with the environment and output each command is
 * given (test/support/cli.ts); the first login starts bin/tms.js, the npm bin, as a child. The gateway runs in
 * this process too, so the test can move the service clock and write run events into the store while the CLI
 * listens.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { chunkEventId, type RunEvent, statusEventId } from '../../functions/domain/run-events.ts';
import { RUN_TRANSITIONS } from '../../functions/domain/run-lifecycle.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { clock } from '../../functions/platform/clock.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { type CliResult, runTms, spawnTms } from '../support/cli.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

const PAT = 'ado-pat-SECRET-cli-5b7e';
const API_TOKEN = 'jira-token-SECRET-cli-c0de';

let app: TestApp;
let t: TestTenant;
let home: string;
let orch: RecordingOrchestrator;

const tms = (args: string[], env: Record<string, string> = {}, api = `${app.url}/api`): Promise<CliResult> =>
  runTms(args, { api, home, env });

const login = (email = t.admin.email) => tms(['login', '--email', email], { TMS_PASSWORD: TEST_PASSWORD });
const tokenFile = () => join(home, 'credentials.json');
const readTokens = async () => JSON.parse(await readFile(tokenFile(), 'utf8'));

async function newProject(): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name: 'CLI project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  // Paid, by arrangement: the flow to READY is project-lifecycle.test.ts's.
  await markProjectStatus(app.store, t.tenantId, res.body.id, 'READY');
  return res.body.id;
}

const trackerArgs = (over: Record<string, string> = {}) =>
  Object.entries({
    '--ado-org': 'contoso',
    '--ado-project': 'Fabrikam',
    '--ado-pat': PAT,
    '--jira-url': 'https://contoso.atlassian.net',
    '--jira-email': 'migrator@contoso.example.com',
    '--jira-token': API_TOKEN,
    '--jira-key': 'mig',
    ...over,
  }).flat();

beforeAll(async () => {
  app = await startTestApp();
  t = await app.createTenant('Cli');
});
afterAll(async () => app.close());
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tms-cli-'));
  orch = new RecordingOrchestrator();
  setOrchestrator(orch);
});
afterEach(async () => {
  setOrchestrator(undefined);
  vi.restoreAllMocks();
  await rm(home, { recursive: true, force: true });
});

describe('tms login', () => {
  it('stores the access and refresh tokens in a 0600 file, never the password (the npm bin, as installed)', async () => {
    // The other commands run the same program in this process (test/support/cli.ts).
    const res = await runTms(['login', '--email', t.admin.email], {
      api: `${app.url}/api`,
      home,
      env: { TMS_PASSWORD: TEST_PASSWORD },
      npmBin: true,
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Logged in as ${t.admin.email}`);
    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
    const text = await readFile(tokenFile(), 'utf8');
    expect(text).not.toContain(TEST_PASSWORD);
    expect(JSON.parse(text)).toEqual({
      api: `${app.url}/api`,
      email: t.admin.email,
      accessToken: expect.stringMatching(/^ey/),
      refreshToken: expect.any(String),
    });
  });

  it('refuses a wrong password with exit 4 and writes nothing', async () => {
    const res = await tms(['login', '--email', t.admin.email], { TMS_PASSWORD: 'wrong-password-here' });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('Invalid credentials');
    await expect(stat(tokenFile())).rejects.toThrow(/ENOENT/);
  });

  it('without a login, an API command exits 4 and says to log in', async () => {
    const res = await tms(['project', 'list']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('Not logged in');
  });
});

describe('tms project', () => {
  it('creates a project and lists it with --json', async () => {
    await login();
    const created = await tms(['--json', 'project', 'create', 'Migrated from the CLI']);
    expect(created.code).toBe(0);
    const project = JSON.parse(created.stdout);
    expect(project).toMatchObject({
      name: 'Migrated from the CLI',
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
      status: 'DRAFT',
    });
    const list = await tms(['project', 'list', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toContainEqual(expect.objectContaining({ id: project.id }));
    const text = await tms(['project', 'list']);
    expect(text.stdout).toMatch(new RegExp(`${project.id}\\s+Migrated from the CLI\\s+DRAFT`));
  });
});

describe('tms project delivery', () => {
  it('shows the mode with its trade-off, sets Jira import with a batch size, and back to REST', async () => {
    await login();
    const id = await newProject();
    const shown = await tms(['project', 'delivery', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe('Delivery: rest');
    expect(shown.stdout).toContain('Jira records the service account as author');

    const set = await tms(['project', 'delivery', id, '--mode', 'jira-import', '--batch-size', '300']);
    expect(set.code).toBe(0);
    expect(set.stdout.split('\n')[0]).toBe('Delivery: jira-import, 300 issues per file');
    expect(set.stdout).toContain("About 1,500 issues an hour per file on Atlassian's side");
    expect(set.stdout).toContain('a Jira administrator uploads each file');
    const read = await app.call('GET', `/api/projects/${id}`, { token: t.member.token });
    expect(read.body).toMatchObject({ deliveryMode: 'jira-import', importBatchSize: 300 });

    // A size alone keeps the mode; --json prints the API's answer.
    const size = await tms(['--json', 'project', 'delivery', id, '--batch-size', '1500']);
    expect(JSON.parse(size.stdout)).toEqual({
      projectId: id,
      deliveryMode: 'jira-import',
      importBatchSize: 1500,
    });
    const back = await tms(['--json', 'project', 'delivery', id, '--mode', 'rest']);
    expect(JSON.parse(back.stdout)).toEqual({ projectId: id, deliveryMode: 'rest', importBatchSize: 1500 });
  });

  it("a bad --mode or --batch-size is a usage error (exit 2); a size out of bounds is the API's 400 (exit 3)", async () => {
    await login();
    const id = await newProject();
    const mode = await tms(['project', 'delivery', id, '--mode', 'csv']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--mode must be one of: rest, jira-import');
    const size = await tms(['project', 'delivery', id, '--batch-size', '1.5']);
    expect(size.code).toBe(2);
    expect(size.stderr).toContain('--batch-size must be a whole number');
    const big = await tms(['project', 'delivery', id, '--mode', 'jira-import', '--batch-size', '5000']);
    expect(big.code).toBe(3);
    expect(big.stderr).toContain('error: VALIDATION_FAILED (HTTP 400)');
    expect(big.stderr).toContain('importBatchSize must be at most 1500');
    const read = await app.call('GET', `/api/projects/${id}`, { token: t.member.token });
    expect(read.body).toMatchObject({ deliveryMode: 'rest', importBatchSize: 1500 });
  });
});

describe('tms start, status, pause, cancel', () => {
  it('starts a run with the options as given; the orchestrator gets no secret', async () => {
    await login();
    const projectId = await newProject();
    const res = await tms([
      'start',
      projectId,
      '--json',
      '--type',
      'full',
      ...trackerArgs(),
      '--no-comments',
      '--types',
      'Bug,Task',
      '--type-override',
      'Bug=Defect',
      '--type-override',
      'Epic=Initiative',
      '--state-override',
      'Resolved=Done',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const run = JSON.parse(res.stdout);
    expect(run).toMatchObject({
      projectId,
      status: expect.stringMatching(/^(PENDING|RUNNING)$/),
      type: 'FULL',
    });
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: run.id, generation: 0 }]);
    expect(JSON.stringify(orch.starts)).not.toMatch(/SECRET/);
    expect(res.stdout).not.toMatch(/SECRET/);

    // The same request again is the same run (the API's idempotent start): proof the options went as sent.
    const again = await tms([
      'start',
      projectId,
      '--json',
      '--type',
      'FULL',
      ...trackerArgs(),
      '--no-comments',
      '--types',
      'Task,Bug',
      '--state-override',
      'Resolved=Done',
      '--type-override',
      'Epic=Initiative',
      '--type-override',
      'Bug=Defect',
    ]);
    expect(JSON.parse(again.stdout).id).toBe(run.id);
    const different = await tms([
      'start',
      projectId,
      '--type',
      'FULL',
      ...trackerArgs(),
      '--types',
      'Bug,Task',
    ]);
    expect(different.code).toBe(3);
    expect(different.stderr).toContain('MIGRATION_ALREADY_RUNNING');

    const status = await tms(['status', run.id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Run ${run.id} ${run.status} 0%`);
    expect(status.stdout).not.toContain('Paused:');
    // Paused by the service (here: waiting for a Jira import), the status says why.
    const reason =
      'Waiting for the Jira import of batch 1 of 2: import jira-import-x-1.json, then resume the run';
    expect(
      await new StoreRunJournal(app.store).move(
        (await app.store.runs.get(t.tenantId, run.id)) as Run,
        RUN_TRANSITIONS.pause,
        { fields: { control: 'pause', pauseReason: reason } },
      ),
    ).toBe(true);
    expect((await tms(['status', run.id])).stdout).toContain(`\nPaused: ${reason}\n`);
    const paused = await tms(['pause', run.id, '--json']);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ id: run.id, status: 'PAUSED' });
    const cancelled = await tms(['cancel', run.id]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout.trim()).toBe(`Run ${run.id} CANCELLED`);
    expect(orch.stops).toEqual([run.id]);
    const after = await tms(['status', run.id, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ id: run.id, status: 'CANCELLED' });
  });

  it('a usage error exits 2 with a clear message and calls nothing', async () => {
    await login();
    const projectId = await newProject();
    const badType = await tms(['start', projectId, '--type', 'EVERYTHING', ...trackerArgs()]);
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('--type must be one of FULL, SAMPLE, INCREMENTAL');
    const missing = await tms(['start', projectId, '--type', 'FULL', '--ado-org', 'contoso']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --ado-project, --jira-url, --jira-key');
    const badOverride = await tms([
      'start',
      projectId,
      '--type',
      'FULL',
      ...trackerArgs(),
      '--type-override',
      'Bug',
    ]);
    expect(badOverride.code).toBe(2);
    expect(badOverride.stderr).toContain('--type-override expects SOURCE=TARGET, got "Bug"');
    const unknown = await tms(['status']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("missing required argument 'runId'");
    expect(orch.starts).toEqual([]);
  });

  it("an API validation error prints the API's messages one per line and exits 3", async () => {
    await login();
    const projectId = await newProject();
    const res = await tms([
      'start',
      projectId,
      '--type',
      'SAMPLE',
      ...trackerArgs({ '--jira-email': 'not-an-email', '--jira-url': 'not a url' }),
    ]);
    expect(res.code).toBe(3);
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: VALIDATION_FAILED (HTTP 400)');
    expect(lines).toContain('  enginePayload.target.email must be a valid e-mail address');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(res.stderr).not.toMatch(/SECRET/);
    expect(orch.starts).toEqual([]);
  });
});

describe('token refresh', () => {
  it('on TOKEN_EXPIRED refreshes once with the stored refresh token, saves the new pair and retries', async () => {
    await login();
    const before = await readTokens();
    // Sixteen minutes on: the access token (15 minutes) has expired, the refresh token (30 days) has not.
    const later = new Date(Date.now() + 16 * 60_000);
    vi.spyOn(clock, 'now').mockImplementation(() => later);
    const expired = await app.call('GET', '/api/projects', { token: before.accessToken });
    expect(expired.body.code).toBe('TOKEN_EXPIRED');

    const res = await tms(['project', 'list', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(Array.isArray(JSON.parse(res.stdout))).toBe(true);
    const after = await readTokens();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
    expect((await app.call('GET', '/api/projects', { token: after.accessToken })).status).toBe(200);
  });

  it('a refused refresh is an auth error (exit 4) asking to log in again', async () => {
    await login();
    const tokens = await readTokens();
    await writeFile(tokenFile(), JSON.stringify({ ...tokens, refreshToken: 'not-a-real-refresh-token' }), {
      mode: 0o600,
    });
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(Date.now() + 16 * 60_000));
    const res = await tms(['project', 'list']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('Session expired, log in again');
  });
});

describe('tms watch', () => {
  const done: RunEvent = { type: 'done', stats: { created: 9, skipped: 1, failed: 0 } };
  const append = (run: Run, id: string, event: RunEvent) =>
    app.store.runs.appendEvent(run.tenantId, run.projectId, run.id, id, event);

  it('follows a finished run to done and prints the stats as JSON', async () => {
    await login();
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    await app.store.runs.setStatus(t.tenantId, run.id, ['PENDING', 'RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
    });
    await append(run, chunkEventId(2, 0, 0), { type: 'log', message: '#1 Task -> MIG-1' });
    await append(run, chunkEventId(2, 0, 1), {
      type: 'progress',
      current: 10,
      total: 10,
      percent: 100,
      speed: 6,
    });
    await append(run, statusEventId(8, 0, 1), { type: 'status', status: 'completed' });
    await append(run, statusEventId(8, 0, 2), done);

    const res = await tms(['watch', run.id, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      runId: run.id,
      status: 'COMPLETED',
      stats: { created: 9, skipped: 1, failed: 0 },
      lastEventId: statusEventId(8, 0, 2),
      reconnects: 0,
    });
  });

  it('reconnects with Last-Event-ID after a dropped connection and misses nothing', async () => {
    await login();
    const run = await createRun(app.store, t.tenantId, await newProject(), 'FULL');
    const firstId = chunkEventId(2, 0, 0);
    await append(run, firstId, { type: 'log', message: '#1 Task -> MIG-1' });

    // A proxy in front of the gateway, so the test can cut a stream connection the way a network does.
    const streamRequests: (string | undefined)[] = [];
    const streamSockets: Socket[] = [];
    const proxy: Server = createServer((req, res) => {
      if (req.url?.includes('/stream')) {
        streamRequests.push(req.headers['last-event-id'] as string | undefined);
        streamSockets.push(req.socket);
      }
      const up = request(
        new URL(req.url ?? '/', app.url),
        { method: req.method, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyApi = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api`;
    try {
      const watching = spawnTms(['watch', run.id], { api: proxyApi, home });
      // Cut only once the CLI has shown the first event: it has its id by then.
      await vi.waitFor(() => expect(watching.stdout()).toContain('#1 Task -> MIG-1'), {
        timeout: 30_000,
        interval: 50,
      });
      streamSockets[0]?.destroy();
      // The rest of the run happens once the CLI has come back.
      await vi.waitFor(() => expect(streamRequests.length).toBe(2), { timeout: 30_000, interval: 50 });
      await append(run, chunkEventId(2, 1, 0), { type: 'log', message: '#2 Bug -> MIG-2' });
      await append(run, chunkEventId(2, 1, 1), {
        type: 'progress',
        current: 2,
        total: 2,
        percent: 100,
        speed: 4,
      });
      await append(run, statusEventId(8, 0, 1), { type: 'status', status: 'completed' });
      await append(run, statusEventId(8, 0, 2), done);
      const res = await watching.result;
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      expect(streamRequests).toEqual([undefined, firstId]);
      const lines = res.stdout.trimEnd().split('\n');
      expect(lines.filter((l) => l === '#1 Task -> MIG-1')).toHaveLength(1);
      expect(lines).toContain('#2 Bug -> MIG-2');
      expect(lines).toContain('status: completed');
      expect(lines.at(-1)).toBe(`Run ${run.id} COMPLETED: created 9, skipped 1, failed 0`);
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });
});
