/**
 * A run delivered by Jira's importer through the API, as an admin drives it: the test app's gateway, the local
 * orchestrator (the ASL state machine in this process), the engine over the sandbox trackers. The project is set
 * to `jira-import` (PUT .../delivery), the start is accepted, the run pauses per batch with its reason on
 * `/status` and on its SSE stream, the admin downloads each file from the API, imports it in Jira (the sandbox's
 * importer, as a site administrator) and resumes through the resume route, a new execution each time; the run
 * completes with one issue per item, verified at its end against what its files carried (every item faithful),
 * and verified again on demand through the route; a batch's file downloaded again after that is refused (410).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEngineHandler } from '../../functions/engine/handler.ts';
import { clock } from '../../functions/platform/clock.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { type SandboxConfig, sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import type { JiraIssueDump } from '../support/engine-harness.ts';
import { readyProject } from '../support/lifecycle.ts';
import { followRun, type RunFollower } from '../support/run-follower.ts';
import { sandboxControl, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const ITEMS = 20;
const BATCH = 10;
const ADMIN = `Basic ${Buffer.from('site.admin@sandbox.example.com:admin-token').toString('base64')}`;
const dir = mkdtempSync(join(tmpdir(), 'tms-import-lifecycle-'));
let sandboxes: RunningSandboxes;
let config: SandboxConfig;
let app: TestApp;
let tenant: TestTenant;
let orchestrator: LocalOrchestrator;
let follower: RunFollower | undefined;

beforeAll(async () => {
  // The engine's log lines are not this test's subject.
  for (const m of ['log', 'info', 'debug'] as const) vi.spyOn(console, m).mockImplementation(() => {});
  config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '7' });
  sandboxes = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sandboxes);
  app = await startTestApp({ ADO_BASE_URL: sandboxes.ado.url, DATA_DIR: dir, STREAM_POLL_MS: '100' });
  tenant = await app.createTenant('ImportLifecycle');
  const engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  orchestrator = new LocalOrchestrator({ handler: engine });
  setOrchestrator(orchestrator);
  await sandboxControl(sandboxes.jira.url, 'PUT', '/_sandbox/jira/accounts', {
    email: 'site.admin@sandbox.example.com',
    apiToken: 'admin-token',
    projectAdmin: true,
    siteAdmin: true,
    displayName: 'Site Admin',
  });
}, 120_000);

afterAll(async () => {
  follower?.close();
  orchestrator?.close();
  setOrchestrator(undefined);
  await app?.close();
  await sandboxes?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const status = async (runId: string) =>
  (await app.call('GET', `/api/migrations/${runId}/status`, { token: tenant.member.token })).body;

async function settled(runId: string): Promise<{ status: string; pauseReason: string | null }> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const s = await status(runId);
    if (['PAUSED', 'COMPLETED', 'PARTIAL', 'FAILED'].includes(s.status)) return s;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${s.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The admin's import in Jira's settings (the sandbox's stand-in), until the job has finished. */
