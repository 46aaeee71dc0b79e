/**
 * `npm run bench` (engine part): migrates a generated project (BENCH_ITEMS, default 2,000) into the Jira sandbox
 * under the realistic profile (the real trackers' rate limits and latency, local/sandbox/common/limits) and
 * prints, per phase: requests per endpoint, 429s by reason, the phase's floor time from the modelled limits, the
 * measured time and their ratio; then items per minute, calls per item, peak memory and the AWS cost per 10,000
 * items. Figures only; nothing here is asserted. How floors and cost are computed: docs/engine-and-limits.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import type { AdoLimitSettings } from '../../local/sandbox/common/limits/ado.ts';
import type { JiraLimitSettings } from '../../local/sandbox/common/limits/jira.ts';
import { freePort } from '../support/global-setup.ts';
import {
  type AwsUsage,
  awsCostPer10k,
  countArtifacts,
  countCapacity,
  type LogEntry,
  phaseFloor,
  type SandboxSettings,
} from './floors.ts';
import { type FlowFigures, FlowStats, flowLines } from './flow-stats.ts';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 2000);
const PROFILE = (process.env.BENCH_PROFILE ?? 'realistic') as 'realistic' | 'off';
/** BENCH_COMMENTS=0 leaves the comments phase out (a quicker look at the phases before it; not the issue's figure). */
const COMMENTS = process.env.BENCH_COMMENTS !== '0';
/** BENCH_UNTIL=N stops after phase N (a quicker look at the first phases; not the issue's figure). */
const UNTIL = Number(process.env.BENCH_UNTIL ?? Number.POSITIVE_INFINITY);
/** The engine Lambda's memory (lib/engine.ts), for GB-seconds. */
const ENGINE_MEMORY_MB = 1024;

const { startDynamoLocal } = await import('../../local/dynamodb.ts');
const { ensureTable } = await import('../../local/table.ts');
const { createStore } = await import('../../functions/store/index.ts');
const { createDocumentClient } = await import('../../functions/store/client.ts');
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
const { setFlowProbe } = await import('../../functions/platform/flow-probe.ts');
// Lanes are the clients' (made below): an endpoint's in-flight limit, from whichever pacer knows it.
let laneLimit: (endpoint: string) => number | undefined = () => undefined;
const flow = new FlowStats((endpoint) => laneLimit(endpoint));
setFlowProbe(flow);

let peakRss = 0;
let sandboxPeakRss = 0;
let sandboxes: SandboxProcess | undefined;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  sandboxPeakRss = Math.max(sandboxPeakRss, sandboxes?.rss() ?? 0);
}, 200);

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
const usage: AwsUsage = {
  readUnits: 0,
  writeUnits: 0,
  s3Puts: 0,
  s3Gets: 0,
  invocations: 0,
  transitions: 0,
  engineMs: 0,
};
const db = createDocumentClient({ region: 'eu-west-2', endpoint: dynamo.endpoint });
countCapacity(db, usage);
const store = createStore({ db, name: 'bench-engine' });
const config = {
  ...sandboxConfigFromEnv({ SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: '99' }),
  profile: PROFILE,
};
// The sandboxes run in their own process, as the real trackers run elsewhere (sandbox-process.ts).
const sb = await startSandboxProcess({
  SANDBOX_ITEMS: String(ITEMS),
  SANDBOX_SEED: '99',
  SANDBOX_PROFILE: PROFILE,
});
sandboxes = sb;
// The sandboxes listen on loopback, which the outbound policy refuses but on the ports registered (as npm start's
// runtime registers its sandboxes').
allowSandboxPorts(sb);
await fetch(`${sb.jira.url}/_sandbox/jira/limits`, {
  method: 'PUT',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ attachmentMaxBytes: 1024 ** 3 }),
});
const settingsOf = async <L>(url: string) =>
  (await (await fetch(`${url}/_sandbox/limits`)).json()) as SandboxSettings<L>;
