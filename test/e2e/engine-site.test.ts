/**
 * Two projects migrating at once into one Jira site: two runs, each read from an Azure DevOps organization of its
 * own and written to its own project of one sandbox Jira site, started over the API and driven through the real
 * engine handler (its clients, its site share) invocation by invocation as the state machine would, both at the
 * same time, with DynamoDB Local holding the site's record. Both complete with nothing failed; the site's API
 * shows every source item exactly once in its own project and nothing in the other's; and the site's record
 * held both runs' leases at once (each run paced at its share while the other worked).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteState } from '../../functions/domain/site-share.ts';
import { createEngineHandler, type EngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import type { Store } from '../../functions/store/index.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { http } from '../support/http.ts';
import { readyProject } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';

const ITEMS = 30;
/** The site: project MIG and project OPS; its own Azure DevOps organization is the first run's source. */
const siteConfig = sandboxConfigFromEnv({
  SANDBOX_ITEMS: String(ITEMS),
  SANDBOX_SEED: '21',
  SANDBOX_JIRA_OTHER_PROJECT_KEYS: 'OPS',
});
/** The second run's Azure DevOps organization (its Jira sandbox is not used). */
const otherConfig = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '22' });
const dir = mkdtempSync(join(tmpdir(), 'tms-site-runs-'));
let site: RunningSandboxes;
let other: RunningSandboxes;
let app: TestApp;
let tenant: TestTenant;
let engine: EngineHandler;
/** Every answer of the site's record to a sync, in order: which leases it held. */
const siteAnswers: SiteState[] = [];

/** The app's store, its site record's syncs seen as they answer (the record itself is DynamoDB Local's). */
function observedStore(store: Store): Store {
  const siteLimits = store.siteLimits;
  const sync: typeof siteLimits.sync = async (siteId, change) => {
    const state = await siteLimits.sync(siteId, change);
    siteAnswers.push(state);
    return state;
  };
  return { ...store, siteLimits: Object.assign(Object.create(siteLimits), { sync }) };
}

beforeAll(async () => {
  site = await startSandboxes({ config: siteConfig, adoPort: 0, jiraPort: 0 });
  other = await startSandboxes({ config: otherConfig, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(site);
  allowSandboxPorts(other);
  app = await startTestApp({ ADO_BASE_URL: site.ado.url, DATA_DIR: dir });
  tenant = await app.createTenant('SiteRuns');
  const store = observedStore(app.store);
  engine = createEngineHandler({
    store: () => store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  setOrchestrator(new RecordingOrchestrator());
}, 120_000);

afterAll(async () => {
  setOrchestrator(undefined);
  await app?.close();
  await site?.stop();
  await other?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A READY project whose run is started over the API, from `ado` into the site's project `projectKey`. */
async function startRun(name: string, ado: RunningSandboxes, projectKey: string): Promise<string> {
  const projectId = await readyProject(app, tenant, name);
  const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
    token: tenant.admin.token,
    body: {
      type: 'FULL',
      enginePayload: {
        source: {
          org: `${ado.ado.url}/${siteConfig.ado.org}`,
          project: siteConfig.ado.project,
          pat: siteConfig.ado.pat,
        },
        target: {
          base_url: site.jira.url,
          email: siteConfig.jira.email,
          api_token: siteConfig.jira.apiToken,
          project_key: projectKey,
        },
        options: { migrate_attachments: false, migrate_comments: false },
      },
    },
  });
  expect(started.status).toBe(200);
  return started.body.id;
}

/** The engine invocations the state machine makes for one run, until it ends: its last answer. */
async function driveToEnd(runId: string): Promise<string> {
  let next: 'preflight' | 'batch' | 'finalize' = 'preflight';
  for (let call = 0; call < 200; call++) {
    const result = await engine(
      { action: next, tenantId: tenant.tenantId, runId, generation: 0 },
      { getRemainingTimeInMillis: () => 900_000 },
    );
    const answer = 'answer' in result ? result.answer : 'failed';
    if (['done', 'failed', 'cancelled', 'paused'].includes(answer)) return answer;
    next = answer === 'finalize' ? 'finalize' : 'batch';
  }
  throw new Error(`run ${runId} did not end in 200 engine calls`);
}

const AUTH = `Basic ${Buffer.from(`${siteConfig.jira.email}:${siteConfig.jira.apiToken}`).toString('base64')}`;

/** Every issue of a project as the site's JQL search answers it (page by page): its key and source label. */
async function projectIssues(projectKey: string): Promise<{ key: string; source: string | undefined }[]> {
  const issues: { key: string; fields: { labels: string[] } }[] = [];
  let nextPageToken: string | undefined;
  do {
    const page = await http(site.jira.url, 'POST', '/rest/api/3/search/jql', {
      headers: { Authorization: AUTH },
      body: { jql: `project = ${projectKey}`, fields: ['labels'], maxResults: 100, nextPageToken },
    });
    expect(page.status).toBe(200);
    issues.push(...page.body.issues);
    nextPageToken = page.body.nextPageToken;
  } while (nextPageToken);
  return issues.map((i) => ({ key: i.key, source: i.fields.labels.find((l) => l.startsWith('src-id-')) }));
}

describe('two projects migrating at once into one Jira site', () => {
  it('both complete, every item once in its own project, while the site held both runs at once', async () => {
    const mig = await startRun('Into MIG', site, 'MIG');
    const ops = await startRun('Into OPS', other, 'OPS');

    expect(await Promise.all([driveToEnd(mig), driveToEnd(ops)])).toEqual(['done', 'done']);

    for (const [runId, key] of [
      [mig, 'MIG'],
      [ops, 'OPS'],
    ] as const) {
      const status = await app.call('GET', `/api/migrations/${runId}/status`, { token: tenant.member.token });
      expect(status.body).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
      const created: number = status.body.successCount;
      expect(created).toBeGreaterThan(0);
      const issues = await projectIssues(key);
      // Every issue of the project is one of its run's items, keyed in the project, none twice.
      expect(issues).toHaveLength(created);
      expect(issues.filter((i) => !i.key.startsWith(`${key}-`))).toEqual([]);
      expect(issues.filter((i) => i.source === undefined)).toEqual([]);
      expect(new Set(issues.map((i) => i.source)).size).toBe(created);
      // The run's id map names exactly these issues.
      const idMap = await app.call('GET', `/api/migrations/${runId}/id-map`, { token: tenant.member.token });
      expect(idMap.status).toBe(200);
      expect(new Set(idMap.body.map((r: { targetKey: string }) => r.targetKey))).toEqual(
        new Set(issues.map((i) => i.key)),
      );
    }

    // The site's record: every sync of either run answered it, and some answered both runs' leases at once.
    expect(siteAnswers.length).toBeGreaterThanOrEqual(2);
    const leaseIds = new Set(siteAnswers.flatMap((s) => Object.keys(s.leases)));
    expect(leaseIds.size).toBe(2);
    expect(siteAnswers.filter((s) => Object.keys(s.leases).length === 2).length).toBeGreaterThan(0);
  }, 300_000);
});
