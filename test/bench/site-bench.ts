import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import type { AdoLimitSettings } from '../../local/sandbox/common/limits/ado.ts';
import type { JiraLimitSettings } from '../../local/sandbox/common/limits/jira.ts';
import { clientOf } from '../../local/sandbox/common/sandbox-app.ts';
import { drivePhases, ENGINE_MEMORY_MB, openBenchTable, type PhaseSpan } from './engine-migration.ts';
import {
  awsCostPer10k,
  countArtifacts,
  type LogEntry,
  PRICES,
  type SandboxSettings,
  siteFloor,
} from './floors.ts';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.ts';

const { keys } = await import('../../functions/store/keys.ts');
const { sandboxConfigFromEnv } = await import('../../local/sandbox/common/config.ts');
const { createTenant } = await import('../../functions/services/operator.ts');
const { createProject } = await import('../../functions/services/projects.ts');
const { createRun } = await import('../support/runs.ts');
const { finalizeStep, runBatch } = await import('../../functions/engine/runner.ts');
const { StoreRunJournal } = await import('../../functions/adapters/run-journal.ts');
const { PLUGIN_DEFINITIONS } = await import('../../functions/plugins/index.ts');
const { DiskArtifactStore } = await import('../../functions/store/artifacts.ts');
const { AdoClient } = await import('../../functions/trackers/ado/client.ts');
const { JiraClient } = await import('../../functions/trackers/jira/client.ts');
const { basicAuth } = await import('../../functions/trackers/http.ts');
const { leaseIdOf, SiteShare, siteIdOf } = await import('../../functions/trackers/site-share.ts');

const ITEMS = Number(process.env.BENCH_ITEMS ?? 700);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PROFILE = (process.env.BENCH_PROFILE ?? 'realistic') as 'realistic' | 'off';
const SHARING = process.env.BENCH_SITE_SHARING !== 'off';
const SEED = '99';
const TABLE = 'bench-site';
/** The engine Lambda's timeout (lib/engine.ts): each engine call's budget. */
const INVOCATION_MS = 900_000;
const PROJECT_KEYS = ['ALPHA', 'BRAVO', 'CHARLIE', 'DELTA', 'ECHO', 'FOXTROT'].slice(0, RUNS);
const CORE = new Set([2, 3, 4, 5, 6, 7]);
const NAMES: Record<number, string> = {
  2: 'create',
  3: 'hierarchy',
  4: 'links',
  5: 'attachments',
  6: 'transitions',
  7: 'comments',
};

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';

const { dynamo, raw, usage, store } = await openBenchTable(TABLE);
const config = sandboxConfigFromEnv({});

// One Jira site holding every run's project (no ADO items: its Azure DevOps side is idle), and an Azure DevOps
// organization per run, each in a process of its own (the trackers run elsewhere).
const processes: SandboxProcess[] = [];
const site = await startSandboxProcess({
  SANDBOX_ITEMS: '0',
  SANDBOX_SEED: SEED,
  SANDBOX_PROFILE: PROFILE,
  SANDBOX_JIRA_PROJECT_KEY: PROJECT_KEYS[0] ?? 'ALPHA',
  SANDBOX_JIRA_OTHER_PROJECT_KEYS: PROJECT_KEYS.slice(1).join(','),
});
processes.push(site);
const organizations: SandboxProcess[] = [];
for (const _ of PROJECT_KEYS) {
  const org = await startSandboxProcess({
    SANDBOX_ITEMS: String(ITEMS),
    SANDBOX_SEED: SEED,
    SANDBOX_PROFILE: PROFILE,
  });
  organizations.push(org);
  processes.push(org);
}
for (const p of processes) allowSandboxPorts(p);
const jiraUrl = site.jira.url;
const control = (url: string, method: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
await control(jiraUrl, 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 ** 3 });
const settingsOf = async <L>(url: string) =>
  (await (await control(url, 'GET', '/_sandbox/limits')).json()) as SandboxSettings<L>;
