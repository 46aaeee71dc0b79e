/**
 * `npm run soak`: the chaos soak (issue 31). Migrates SOAK_ITEMS (default 10,000) generated work items into the
 * Jira sandbox through the real state machine while the engine's process (soak-engine.ts: the local orchestrator
 * and the engine handler) is SIGKILLed at random points and started again, resuming the run as `npm start` does;
 * meanwhile the sandboxes inject, from a seeded schedule, bursts of 5xx, answers held past the client's timeout,
 * connection resets (before or after the request was worked), 429s of Jira's three kinds and Azure DevOps'
 * TF400733 (`PUT /_sandbox/faults`, docs/sandboxes.md), and the engine's DynamoDB client throttles a seeded share
 * of its calls (DYNAMODB_THROTTLE_FAULTS, inside the SDK's retry). At the end it tallies through the trackers' own
 * REST APIs: every source item exactly one Jira issue, every comment and attached file exactly once, counts equal
 * to the source's, no link twice, and no item failed for a fault. Exit code 1 when the tally is off.
 *
 * The sandboxes run the `off` profile (no modelled rate limits or latency) plus the injected faults: the realistic
 * profile's latency would make 10,000 items take hours. Seeded: `SOAK_SEED=<n>` replays a run's schedule (kill
 * points, faults, generated data); the seed is printed first. `SOAK_KILL_EVERY_SECONDS`: the mean time between
 * kills (default: 3 minutes at 10,000 items, scaled down with the size, at least 20 s). docs/testing.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { seededRandom } from '../../local/sandbox/common/random.ts';
import { freePort } from '../support/global-setup.ts';
import { startSandboxProcess } from './sandbox-process.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';

const SEED = Number(process.env.SOAK_SEED ?? randomInt(1, 2 ** 31 - 1));
const ITEMS = Number(process.env.SOAK_ITEMS ?? 10_000);
const KILL_EVERY_S = Number(process.env.SOAK_KILL_EVERY_SECONDS ?? Math.max(20, Math.round(ITEMS * 0.018)));
/**
 * A fault burst every this many seconds on average: 4 s at a few hundred items, up to 30 s at 10,000. A burst of
 * Jira quota 429s hands a wait back at each one (up to about 100 s a burst), so at a burst every 4 s a 10,000-item
 * run spends hours in waits.
 */
const FAULT_EVERY_S = Number(
  process.env.SOAK_FAULT_EVERY_SECONDS ?? Math.min(30, Math.max(4, Math.round(ITEMS * 0.003))),
);
/** The share of the engine's DynamoDB calls throttled. */
const DYNAMODB_THROTTLE_RATE = 0.02;
/** Past the engine's tracker clients' timeout (functions/trackers/http.ts: 30 s): the client gives up first. */
const HANG_MS = 40_000;
const TABLE = 'soak';

console.log(
  `soak: seed ${SEED} (replay: SOAK_SEED=${SEED}), ${ITEMS} items, a kill every ~${KILL_EVERY_S} s, a fault burst every ~${FAULT_EVERY_S} s`,
);
const started = Date.now();
const random = seededRandom(SEED);

const { startDynamoLocal } = await import('../../local/dynamodb.ts');
const { ensureTable } = await import('../../local/table.ts');
const { createStore } = await import('../../functions/store/index.ts');
const { createDocumentClient } = await import('../../functions/store/client.ts');
const { sandboxConfigFromEnv } = await import('../../local/sandbox/common/config.ts');
const { seedDemo, seedDemoProject } = await import('../../local/seed.ts');
const { createRun } = await import('../support/runs.ts');
const { AdoClient } = await import('../../functions/trackers/ado/client.ts');
const { markerOf } = await import('../../functions/engine/phases/comments-format.ts');
const { allowSandboxPorts } = await import('../../local/loopback-ports.ts');

