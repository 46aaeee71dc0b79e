/**
 * `npm run bench` (engine part): migrates a generated project into the Jira sandbox with realistic latency and
 * a rate limit, and prints items per minute and tracker calls per item per phase, beside the floor the batch
 * sizes allow (bulk create 50, batch read 200). Figures only; nothing here is asserted.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { freePort } from '../support/global-setup.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 2000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 40);
const RATE_PER_SECOND = Number(process.env.BENCH_RATE_PER_SECOND ?? 50);

const { startDynamoLocal } = await import('../../local/dynamodb.ts');
const { ensureTable } = await import('../../local/table.ts');
const { createStore } = await import('../../functions/store/index.ts');
const { createDocumentClient } = await import('../../functions/store/client.ts');
const { startSandboxes } = await import('../../local/sandbox/index.ts');
const { sandboxConfigFromEnv } = await import('../../local/sandbox/common/config.ts');
const { createTenant } = await import('../../functions/services/operator.ts');
const { createProject } = await import('../../functions/services/projects.ts');
const { createRun } = await import('../support/runs.ts');
const { finalizeStep, runBatch } = await import('../../functions/engine/runner.ts');
const { PLUGIN_DEFINITIONS } = await import('../../functions/plugins/index.ts');
const { DiskArtifactStore } = await import('../../functions/store/artifacts.ts');
const { AdoClient } = await import('../../functions/trackers/ado/client.ts');
const { JiraClient } = await import('../../functions/trackers/jira/client.ts');

const dynamo = await startDynamoLocal({ port: await freePort() });
Object.assign(process.env, {
  TABLE_NAME: 'bench-engine',
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  JWT_SECRET: randomBytes(48).toString('base64'),
});
const raw = new DynamoDBClient({
  endpoint: dynamo.endpoint,
  region: 'eu-west-2',
  credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
});
await ensureTable(raw, 'bench-engine');
const store = createStore({
  db: createDocumentClient({ region: 'eu-west-2', endpoint: dynamo.endpoint }),
  name: 'bench-engine',
});
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '99' });
const sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
for (const url of [sb.ado.url, sb.jira.url]) {
  await fetch(`${url}/_sandbox/faults`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ latencyMs: LATENCY_MS, rateLimitPerSecond: RATE_PER_SECOND }),
  });
}
await fetch(`${sb.jira.url}/_sandbox/jira/limits`, {
  method: 'PUT',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ attachmentMaxBytes: 1024 ** 3 }),
});
const tenant = await createTenant(store, { name: 'Bench' });
const project = await createProject(store, tenant.id, {
  name: 'Bench',
  sourceSystem: 'AZURE_DEVOPS',
  targetSystem: 'JIRA_CLOUD',
});
const dir = mkdtempSync(join(tmpdir(), 'tms-bench-'));
const source = new AdoClient({
  organization: `${sb.ado.url}/${config.ado.org}`,
  project: config.ado.project,
  token: config.ado.pat,
});
const target = new JiraClient({
  baseUrl: sb.jira.url,
  email: config.jira.email,
  token: config.jira.apiToken,
});
const deps = {
  store,
  artifacts: new DiskArtifactStore(dir),
  source,
  target,
  indexLagMs: 0,
  pluginDefinitions: PLUGIN_DEFINITIONS,
};
const run = await createRun(store, tenant.id, project.id, 'FULL');

interface LogEntry {
  method: string;
  path: string;
  status: number;
}
const phaseRows: {
  /** The row of the last RunBatch call (past the last phase) and the Finalize step. */
  finalized: boolean;
  phase: number;
  ms: number;
  jiraCalls: number;
  jiraWrites: number;
  adoCalls: number;
  throttled: number;
}[] = [];
/** A Jira call that changes something (searches are POSTs that only read). */
const isWrite = (r: LogEntry) => r.method !== 'GET' && !r.path.includes('/search');
const requests = async (url: string) =>
  (await (await fetch(`${url}/_sandbox/requests`)).json()) as LogEntry[];