async function importInJira(text: string): Promise<void> {
  const base = sandboxes.jira.url;
  const res = await fetch(`${base}/_sandbox/jira/import/json`, {
    method: 'POST',
    headers: { Authorization: ADMIN, 'Content-Type': 'application/json' },
    body: text,
  });
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    const job = await fetch(`${base}/_sandbox/jira/import/json/${id}`, { headers: { Authorization: ADMIN } });
    if (((await job.json()) as { status: string }).status === 'finished') return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a jira-import run through the API', () => {
  it('pauses per batch with its reason, takes each file the admin imports, resumes and completes', async () => {
    // Prepare: a ready project delivered by Jira import, 10 issues a file.
    const projectId = await readyProject(app, tenant, 'Imported');
    const set = await app.call('PUT', `/api/projects/${projectId}/delivery`, {
      token: tenant.admin.token,
      body: { deliveryMode: 'jira-import', importBatchSize: BATCH },
    });
    expect(set.status).toBe(200);

    // Act: the start is accepted, and the run pauses on batch 1.
    // With attachments (the files carry them, as links the download makes), and verified at its end (the API's
    // default; the sandboxes' start body turns it off for other tests).
    const body = sandboxStartBody(sandboxes, config);
    body.enginePayload.options.migrate_attachments = true;
    body.enginePayload.options.verify = true;
    const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: tenant.admin.token,
      body,
    });
    expect(started.status).toBe(200);
    const runId = started.body.id as string;
    follower = followRun(app.url, runId, tenant.member.token);
    let s = await settled(runId);
    const list = await app.call('GET', `/api/migrations/${runId}/import-files`, {
      token: tenant.admin.token,
    });
    expect(list.status).toBe(200);
    const total = (list.body.files as unknown[]).length;
    expect(total).toBeGreaterThanOrEqual(2);
    expect(s).toMatchObject({
      status: 'PAUSED',
      pauseReason: `Waiting for the Jira import of batch 1 of ${total}: import jira-import-${runId.toLowerCase()}-1.json (Jira settings > System > External System Import > JSON), then resume the run`,
    });
    // The stream tells it: the line, then the paused status.
    await follower.waitFor(
      (m) => m.data.includes(`Run paused: Waiting for the Jira import of batch 1 of ${total}`),
      10_000,
      'the pause line',
    );

    // Each file is written when the run reaches its batch: the list says which are not written yet.
    expect
      .soft((list.body.files as { number: number; written: boolean }[]).map((f) => f.written))
      .toEqual(Array.from({ length: total }, (_, i) => i === 0));
    const earlier = new Set<string>();
    let browsed = 0;
    let linked = 0;
    for (let n = 1; n <= total; n++) {
      expect(s.pauseReason).toMatch(new RegExp(`^Waiting for the Jira import of batch ${n} of ${total}:`));
      const file = await app.call('GET', `/api/migrations/${runId}/import-files/${n}`, {
        token: tenant.admin.token,
      });
      expect(file.status).toBe(200);
      // A reference to an item of a batch already imported is its issue's /browse/KEY card; only items of this
      // batch or a later one are linked to their label search.
      const searched = [...file.text.matchAll(/labels%20%3D%20src-id-(\d+)/g)].map((m) => m[1] as string);
      expect.soft(searched.filter((id) => earlier.has(id))).toEqual([]);
      browsed += [...file.text.matchAll(/\/browse\/[A-Z]+-\d+\|smart-link\]/g)].length;
      const parsed = JSON.parse(file.text) as {
        projects: { issues: { externalId: string; attachments?: { uri: string }[] }[] }[];
      };
      const issuesOfFile = parsed.projects[0]?.issues ?? [];
      for (const i of issuesOfFile) earlier.add(i.externalId);
      // Each attachment's uri is a link to the run's own copy, signed and expiring after the import window
      // (24 h by default); an altered or expired one is refused.
      const uris = issuesOfFile.flatMap((i) => (i.attachments ?? []).map((a) => a.uri));
      for (const uri of uris) {
        expect(uri.startsWith(`${app.url}/api/artifact-links/`), uri).toBe(true);
        const expires = Number(new URL(uri).searchParams.get('expires'));
        expect(Math.abs(expires - (Date.now() / 1000 + 24 * 3600))).toBeLessThan(600);
      }
      const [uri] = uris;
      if (uri) {
        linked++;
        expect((await fetch(uri)).status).toBe(200);
        const tampered = new URL(uri);
        tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 3600));
        const refused = await fetch(tampered);
        expect(refused.status).toBe(403);
        expect(await refused.text()).not.toContain('tenants/');
        const later = vi.spyOn(clock, 'now').mockReturnValue(new Date(Date.now() + 25 * 3600_000));
        try {
          expect((await fetch(uri)).status).toBe(403);
        } finally {
          later.mockRestore();
        }
      }
      await importInJira(file.text);
      const resumed = await app.call('POST', `/api/migrations/${runId}/resume`, {
        token: tenant.admin.token,
      });
      expect(resumed.status).toBe(200);
      expect(resumed.body).toEqual({ id: runId, status: 'RUNNING' });
      s = await settled(runId);
    }

    // Assess: completed, one issue per item, each resume a new execution.
    expect(browsed).toBeGreaterThan(0);
    expect(linked).toBeGreaterThan(0);
    expect(s.status).toBe('COMPLETED');
    expect(s.pauseReason).toBeNull();
    const issues = (await sandboxControl(
      sandboxes.jira.url,
      'GET',
      '/_sandbox/jira/issues',
    )) as JiraIssueDump[];
    const labels = issues.flatMap((i) => (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')));
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toHaveLength((await status(runId)).successCount);
    expect(orchestrator.executions(runId).map((e) => e.generation)).toEqual(
      Array.from({ length: total + 1 }, (_, i) => i),
    );
    // The run verified itself at its end (the API's default), against what its files carried: every item
    // faithful, told on the stream with its end.
    const items = (await status(runId)).successCount as number;
    expect((await status(runId)).verification).toEqual({
      itemsChecked: items,
      fullyFaithful: items,
      differencesByField: {},
      itemsWithNotes: expect.any(Number),
      unverified: 0,
    });
    await follower.waitFor(
      (m) => m.data.includes(`Verification done: ${items} of ${items} items fully faithful`),
      10_000,
      'the verification line',
    );

    // Verify again (on demand, the route): the run VERIFYING on its next execution, then back COMPLETED.
    const again = await app.call('POST', `/api/migrations/${runId}/verification`, {
      token: tenant.member.token,
    });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id: runId, status: 'VERIFYING' });
    for (let i = 0; i < 900 && (await status(runId)).status === 'VERIFYING'; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await status(runId)).status).toBe('COMPLETED');
    const summary = await app.call('GET', `/api/migrations/${runId}/verification`, {
      token: tenant.member.token,
    });
    expect(summary.body).toMatchObject({ itemsChecked: items, fullyFaithful: items, differencesByField: {} });
    expect(orchestrator.executions(runId)).toHaveLength(total + 2);

    // A batch's file downloaded again once the run has found it in Jira: refused (its copies are removed, and an
    // import of it would make second copies), the whole answer saying so.
    const redownload = await app.call('GET', `/api/migrations/${runId}/import-files/1`, {
      token: tenant.admin.token,
    });
    expect(redownload.status).toBe(410);
    expect(redownload.body).toEqual({
      statusCode: 410,
      error: 'Gone',
      code: 'IMPORT_BATCH_IMPORTED',
      message: `Batch 1 of run ${runId} is imported and verified in Jira: its file's attachment copies are removed, and importing it again would make a second copy of each issue`,
    });
  }, 180_000);
});