const jiraSettings = await settingsOf<JiraLimitSettings>(sb.jira.url);
const adoSettings = await settingsOf<AdoLimitSettings>(sb.ado.url);
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
laneLimit = (endpoint) =>
  endpoint.startsWith('GET /sandbox-org') || endpoint.includes('/_apis/')
    ? source.http.pacer.laneState(endpoint).limit
    : target.http.pacer.laneState(endpoint).limit;
const deps = {
  store,
  journal: new StoreRunJournal(store),
  artifacts: countArtifacts(new DiskArtifactStore(dir), usage),
  source,
  target,
  indexLagMs: 0,
  pluginDefinitions: PLUGIN_DEFINITIONS,
};
const run = await createRun(store, tenant.id, project.id, 'FULL', COMMENTS ? {} : { migrateComments: false });

interface PhaseRow {
  /** The row of the last RunBatch call (past the last phase) and the Finalize step. */
  finalized: boolean;
  phase: number;
  ms: number;
  /** Wall-clock start (the sandboxes' log times are wall clock). */
  startedAt: number;
  jira: LogEntry[];
  ado: LogEntry[];
  flow: FlowFigures;
}
const phaseRows: PhaseRow[] = [];
const requests = async (url: string) =>
  (await (await fetch(`${url}/_sandbox/requests`)).json()) as LogEntry[];