const started = performance.now();
for (let guard = 0; guard < 10_000; guard++) {
  const before = (await store.runs.get(tenant.id, run.id))?.cursor.phase ?? 0;
  const [jiraBefore, adoBefore] = [(await requests(sb.jira.url)).length, (await requests(sb.ado.url)).length];
  const t0 = performance.now();
  let answer = 'batch';
  while (answer === 'batch')
    answer = await runBatch(
      deps,
      { tenantId: tenant.id, runId: run.id },
      () => 900_000,
      config.jira.projectKey,
    );
  // Every phase done: the state machine's Finalize step writes the reports and ends the run (timed in this row).
  const finalized = answer === 'finalize';
  if (finalized) await finalizeStep(deps, { tenantId: tenant.id, runId: run.id });
  const jira = (await requests(sb.jira.url)).slice(jiraBefore);
  const ado = (await requests(sb.ado.url)).slice(adoBefore);
  phaseRows.push({
    finalized,
    phase: before,
    ms: performance.now() - t0,
    jiraCalls: jira.length,
    jiraWrites: jira.filter(isWrite).length,
    adoCalls: ado.length,
    throttled: [...jira, ...ado].filter((r) => r.status === 429).length,
  });
  if (answer !== 'phase-done') break;
}
const totalMs = performance.now() - started;
const done = await store.runs.get(tenant.id, run.id);
const items = done?.totalItems ?? 0;

const NAMES: Record<number, string> = {
  1: 'preflight',
  2: 'create',
  3: 'hierarchy',
  4: 'links',
  5: 'attachments',
  6: 'transitions',
  7: 'comments',
};
// Each phase's units (items, links, files ...), from the totals of its progress events.
const units = new Map<number, number>();
for (let after: string | undefined; ; ) {
  const page = await store.runs.events(tenant.id, project.id, run.id, after, 1000);
  if (page.length === 0) break;
  for (const e of page) if (e.event.type === 'progress') units.set(Number(e.id.slice(0, 2)), e.event.total);
  after = page.at(-1)?.id;
}
const FLOOR: Record<number, string> = {
  1: `${(Math.ceil(items / 200) / Math.max(items, 1)).toFixed(3)} ADO/item (batch 200)`,
  2: `${(1 / 50).toFixed(3)} Jira/item (bulk 50) + 1 search/50`,
  3: '1 write/unit (parent edit or link)',
  4: '1 write/unit (issue or remote link)',
  5: '1 upload/file + 1 history file/item with revisions (+1 edit/item with images, mentions or references)',
  6: '1 write/hop',
  7: '1 post/comment',
};
console.log(
  `\nEngine benchmark: ${items} items, sandbox latency ${LATENCY_MS} ms, rate limit ${RATE_PER_SECOND}/s per tracker\n`,
);
for (const r of phaseRows) {
  if (r.jiraCalls + r.adoCalls === 0 && r.ms < 5) continue;
  console.log(
    `phase ${r.phase} ${(r.finalized ? 'finalize' : (NAMES[r.phase] ?? 'plugin')).padEnd(12)} ${(r.ms / 1000).toFixed(1).padStart(6)} s  Jira ${(r.jiraCalls / Math.max(items, 1)).toFixed(3)}/item  ADO ${(r.adoCalls / Math.max(items, 1)).toFixed(3)}/item  units ${String(units.get(r.phase) ?? '-').padStart(6)}  Jira writes ${r.jiraWrites}${units.get(r.phase) ? ` (${(r.jiraWrites / (units.get(r.phase) as number)).toFixed(2)}/unit)` : ''}  429s ${r.throttled}${FLOOR[r.phase] ? `   floor: ${FLOOR[r.phase]}` : ''}`,
  );
}
console.log(
  `\nstatus ${done?.status}, created ${done?.successCount}, skipped ${done?.skippedCount}, failed ${done?.failureCount}`,
);
console.log(
  `throughput: ${((items / totalMs) * 60_000).toFixed(0)} items/minute over ${(totalMs / 1000).toFixed(1)} s`,
);

await sb.stop();
raw.destroy();
await dynamo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