const jiraSettings = await settingsOf<JiraLimitSettings>(jiraUrl);
const adoSettings = await settingsOf<AdoLimitSettings>(organizations[0]?.ado.url ?? '');

const tenant = await createTenant(store, { name: 'Site bench' });
const dir = mkdtempSync(join(tmpdir(), 'tms-site-bench-'));

interface RunSetup {
  key: string;
  adoUrl: string;
  email: string;
  token: string;
  client: string;
  projectId: string;
  runId: string;
}

const setups: RunSetup[] = [];
for (const [i, key] of PROJECT_KEYS.entries()) {
  // Each run connects with an account of its own: the site's request log tells the runs apart by it.
  const email = `migrator-${key.toLowerCase()}@sandbox.example.com`;
  const token = `site-bench-token-${i}`;
  await control(jiraUrl, 'PUT', '/_sandbox/jira/accounts', { email, apiToken: token, projectAdmin: true });
  const project = await createProject(store, tenant.id, {
    name: `Project ${key}`,
    sourceSystem: 'AZURE_DEVOPS',
    targetSystem: 'JIRA_CLOUD',
  });
  const run = await createRun(store, tenant.id, project.id, 'FULL', {});
  setups.push({
    key,
    adoUrl: organizations[i]?.ado.url ?? '',
    email,
    token,
    client: clientOf(basicAuth(email, token)),
    projectId: project.id,
    runId: run.id,
  });
}

interface RunResult {
  setup: RunSetup;
  spans: PhaseSpan[];
  ms: number;
  syncs: number;
}

/** One run's engine loop; every engine call makes its clients and joins the site as the handler does. */
async function drive(setup: RunSetup): Promise<RunResult> {
  const ref = { tenantId: tenant.id, runId: setup.runId };
  const spans: PhaseSpan[] = [];
  let syncs = 0;
  const artifacts = countArtifacts(new DiskArtifactStore(join(dir, setup.key)), usage);
  const invoke = async <T>(
    transitions: number,
    work: (deps: Parameters<typeof runBatch>[0], remainingMs: () => number) => Promise<T>,
    last = false,
  ): Promise<T> => {
    const began = performance.now();
    usage.invocations++;
    usage.transitions += transitions;
    const source = new AdoClient({
      organization: `${setup.adoUrl}/${config.ado.org}`,
      project: config.ado.project,
      token: config.ado.pat,
    });
    const target = new JiraClient({ baseUrl: jiraUrl, email: setup.email, token: setup.token });
    const share = SHARING
      ? new SiteShare(store.siteLimits, siteIdOf(jiraUrl), leaseIdOf(tenant.id, setup.runId))
      : undefined;
    await share?.join(target.http);
    try {
      const deps = {
        store,
        journal: new StoreRunJournal(store),
        artifacts,
        source,
        target,
        indexLagMs: 0,
        pluginDefinitions: PLUGIN_DEFINITIONS,
      };
      return await work(deps, () => INVOCATION_MS - (performance.now() - began));
    } finally {
      if (last) await share?.leave();
      else share?.stop();
      syncs += share?.syncs ?? 0;
      usage.engineMs += performance.now() - began;
    }
  };
  const started = performance.now();
  usage.transitions += 4;
  await drivePhases(
    {
      phase: async () => (await store.runs.get(tenant.id, setup.runId))?.cursor.phase ?? 0,
      batch: () => invoke(4, (deps, remainingMs) => runBatch(deps, ref, remainingMs, setup.key)),
      finalize: () => invoke(3, (deps) => finalizeStep(deps, ref), true),
      async afterPhase(span) {
        spans.push(span);
      },
    },
    Number.POSITIVE_INFINITY,
  );
  return { setup, spans, ms: performance.now() - started, syncs };
}