const dir = mkdtempSync(join(tmpdir(), 'tms-soak-'));
const dynamo = await startDynamoLocal({ port: await freePort() });
const keyFile = join(dir, 'credentials-key');
writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
const sandboxEnv = { SANDBOX_ITEMS: String(ITEMS), SANDBOX_SEED: String(SEED), SANDBOX_PROFILE: 'off' };
const sb = await startSandboxProcess(sandboxEnv);
allowSandboxPorts(sb);
const env = {
  STAGE: 'dev',
  TABLE_NAME: TABLE,
  AWS_REGION: 'eu-west-2',
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  CREDENTIALS_KEY_FILE: keyFile,
  JWT_SECRET: randomBytes(48).toString('base64'),
  DATA_DIR: dir,
  ADO_BASE_URL: sb.ado.url,
  SOAK_SANDBOX_PORTS: [sb.ado.url, sb.jira.url].map((u) => new URL(u).port).join(','),
};
Object.assign(process.env, env);
const raw = new DynamoDBClient({
  endpoint: dynamo.endpoint,
  region: 'eu-west-2',
  credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
});
await ensureTable(raw, TABLE);
raw.destroy();
const store = createStore({
  db: createDocumentClient({ region: 'eu-west-2', endpoint: dynamo.endpoint }),
  name: TABLE,
});
const config = sandboxConfigFromEnv(sandboxEnv);
const control = async (base: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>);
};
await control(sb.jira.url, 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 ** 3 });
const { tenantId } = await seedDemo(store);
const projectId = await seedDemoProject(store, tenantId, {
  adoUrl: sb.ado.url,
  jiraUrl: sb.jira.url,
  config,
});
const run = await createRun(store, tenantId, projectId, 'FULL');

