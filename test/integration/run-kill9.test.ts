/**
 * `npm start` killed with SIGKILL in the middle of a migration, then started again on the same data directory:
 * the run goes on from its last checkpoint (the restarted service says which, on the run's stream) to COMPLETED
 * with exactly one Jira issue per source item.
 *
 * The sandboxes are in-memory, so the ones `npm start` runs would forget Jira's issues with the process. They
 * run in this test process instead (the service with SANDBOX=off, ADO_BASE_URL at the Azure DevOps sandbox),
 * and outlive the kill. With SANDBOX=off no demo project is seeded: the demo owner creates one, and the start
 * body brings the sandboxes' credentials. The service is spawned in its own process group and the whole group
 * is killed, DynamoDB Local's Java process with it, as when a machine dies. The service runs from the bundle of
 * bin/local.ts the run's global setup makes (test/support/cli-bundles.ts: the same sources, no tsx transform).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import type { JiraIssueDump } from '../support/engine-harness.ts';
import { freePort } from '../support/global-setup.ts';
import { http } from '../support/http.ts';
import { prepareProjectOverHttp } from '../support/lifecycle.ts';
import { type StartedService, startService } from '../support/local-service.ts';
import { followRun, phaseOf, type RunFollower } from '../support/run-follower.ts';
import { sandboxControl, sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const ITEMS = 200;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '9' });
const dataDir = mkdtempSync(join(tmpdir(), 'tms-kill9-'));
let sandboxes: RunningSandboxes;
const services: StartedService[] = [];
const followers: RunFollower[] = [];

beforeAll(async () => {
  sandboxes = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sandboxes);
}, 60_000);

afterAll(async () => {
  for (const f of followers) f.close();
  for (const s of services) {
    if (s.proc.exitCode === null && s.proc.signalCode === null && s.proc.pid) {
      try {
        process.kill(-s.proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await s.exited;
    }
  }
  await sandboxes?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The service from the run's bundle of bin/local.ts, in its own process group (the whole group is killed). */
async function startGroup(env: Record<string, string>): Promise<StartedService> {
  const service = await startService(env, 'bundle', { detached: true });
  services.push(service);
  return service;
}

const jira = (method: string, path: string, body?: unknown) =>
  sandboxControl(sandboxes.jira.url, method, path, body);

describe('npm start killed mid-run', () => {
  it('resumes the run from its checkpoint after a restart: one Jira issue per item, none twice', async () => {
    const [port, dynamodbPort] = [await freePort(), await freePort()];
    const env = {
      PORT: String(port),
      DYNAMODB_PORT: String(dynamodbPort),
      DATA_DIR: dataDir,
      SANDBOX: 'off',
      ADO_BASE_URL: sandboxes.ado.url,
      STAGE: 'dev',
    };
    const base = `http://127.0.0.1:${port}`;
    const first = await startGroup(env);
    const password = /password for every demo login: (\S+)/.exec(first.output())?.[1] as string;

    const login = await http(base, 'POST', '/api/auth/login', {
      body: { email: 'owner@demo.example.com', password },
    });
    expect(login.status).toBe(200);
    const token = login.body.accessToken as string;
    const project = await http(base, 'POST', '/api/projects', {
      token,
      body: { name: 'Killed mid-run', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    expect(project.status).toBe(201);
    // The real path to READY (connect, scan, confirm the mappings, pay with the instant provider).
    await prepareProjectOverHttp(
      (method, path, options) => http(base, method, path, options ?? {}),
      token,
      project.body.id,
      sandboxCredentials(sandboxes, config),
    );

    // A slow Jira: the create phase (50 items a chunk) takes a few seconds, and the kill lands inside it.
    await jira('PUT', '/_sandbox/faults', { latencyMs: 80 });
    const started = await http(base, 'POST', `/api/migrations/project/${project.body.id}/start`, {
      token,
      body: sandboxStartBody(sandboxes, config),
    });
    expect(started.status).toBe(200);
    const runId = started.body.id as string;
    const watcher = followRun(base, runId, token);
    followers.push(watcher);
    await watcher.waitFor((m) => m.event === 'progress' && phaseOf(m) >= 2, 120_000, 'progress of phase 2+');

    if (!first.proc.pid) throw new Error('no pid');
    process.kill(-first.proc.pid, 'SIGKILL');
    await first.exited;
    expect(first.proc.signalCode).toBe('SIGKILL');
    watcher.close();
    // A progress event is written in its checkpoint's transaction: the last one seen is a checkpoint the run
    // had reached before it died.
    const lastSeen = watcher.messages.filter((m) => m.event === 'progress' && phaseOf(m) >= 2).at(-1);
    if (!lastSeen) throw new Error('no progress seen');
    const reached = { phase: phaseOf(lastSeen), index: JSON.parse(lastSeen.data).current as number };

    // Killed mid-run: Jira holds only part of the items.
    const before = (await jira('GET', '/_sandbox/jira/issues?fields=labels')) as JiraIssueDump[];
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(ITEMS);
    await jira('PUT', '/_sandbox/faults', { latencyMs: 0 });

    const second = await startGroup(env);
    // The token signed before the kill still works: the key lives in DATA_DIR.
    const deadline = Date.now() + 240_000;
    let status: Record<string, unknown> = {};
    for (;;) {
      const res = await http(base, 'GET', `/api/migrations/${runId}/status`, { token });
      expect(res.status).toBe(200);
      status = res.body;
      if (!['RUNNING', 'PENDING'].includes(status.status as string)) break;
      if (Date.now() > deadline) throw new Error(`run still ${status.status}:\n${second.output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status.status).toBe('COMPLETED');
    expect(status.totalItems).toBeGreaterThan(150);
    expect(status.successCount).toBe(status.totalItems);
    expect(status.failureCount).toBe(0);

    const issues = (await jira('GET', '/_sandbox/jira/issues?fields=labels')) as JiraIssueDump[];
    const labels = issues.flatMap((i) => (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')));
    expect(labels).toHaveLength(status.totalItems as number);
    expect(new Set(labels).size).toBe(labels.length);
    expect(issues).toHaveLength(labels.length);
    const idMap = await http(base, 'GET', `/api/migrations/${runId}/id-map`, { token });
    expect(idMap.status).toBe(200);
    expect(new Set(idMap.body.map((r: { sourceId: number }) => `src-id-${r.sourceId}`))).toEqual(
      new Set(labels),
    );

    // The stream, replayed from the start after the restart, ends with the run completed.
    const replay = followRun(base, runId, token);
    followers.push(replay);
    const done = await replay.done;
    expect(done.stats).toEqual({ created: status.totalItems, skipped: 0, failed: 0 });
    // The restarted service said where the run went on from: its last checkpoint, at or after the one seen
    // before the kill, not the start.
    const resumed = replay.messages
      .filter((m) => m.event === 'log')
      .map((m) =>
        /resumes from its last checkpoint, phase (\d+) \(\w+\) at item (\d+)/.exec(
          JSON.parse(m.data).message,
        ),
      )
      .filter((m) => m !== null);
    expect(resumed).toHaveLength(1);
    const from = { phase: Number(resumed[0]?.[1]), index: Number(resumed[0]?.[2]) };
    expect(from.phase).toBeGreaterThanOrEqual(reached.phase);
    if (from.phase === reached.phase) expect(from.index).toBeGreaterThanOrEqual(reached.index);
    expect(from.phase > 2 || from.index > 0).toBe(true);

    second.proc.kill('SIGTERM');
    await second.exited;
    expect(second.proc.exitCode).toBe(0);
  }, 420_000);
});