console.log(
  `\nSite benchmark: ${RUNS} runs of ${ITEMS} items at once into one Jira site (projects ${PROJECT_KEYS.join(', ')}), sandbox profile ${PROFILE}, site sharing ${SHARING ? 'on' : 'off'}\n`,
);
const cpuBefore = process.cpuUsage();
const wallBefore = performance.now();
const results = await Promise.all(setups.map((s) => drive(s)));
// How much of a core the engines' process had: far below one on a loaded machine means it waited for a CPU.
const cpu = process.cpuUsage(cpuBefore);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const wallSeconds = (performance.now() - wallBefore) / 1000;

// The site's request log, each entry the run whose account sent it.
const log = (await (await control(jiraUrl, 'GET', '/_sandbox/requests')).json()) as LogEntry[];
const entriesOf = (r: RunResult) => log.filter((e) => e.client === r.setup.client);
const adoLogs = await Promise.all(
  organizations.map(
    async (o) => (await (await control(o.ado.url, 'GET', '/_sandbox/requests')).json()) as LogEntry[],
  ),
);
const within = (e: LogEntry, span: PhaseSpan) => {
  const t = Date.parse(e.receivedAt ?? e.at ?? '');
  return t >= span.startedAt && t <= span.startedAt + span.ms;
};

/** Every issue of the project through the site's API: each source item (`src-id-N`) once, nothing else. */
async function tally(setup: RunSetup) {
  const jira = new JiraClient({ baseUrl: jiraUrl, email: setup.email, token: setup.token });
  const issues = await jira.search(`project = "${setup.key}"`, { fields: ['labels'] });
  const bySource = new Map<string, number>();
  let unlabelled = 0;
  let elsewhere = 0;
  for (const issue of issues) {
    if (!issue.key.startsWith(`${setup.key}-`)) elsewhere++;
    const label = ((issue.fields?.labels as string[] | undefined) ?? []).find((l) => l.startsWith('src-id-'));
    if (!label) unlabelled++;
    else bySource.set(label, (bySource.get(label) ?? 0) + 1);
  }
  const duplicated = [...bySource.values()].filter((n) => n > 1).length;
  return { issues: issues.length, sources: bySource.size, duplicated, unlabelled, elsewhere };
}

const perMinute: number[] = [];
for (const [i, r] of results.entries()) {
  const done = await store.runs.get(tenant.id, r.setup.runId);
  const items = done?.totalItems ?? 0;
  const rate = (items / r.ms) * 60_000;
  perMinute.push(rate);
  const mine = entriesOf(r);
  const throttled: Record<string, number> = {};
  for (const e of [...mine, ...(adoLogs[i] ?? [])])
    if (e.status === 429) throttled[e.reason ?? 'injected'] = (throttled[e.reason ?? 'injected'] ?? 0) + 1;
  const t = await tally(r.setup);
  console.log(
    `run ${r.setup.key}: status ${done?.status}, ${items} items in ${(r.ms / 1000).toFixed(1)} s = ${rate.toFixed(0)} items/minute; created ${done?.successCount}, skipped ${done?.skippedCount}, failed ${done?.failureCount}`,
  );
  console.log(
    `    Jira ${mine.length} requests; 429s: ${
      Object.entries(throttled)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }; site syncs ${r.syncs}`,
  );
  console.log(
    `    tally through the site's API: ${t.issues} issues in ${r.setup.key}, ${t.sources} source items, ${t.duplicated} duplicated, ${t.unlabelled} without a source label, ${t.elsewhere} keyed outside the project`,
  );
  console.log(
    `    phases: ${r.spans
      .filter((s) => CORE.has(s.phase) && !s.finalized)
      .map((s) => `${NAMES[s.phase]} ${(s.ms / 1000).toFixed(1)} s`)
      .join(', ')}`,
  );
}
const unattributed = log.filter((e) => !results.some((r) => r.setup.client === e.client)).length;