const started = performance.now();
// Each RunBatch and Finalize is a Lambda invocation and a few state transitions of the state machine
// (RunBatch -> Answer -> WithinBudget -> Loop; Preflight and Finalize add Start, Done ...).
usage.transitions += 4;
for (let guard = 0; guard < 10_000; guard++) {
  const before = (await store.runs.get(tenant.id, run.id))?.cursor.phase ?? 0;
  const [jiraBefore, adoBefore] = [(await requests(sb.jira.url)).length, (await requests(sb.ado.url)).length];
  const t0 = performance.now();
  const startedAt = Date.now();
  flow.take();
  // RunBatch answers `batch` for "call again": within the phase (out of time), or past its end (a row each).
  let answer = 'batch';
  let phase = before;
  while (answer === 'batch' && phase === before) {
    usage.invocations++;
    usage.transitions += 4;
    answer = await runBatch(
      deps,
      { tenantId: tenant.id, runId: run.id },
      () => 900_000,
      config.jira.projectKey,
    );
    phase = (await store.runs.get(tenant.id, run.id))?.cursor.phase ?? 0;
  }
  // Every phase done: the state machine's Finalize step writes the reports and ends the run (timed in this row).
  const finalized = answer === 'finalize';
  if (finalized) {
    usage.invocations++;
    usage.transitions += 3;
    await finalizeStep(deps, { tenantId: tenant.id, runId: run.id });
  }
  const ms = performance.now() - t0;
  usage.engineMs += ms;
  phaseRows.push({
    finalized,
    phase: before,
    ms,
    startedAt,
    jira: (await requests(sb.jira.url)).slice(jiraBefore),
    ado: (await requests(sb.ado.url)).slice(adoBefore),
    flow: flow.take(),
  });
  if (answer !== 'batch' || before >= UNTIL) break;
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
const CORE = new Set([2, 3, 4, 5, 6, 7]);
console.log(
  `\nEngine benchmark: ${items} items, sandbox profile ${PROFILE} (Jira write median ${jiraSettings.latency.write.medianMs} ms, p95 ${jiraSettings.latency.write.p95Ms} ms)\n`,
);
let floorSum = 0;
let measuredCore = 0;
for (const r of phaseRows) {
  if (r.jira.length + r.ado.length === 0 && r.ms < 5) continue;
  const name = r.finalized ? 'finalize' : (NAMES[r.phase] ?? 'plugin');
  const floor = phaseFloor(r.jira, r.ado, jiraSettings, adoSettings);
  if (CORE.has(r.phase) && !r.finalized) {
    floorSum += floor.seconds;
    measuredCore += r.ms / 1000;
  }
  const ratio = floor.seconds > 0 ? `${((floor.seconds / (r.ms / 1000)) * 100).toFixed(0)}% of floor` : '-';
  console.log(
    `phase ${r.phase} ${name.padEnd(11)} measured ${(r.ms / 1000).toFixed(1).padStart(6)} s   floor ${floor.seconds.toFixed(1).padStart(6)} s (${floor.by})   ${ratio}`,
  );
  console.log(
    `    Jira ${r.jira.length} requests (${(r.jira.length / Math.max(items, 1)).toFixed(2)}/item), ADO ${r.ado.length} (${(r.ado.length / Math.max(items, 1)).toFixed(2)}/item); 429s: ${
      Object.entries(floor.throttled)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }${floor.busiestIssue ? `; busiest issue ${floor.busiestIssue.key}: ${floor.busiestIssue.writes} writes` : ''}`,
  );
  for (const e of floor.endpoints.slice(0, 6))
    console.log(
      `      ${String(e.count).padStart(6)} ${e.endpoint}  (${e.rate}/s: ${e.seconds.toFixed(1)} s)`,
    );
  for (const line of flowLines(r.flow, r.jira, r.ado)) console.log(line);
  // When the phase's Jira requests began and ended within it: its start and its drain.
  const arrivals = r.jira.flatMap((e) => (e.receivedAt ? [Date.parse(e.receivedAt)] : []));
  const answers = r.jira.flatMap((e) => (e.at ? [Date.parse(e.at)] : []));
  const refusals = r.jira.flatMap((e) => (e.status === 429 && e.at ? [Date.parse(e.at)] : []));
  if (arrivals.length > 0)
    console.log(
      `    timeline: first Jira request at ${((Math.min(...arrivals) - r.startedAt) / 1000).toFixed(1)} s, last answer at ${((Math.max(...answers) - r.startedAt) / 1000).toFixed(1)} s of ${(r.ms / 1000).toFixed(1)} s${refusals.length ? `; 429s from ${((Math.min(...refusals) - r.startedAt) / 1000).toFixed(1)} s to ${((Math.max(...refusals) - r.startedAt) / 1000).toFixed(1)} s` : ''}`,
    );
}
console.log(
  `\nstatus ${done?.status}, created ${done?.successCount}, skipped ${done?.skippedCount}, failed ${done?.failureCount}`,
);
console.log(
  `throughput: ${((items / totalMs) * 60_000).toFixed(0)} items/minute over ${(totalMs / 1000).toFixed(1)} s; core phases ${measuredCore.toFixed(1)} s against a sum of floors of ${floorSum.toFixed(1)} s (${((floorSum / Math.max(measuredCore, 1e-9)) * 100).toFixed(0)}%)`,
);
const allJira = phaseRows.reduce((n, r) => n + r.jira.length, 0);
const allAdo = phaseRows.reduce((n, r) => n + r.ado.length, 0);
console.log(
  `calls per item: Jira ${(allJira / Math.max(items, 1)).toFixed(2)}, ADO ${(allAdo / Math.max(items, 1)).toFixed(2)} (batch floor: ADO ${(Math.ceil(items / 200) / Math.max(items, 1)).toFixed(3)} reads/item at 200 a batch, Jira ${(1 / 50).toFixed(3)} creates/item at 50 a bulk create)`,
);
console.log(
  `peak memory (RSS): the engine's process ${(peakRss / 1024 ** 2).toFixed(0)} MiB (engine, its clients, DynamoDB Local's client); the sandboxes' process ${(sandboxPeakRss / 1024 ** 2).toFixed(0)} MiB`,
);
const cost = awsCostPer10k(usage, items, ENGINE_MEMORY_MB);
console.log(
  `AWS cost per 10,000 items: $${cost.total.toFixed(2)} (Lambda $${cost.lambda.toFixed(3)} for ${cost.gbSeconds.toFixed(0)} GB-s and ${usage.invocations} invocations; DynamoDB $${cost.dynamo.toFixed(3)} for ${usage.readUnits.toFixed(0)} RRU + ${usage.writeUnits.toFixed(0)} WRU; Step Functions $${cost.stepFunctions.toFixed(3)} for ${usage.transitions} transitions; S3 $${cost.s3.toFixed(4)} for ${usage.s3Puts} PUT + ${usage.s3Gets} GET), measured on ${items} items`,
);

clearInterval(sampler);
await sb.stop();
raw.destroy();
await dynamo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