// ---- the engine, killed and started again ----
const engineScript = fileURLToPath(new URL('./soak-engine.ts', import.meta.url));
let engine: { child: ChildProcess; exited: Promise<void> } | undefined;
let starts = 0;
let kills = 0;
let dynamoThrottles = 0;
function startEngine(): void {
  starts++;
  const child = spawn(process.execPath, [...process.execArgv, engineScript], {
    env: {
      ...process.env,
      ...env,
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // Each start draws other calls: the seed and the start make the schedule.
      DYNAMODB_THROTTLE_FAULTS: `${DYNAMODB_THROTTLE_RATE}:${SEED + starts}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The engine's log lines (WARN and ERROR go to stderr): the injected throttles counted, the rest shown when asked.
  const follow = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line.includes('dynamodb throttle injected')) dynamoThrottles++;
        else if (process.env.SOAK_VERBOSE) console.log(line);
      }
    });
  };
  follow(child.stdout);
  follow(child.stderr);
  engine = { child, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
}
async function killEngine(signal: NodeJS.Signals): Promise<void> {
  if (!engine) return;
  engine.child.kill(signal);
  await engine.exited;
  engine = undefined;
}

// ---- the faults, from the seeded schedule ----
type Tracker = 'ado' | 'jira';
interface FaultKind {
  name: string;
  tracker: Tracker;
  /** The fault setting's field the burst goes in. */
  field: 'errors' | 'hangs' | 'resets' | 'throttle';
  burst: () => Record<string, unknown>;
}
const FAULTS: FaultKind[] = [
  ...(['ado', 'jira'] as const).flatMap((tracker): FaultKind[] => [
    {
      name: `${tracker} 5xx`,
      tracker,
      field: 'errors',
      // Within the tracker client's six attempts (functions/trackers/http.ts): a longer run of 5xx is an outage.
      burst: () => ({ count: random.int(1, 4), status: random.pick([500, 502, 503, 504]) }),
    },
    {
      name: `${tracker} timeout`,
      tracker,
      field: 'hangs',
      burst: () => ({ count: random.int(1, 2), ms: HANG_MS }),
    },
    {
      name: `${tracker} reset`,
      tracker,
      field: 'resets',
      burst: () => ({ count: random.int(1, 4), landed: random.chance(0.5) }),
    },
  ]),
  ...(['jira-burst-based', 'jira-per-issue-on-write', 'jira-quota-global-based'] as const).map(
    (reason): FaultKind => ({
      name: `jira 429 ${reason}`,
      tracker: 'jira',
      field: 'throttle',
      burst: () => ({ count: random.int(3, 20), retryAfterSeconds: random.int(1, 5), reason }),
    }),
  ),
  {
    name: 'ado 429 TF400733',
    tracker: 'ado',
    field: 'throttle',
    burst: () => ({ count: random.int(3, 10), retryAfterSeconds: random.int(1, 5), reason: 'TF400733' }),
  },
];
const base = (t: Tracker) => (t === 'ado' ? sb.ado.url : sb.jira.url);
const injected = new Map<string, number>();
/** The burst last set in each tracker's field, and its count then: what was consumed is credited to its kind. */
const scheduled = new Map<string, { kind: FaultKind; count: number }>();
async function credit(tracker: Tracker): Promise<Record<string, { count?: number } | null> | undefined> {
  const now = (await control(base(tracker), 'GET', '/_sandbox/faults')) as Record<
    string,
    { count?: number } | null
  >;
  for (const [slot, s] of scheduled) {
    const [t, field] = slot.split('.') as [Tracker, FaultKind['field']];
    if (t !== tracker) continue;
    const left = now[field]?.count ?? 0;
    injected.set(s.kind.name, (injected.get(s.kind.name) ?? 0) + (s.count - left));
    s.count = left;
  }
  return now;
}
async function injectFault(): Promise<void> {
  const kind = random.pick(FAULTS);
  await credit(kind.tracker);
  const burst = kind.burst();
  await control(base(kind.tracker), 'PUT', '/_sandbox/faults', { [kind.field]: burst });
  scheduled.set(`${kind.tracker}.${kind.field}`, { kind, count: burst.count as number });
}

// ---- the run ----
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusOf = async () => (await store.runs.get(tenantId, run.id))?.status;
startEngine();
let nextKill = Date.now() + KILL_EVERY_S * 1000 * (0.5 + random.next());
let nextFault = Date.now() + FAULT_EVERY_S * 1000 * (0.5 + random.next());
let status = await statusOf();
while (status === 'RUNNING') {
  await sleep(500);
  if (Date.now() >= nextFault) {
    await injectFault();
    nextFault = Date.now() + FAULT_EVERY_S * 1000 * (0.5 + random.next());
  }
  if (Date.now() >= nextKill) {
    const at = await store.runs.get(tenantId, run.id);
    console.log(`soak: SIGKILL #${kills + 1} at phase ${at?.cursor.phase}, item ${at?.cursor.index}`);
    await killEngine('SIGKILL');
    kills++;
    startEngine();
    nextKill = Date.now() + KILL_EVERY_S * 1000 * (0.5 + random.next());
  }
  status = await statusOf();
}
// The faults left unconsumed are lifted before the tally (which reads through the same APIs).
for (const t of ['ado', 'jira'] as const) {
  await credit(t);
  await control(base(t), 'PUT', '/_sandbox/faults', {
    errors: null,
    hangs: null,
    resets: null,
    throttle: null,
  });
}
await killEngine('SIGTERM');
const ended = await store.runs.get(tenantId, run.id);

// ---- the tally, through the trackers' REST APIs ----
const jiraAuth = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
async function jira<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${sb.jira.url}${path}`, {
    method,
    headers: { Authorization: jiraAuth, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`Jira ${method} ${path}: ${res.status}`);
  return (await res.json()) as T;
}
interface JiraIssue {
  key: string;
  fields: {
    labels?: string[];
    attachment?: { filename: string; size: number }[];
    issuelinks?: { type: { name: string }; inwardIssue?: { key: string }; outwardIssue?: { key: string } }[];
  };
}
const issues: JiraIssue[] = [];
for (let token: string | undefined, first = true; first || token; first = false) {
  const page = await jira<{ issues: JiraIssue[]; nextPageToken?: string }>('POST', '/rest/api/3/search/jql', {
    jql: `project = ${config.jira.projectKey}`,
    fields: ['labels', 'attachment', 'issuelinks'],
    maxResults: 100,
    ...(token ? { nextPageToken: token } : {}),
  });
  issues.push(...page.issues);
  token = page.nextPageToken;
}
const ado = new AdoClient({
  organization: `${sb.ado.url}/${config.ado.org}`,
  project: config.ado.project,
  token: config.ado.pat,
});
const sourceIds = await ado.idsInScope();
// The run's scope is its manifest: a type that is not migrated as issues (Shared Steps: the test-steps plugin
// carries them) leaves it by design, so its items are not "lost". Anything else of the source missing from the
// manifest is a problem of its own.
const { openRunPreflight } = await import('../../functions/phase-kit/preflight-artifact.ts');
const { DiskArtifactStore } = await import('../../functions/store/artifacts-disk.ts');
const preflight = await openRunPreflight(new DiskArtifactStore(join(dir, 'artifacts')), {
  tenantId,
  runId: run.id,
});
const inManifest = new Set<number>();
for await (const slice of preflight.manifest.slices()) for (const m of slice) inManifest.add(m.id);
const outOfScope = new Map<string, number>();
for (let at = 0; at < sourceIds.length; at += 200)
  for (const item of await ado.workItems(sourceIds.slice(at, at + 200), { expand: 'none' }))
    if (!inManifest.has(item.id)) {
      const type = String(item.fields['System.WorkItemType']);
      outOfScope.set(type, (outOfScope.get(type) ?? 0) + 1);
    }
const problems: string[] = [];
for (const type of outOfScope.keys())
  if (preflight.typeMap[type])
    problems.push(`${outOfScope.get(type)} ${type} item(s) left out of the manifest`);
const bySource = new Map<number, JiraIssue[]>();
for (const issue of issues) {
  const src = (issue.fields.labels ?? [])
    .filter((l) => /^src-id-\d+$/.test(l))
    .map((l) => Number(l.slice(7)));
  if (src.length !== 1) problems.push(`${issue.key}: ${src.length} src-id labels`);
  for (const id of src) bySource.set(id, [...(bySource.get(id) ?? []), issue]);
}
const tally = {
  sourceItems: sourceIds.length,
  issues: issues.length,
  comments: [0, 0],
  files: [0, 0],
  links: 0,
  linkComments: 0,
};
for (const id of sourceIds)
  if (inManifest.has(id) && (bySource.get(id) ?? []).length !== 1)
    problems.push(`#${id}: ${(bySource.get(id) ?? []).length} issues`);
for (const id of bySource.keys())
  if (!sourceIds.includes(id)) problems.push(`#${id}: an issue for an item not in the source`);
for (let at = 0; at < sourceIds.length; at += 200) {
  const items = await ado.workItems(sourceIds.slice(at, at + 200));
  for (const item of items) {
    const [issue] = bySource.get(item.id) ?? [];
    if (!issue) continue;
    const files = (item.relations ?? [])
      .filter((r) => r.rel === 'AttachedFile')
      .map((r) => `${r.attributes?.name}:${r.attributes?.resourceSize}`);
    const got = (issue.fields.attachment ?? []).map((a) => `${a.filename}:${a.size}`);
    for (const f of new Set(files)) {
      const want = files.filter((x) => x === f).length;
      const have = got.filter((x) => x === f).length;
      if (have !== want)
        problems.push(`#${item.id} ${issue.key}: file ${f} ${have} times, the source has ${want}`);
    }
    if (new Set(got).size !== got.length)
      problems.push(`#${item.id} ${issue.key}: a file twice (${got.join(', ')})`);
    tally.files[0] = (tally.files[0] ?? 0) + files.length;
    tally.files[1] = (tally.files[1] ?? 0) + got.filter((g) => files.includes(g)).length;
    const links = (issue.fields.issuelinks ?? []).map(
      (l) => `${l.type.name}:${l.inwardIssue ? `<${l.inwardIssue.key}` : `>${l.outwardIssue?.key}`}`,
    );
    if (new Set(links).size !== links.length)
      problems.push(`#${item.id} ${issue.key}: a link twice (${links.join(', ')})`);
    tally.links += links.length;
    const sourceComments = Number(item.fields['System.CommentCount'] ?? 0);
    const comments = await jira<{ total: number; comments: { body: unknown }[] }>(
      'GET',
      `/rest/api/3/issue/${issue.key}/comment?maxResults=5000`,
    );
    // The migrated comments are those with the phase's marker (the ADO comment's id in their header); an issue
    // link's comment (an ADO relation's comment, carried by the links phase) is a comment of Jira's as well.
    const markers = comments.comments.flatMap((c) => markerOf(c.body) ?? []);
    if (markers.length !== sourceComments)
      problems.push(
        `#${item.id} ${issue.key}: ${markers.length} migrated comments, the source has ${sourceComments}`,
      );
    if (new Set(markers).size !== markers.length) problems.push(`#${item.id} ${issue.key}: a comment twice`);
    tally.comments[0] = (tally.comments[0] ?? 0) + sourceComments;
    tally.comments[1] = (tally.comments[1] ?? 0) + markers.length;
    tally.linkComments += comments.total - markers.length;
  }
}
const failures = await store.runFailures.list(tenantId, projectId, run.id);
const FAULTY =
  /unreachable|timed out|answered 5\d\d|\b5\d\d\b|429|throttl|TF400733|rate limit|ECONNRESET|socket/i;
const faultFailures = failures.filter((f) => FAULTY.test(f.reason));
for (const f of faultFailures)
  problems.push(`#${f.sourceId} failed for a fault in phase ${f.phase}: ${f.reason}`);
if (ended?.status !== 'COMPLETED' && ended?.status !== 'PARTIAL')
  problems.push(`the run ended ${ended?.status}`);

/** Problems counted by kind (numbers and keys read as N): thousands of lines say less than a few counts. */
function problemKinds(list: string[]): string {
  const kinds = new Map<string, number>();
  for (const p of list) {
    const kind = p.replace(/[A-Z]+-\d+/g, 'KEY-N').replace(/\d+/g, 'N');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `  ${String(n).padStart(6)}  ${kind}`)
    .join('\n');
}

const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(
  [
    '',
    `soak: seed ${SEED}, ${ITEMS} items, ${kills} kills (${starts} engine starts)`,
    'faults injected:',
    ...[...injected.entries()].sort().map(([k, n]) => `  ${k.padEnd(32)} ${n}`),
    `  ${'dynamodb throttling (SDK)'.padEnd(32)} ${dynamoThrottles}`,
    `tally: ${tally.sourceItems} source items (${inManifest.size} in the run's manifest; out of it by type: ${[...outOfScope].map(([t, n]) => `${t} ${n}`).join(', ') || 'none'}), ${issues.length} Jira issues; comments ${tally.comments[1]} of ${tally.comments[0]} (and ${tally.linkComments} of issue links); attached files ${tally.files[1]} of ${tally.files[0]}; ${tally.links} link ends, none twice unless listed below`,
    `run: ${ended?.status}${ended?.failureReason ? ` (${ended.failureReason})` : ''}, ${failures.length} failure(s) recorded, ${faultFailures.length} for a fault`,
    `wall time: ${minutes} min`,
    problems.length === 0
      ? 'soak: OK'
      : `soak: ${problems.length} problem(s), by kind:\n${problemKinds(problems)}\nthe first 50:\n  ${problems.slice(0, 50).join('\n  ')}`,
  ].join('\n'),
);
await sb.stop();
await dynamo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(problems.length === 0 ? 0 : 1);
