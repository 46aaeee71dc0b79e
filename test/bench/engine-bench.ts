/**
 * `npm run bench` (engine part): migrates a generated project (BENCH_ITEMS, default 2,000) into the Jira sandbox
 * under the realistic profile (the real trackers' rate limits and latency, local/sandbox/common/limits) and
 * prints, per phase: requests per endpoint, 429s by reason, the phase's floor time from the modelled limits, the
 * measured time and their ratio; then items per minute, calls per item, peak memory, DynamoDB requests per item
 * and the AWS cost per 10,000 items. Figures only; nothing here is asserted. How floors and cost are computed:
 * docs/engine-and-limits.md.
 */

import { ENGINE_MEMORY_MB, openMigrationBench } from './engine-migration.ts';
import { awsCostPer10k, phaseFloor } from './floors.ts';
import { flowLines } from './flow-stats.ts';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 2000);
const PROFILE = (process.env.BENCH_PROFILE ?? 'realistic') as 'realistic' | 'off';
/** BENCH_COMMENTS=0 leaves the comments phase out (a quicker look at the phases before it; not the issue's figure). */
const COMMENTS = process.env.BENCH_COMMENTS !== '0';
/** BENCH_UNTIL=N stops after phase N (a quicker look at the first phases; not the issue's figure). */
const UNTIL = Number(process.env.BENCH_UNTIL ?? Number.POSITIVE_INFINITY);
/**
 * BENCH_VERIFY=1: the run verifies every item at its end (the API's default): its row and its own figures are
 * printed, and the migration's figures (throughput, calls per item) leave it out, so they compare with runs
 * measured without it. The AWS cost line counts it.
 */
const VERIFY = process.env.BENCH_VERIFY === '1';

const bench = await openMigrationBench({
  items: ITEMS,
  profile: PROFILE,
  comments: COMMENTS,
  until: UNTIL,
  requestLog: 'entries',
  verify: VERIFY,
});
const {
  phaseRows,
  totalMs,
  run: done,
  items,
  usage,
  requests,
  peakRss,
  sandboxPeakRss,
  jiraSettings,
  adoSettings,
} = await bench.migrate();

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
// The verification is the run's last phase before Finalize.
const verification = VERIFY ? phaseRows.filter((r) => !r.finalized).at(-1) : undefined;
for (const r of phaseRows) {
  if (r.jira.length + r.ado.length === 0 && r.ms < 5) continue;
  const name = r.finalized ? 'finalize' : r === verification ? 'verification' : (NAMES[r.phase] ?? 'plugin');
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
const migrationMs = totalMs - (verification?.ms ?? 0);
console.log(
  `throughput: ${((items / migrationMs) * 60_000).toFixed(0)} items/minute over ${(migrationMs / 1000).toFixed(1)} s${verification ? ' (the verification left out)' : ''}; core phases ${measuredCore.toFixed(1)} s against a sum of floors of ${floorSum.toFixed(1)} s (${((floorSum / Math.max(measuredCore, 1e-9)) * 100).toFixed(0)}%)`,
);
const migrationRows = phaseRows.filter((r) => r !== verification);
const allJira = migrationRows.reduce((n, r) => n + r.jira.length, 0);
const allAdo = migrationRows.reduce((n, r) => n + r.ado.length, 0);
console.log(
  `calls per item: Jira ${(allJira / Math.max(items, 1)).toFixed(2)}, ADO ${(allAdo / Math.max(items, 1)).toFixed(2)} (batch floor: ADO ${(Math.ceil(items / 200) / Math.max(items, 1)).toFixed(3)} reads/item at 200 a batch, Jira ${(1 / 50).toFixed(3)} creates/item at 50 a bulk create)`,
);
if (verification) {
  const floor = phaseFloor(verification.jira, verification.ado, jiraSettings, adoSettings);
  console.log(
    `verification: ${(verification.ms / 1000).toFixed(1)} s against a floor of ${floor.seconds.toFixed(1)} s (${floor.by}; ${((floor.seconds / Math.max(verification.ms / 1000, 1e-9)) * 100).toFixed(0)}% of floor), Jira ${(verification.jira.length / Math.max(items, 1)).toFixed(2)} reads per item, ADO ${(verification.ado.length / Math.max(items, 1)).toFixed(2)} per item; ${((items / verification.ms) * 60_000).toFixed(0)} items/minute`,
  );
}
console.log(
  `peak memory (RSS): the engine's process ${(peakRss / 1024 ** 2).toFixed(0)} MiB (engine, its clients, DynamoDB Local's client); the sandboxes' process ${(sandboxPeakRss / 1024 ** 2).toFixed(0)} MiB`,
);
// Each DynamoDB request is a round trip, the SDK's marshalling and signing, and (below) its units' price.
console.log(
  `DynamoDB requests per item: ${(requests.total / Math.max(items, 1)).toFixed(2)} (${requests.total} in all${verification ? ', the verification included' : ''}); by operation and kind of item:`,
);
for (const line of requests.perItem(items).slice(0, 12)) console.log(`  ${line}`);
const cost = awsCostPer10k(usage, items, ENGINE_MEMORY_MB);
console.log(
  `AWS cost per 10,000 items: $${cost.total.toFixed(2)} (Lambda $${cost.lambda.toFixed(3)} for ${cost.gbSeconds.toFixed(0)} GB-s and ${usage.invocations} invocations; DynamoDB $${cost.dynamo.toFixed(3)} for ${usage.readUnits.toFixed(0)} RRU + ${usage.writeUnits.toFixed(0)} WRU; Step Functions $${cost.stepFunctions.toFixed(3)} for ${usage.transitions} transitions; S3 $${cost.s3.toFixed(4)} for ${usage.s3Puts} PUT + ${usage.s3Gets} GET), measured on ${items} items`,
);

await bench.close();
process.exit(0);