// The site's floor: phase by phase, the runs' requests of that phase at the site's shared limits.
let floorSum = 0;
for (const phase of CORE) {
  const runs = results.map((r, i) => {
    const span = r.spans.find((s) => s.phase === phase && !s.finalized);
    return span
      ? {
          jira: entriesOf(r).filter((e) => within(e, span)),
          ado: (adoLogs[i] ?? []).filter((e) => within(e, span)),
        }
      : { jira: [], ado: [] };
  });
  const floor = siteFloor(runs, jiraSettings, adoSettings);
  floorSum += floor.seconds;
  const spans = results.flatMap((r) => r.spans.filter((s) => s.phase === phase && !s.finalized));
  const longest = Math.max(0, ...spans.map((s) => s.ms)) / 1000;
  console.log(
    `phase ${phase} ${(NAMES[phase] ?? '').padEnd(11)} site floor ${floor.seconds.toFixed(1).padStart(6)} s (${floor.by}); the runs took ${spans.map((s) => (s.ms / 1000).toFixed(1)).join(' / ')} s (longest ${longest.toFixed(1)} s)`,
  );
}
const coreSpans = results.flatMap((r) => r.spans.filter((s) => CORE.has(s.phase) && !s.finalized));
const coreStart = Math.min(...coreSpans.map((s) => s.startedAt));
const coreEnd = Math.max(...coreSpans.map((s) => s.startedAt + s.ms));
const coreSeconds = (coreEnd - coreStart) / 1000;
const totalItems = results.length * ITEMS;
const spread = Math.max(...perMinute) / Math.max(Math.min(...perMinute), 1e-9);
console.log(
  `\ntogether: the core phases of all runs took ${coreSeconds.toFixed(1)} s against the site's floor of ${floorSum.toFixed(1)} s for the combined work: ${((floorSum / Math.max(coreSeconds, 1e-9)) * 100).toFixed(0)}% of the floor`,
);
console.log(
  `the engines' process: ${cpuSeconds.toFixed(0)} CPU-s in ${wallSeconds.toFixed(0)} s (${((cpuSeconds / wallSeconds) * 100).toFixed(0)}% of a core); load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  `items per minute per run: ${perMinute.map((r) => r.toFixed(0)).join(' / ')}; max/min ${spread.toFixed(2)}; ${unattributed} of the site's ${log.length} requests from no run's account`,
);

// The site syncs' writes: one UpdateItem each, billed by the item's size (1 write unit per KB, rounded up).
const siteKey = keys.site(siteIdOf(jiraUrl));
const siteItem = await raw.send(
  new GetItemCommand({ TableName: TABLE, Key: { pk: { S: siteKey.pk }, sk: { S: siteKey.sk } } }),
);
const itemBytes = siteItem.Item ? Buffer.byteLength(JSON.stringify(siteItem.Item)) : 0;
const syncs = results.reduce((n, r) => n + r.syncs, 0);
const syncUnits = syncs * Math.max(1, Math.ceil(itemBytes / 1024));
const cost = awsCostPer10k(usage, totalItems, ENGINE_MEMORY_MB);
const scale = 10_000 / Math.max(totalItems, 1);
console.log(
  `AWS cost per 10,000 items: $${cost.total.toFixed(2)} (Lambda $${cost.lambda.toFixed(3)}, DynamoDB $${cost.dynamo.toFixed(3)} for ${usage.readUnits.toFixed(0)} RRU + ${usage.writeUnits.toFixed(0)} WRU, Step Functions $${cost.stepFunctions.toFixed(3)}, S3 $${cost.s3.toFixed(4)}); of it the site syncs: ${syncs} UpdateItems of a ${itemBytes}-byte item, ${syncUnits} WRU, $${(syncUnits * PRICES.dynamoWrite * scale).toFixed(5)}`,
);

for (const p of processes) await p.stop();
raw.destroy();
await dynamo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
