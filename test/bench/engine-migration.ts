/**
 * What the engine benches share: DynamoDB Local, the sandboxes in a process of their own, a tenant, a project and a
 * FULL run of a generated project (`items`, `SANDBOX_SEED` 99), then the run migrated as the state machine drives
 * it (Preflight, RunBatch until `finalize`, Finalize), each engine call with a Lambda's 15-minute budget. It
 * counts what the AWS bill and the bench's figures need (requests per tracker, DynamoDB units, S3 requests,
 * engine calls, the process's RSS); it asserts nothing.
 *
 * `requestLog: 'entries'` hands each phase's request log entries over (the engine bench's floors read them);
 * `'counts'` only how many there were, so the bench's own memory does not grow with the project (the scale bench:
 * at 50,000 items the logs are hundreds of thousands of entries).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Run } from '../../functions/domain/runs.ts';
import type { ArtifactStore } from '../../functions/store/artifact-store.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import type { AdoLimitSettings } from '../../local/sandbox/common/limits/ado.ts';
import type { JiraLimitSettings } from '../../local/sandbox/common/limits/jira.ts';
import { countRequests, type DynamoRequests } from '../support/dynamo-requests.ts';
import { freePort } from '../support/global-setup.ts';
import {
  type AwsUsage,
  countArtifacts,
  countCapacity,
  type LogEntry,
  type SandboxSettings,
} from './floors.ts';
import { type FlowFigures, FlowStats } from './flow-stats.ts';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';

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

export const TABLE = 'bench-engine';
/** The engine Lambda's memory (lib/engine.ts), for GB-seconds. */
export const ENGINE_MEMORY_MB = 1024;
/** The engine Lambda's timeout (lib/engine.ts): each engine call's budget, as `context.getRemainingTimeInMillis`. */
const INVOCATION_MS = 900_000;

export interface ArtifactReads {
  gets: number;
  chars: number;
}

/** Counts the engine's artifact reads per artifact (the scale bench: which whole-run documents are read how often). */
function recordReads(inner: ArtifactStore, reads: Map<string, ArtifactReads>): ArtifactStore {
  return {
    put: (key, body) => inner.put(key, body),
    putStream: (key, body) => inner.putStream(key, body),
    remove: (keys) => inner.remove(keys),
    removeUnder: (prefix) => inner.removeUnder(prefix),
    async get(key) {
      const body = await inner.get(key);
      const name = key.replace(/^tenants\/[^/]+\/runs\/[^/]+\//, '');
      const seen = reads.get(name) ?? { gets: 0, chars: 0 };
      reads.set(name, { gets: seen.gets + 1, chars: seen.chars + (body?.length ?? 0) });
      return body;
    },
  };
}

export interface MigrationOptions {
  items: number;
  profile: 'realistic' | 'off';
  /** False leaves the comments phase out. */
  comments: boolean;
  /** True: the run verifies every migrated item at its end, as the API's runs do by default (`options.verify`). */
  verify?: boolean;
  /** Stop after this phase (Infinity: every phase and Finalize). */
  until: number;
  requestLog: 'entries' | 'counts';
  /** The tracker clients' time-out per request (the service's own, 30 s, when absent). */
  trackerTimeoutMs?: number;
  /** Told each phase's row as it ends (the scale bench prints its progress). */
  onPhase?: (row: PhaseRow) => void;
}

export interface PhaseRow extends PhaseSpan {
  jiraCalls: number;
  adoCalls: number;
  /** The phase's request log entries; empty with `requestLog: 'counts'`. */
  jira: LogEntry[];
  ado: LogEntry[];
  flow: FlowFigures;
}

export interface MigrationResult {
  phaseRows: PhaseRow[];
  totalMs: number;
  run: Run | undefined;
  items: number;
  usage: AwsUsage;
  /** The engine's DynamoDB requests (the bench's own reads of the run left out), by operation and kind of item. */
  requests: DynamoRequests;
  /** Engine calls (Lambda invocations: Preflight, each RunBatch, Finalize), in order. */
  engineCalls: number;
  /** Per artifact (its key past the run's id): how often the engine read it and how many characters in all. */
  artifactReads: Map<string, ArtifactReads>;
  /** Peak RSS of this process (engine, its clients, DynamoDB's client) and of the sandboxes' process, in bytes. */
  peakRss: number;
  sandboxPeakRss: number;
  jiraSettings: SandboxSettings<JiraLimitSettings>;
  adoSettings: SandboxSettings<AdoLimitSettings>;
}

export interface MigrationBench {
  /** The bench's DynamoDB table, through the base client (attribute values as DynamoDB stores them). */
  db: DynamoDBClient;
  table: string;
  /** Where the run's artifacts (preflight, plans, reports) are written, one file each. */
  artifactsDir: string;
  migrate(): Promise<MigrationResult>;
  close(): Promise<void>;
}

/**
 * The bench's DynamoDB: DynamoDB Local on a free port, the table (the process's environment names it, as the
 * engine's entry points read it), the store over a document client that counts the capacity every command uses.
 */
export async function openBenchTable(table: string) {
  const dynamo = await startDynamoLocal({ port: await freePort() });
  Object.assign(process.env, {
    TABLE_NAME: table,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    JWT_SECRET: randomBytes(48).toString('base64'),
  });
  const raw = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'eu-west-2',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  await ensureTable(raw, table);
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
  const requests = countRequests(db);
  return { dynamo, raw, usage, requests, store: createStore({ db, name: table }) };
}

/** One phase of a run as the loop below drove it: the RunBatch calls it took (and Finalize's, past the last). */
export interface PhaseSpan {
  /** The row of the last RunBatch call (past the last phase) and the Finalize step. */
  finalized: boolean;
  phase: number;
  ms: number;
  /** Wall-clock start (the sandboxes' log times are wall clock). */
  startedAt: number;
}

/**
 * One run's engine loop as the state machine drives it: RunBatch, called again while it answers `batch` within
 * a phase (out of time); a span per phase; Finalize once it answers `finalize`. Stops after phase `until`.
 */
export async function drivePhases(
  step: {
    phase(): Promise<number>;
    batch(): Promise<string>;
    finalize(): Promise<unknown>;
    beforePhase?(): Promise<void>;
    afterPhase(span: PhaseSpan): Promise<void>;
  },
  until: number,
): Promise<void> {
  for (let guard = 0; guard < 10_000; guard++) {
    const before = await step.phase();
    await step.beforePhase?.();
    const t0 = performance.now();
    const startedAt = Date.now();
    // RunBatch answers `batch` for "call again": within the phase (out of time), or past its end (a row each).
    let answer = 'batch';
    let phase = before;
    while (answer === 'batch' && phase === before) {
      answer = await step.batch();
      phase = await step.phase();
    }
    // Every phase done: the state machine's Finalize step writes the reports and ends the run (timed in this row).
    const finalized = answer === 'finalize';
    if (finalized) await step.finalize();
    await step.afterPhase({ finalized, phase: before, ms: performance.now() - t0, startedAt });
    if (answer !== 'batch' || before >= until) return;
  }
}

export async function openMigrationBench(opts: MigrationOptions): Promise<MigrationBench> {
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

  const { dynamo, raw, usage, requests, store } = await openBenchTable(TABLE);
  const config = {
    ...sandboxConfigFromEnv({ SANDBOX_ITEMS: String(opts.items), SANDBOX_SEED: '99' }),
    profile: opts.profile,
  };
  // The sandboxes run in their own process, as the real trackers run elsewhere (sandbox-process.ts).
  const sb = await startSandboxProcess({
    SANDBOX_ITEMS: String(opts.items),
    SANDBOX_SEED: '99',
    SANDBOX_PROFILE: opts.profile,
  });
  sandboxes = sb;
  // The sandboxes listen on loopback, which the outbound policy refuses but on the ports registered (as npm
  // start's runtime registers its sandboxes').
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
  const artifactReads = new Map<string, ArtifactReads>();
  const httpOptions = opts.trackerTimeoutMs ? { timeoutMs: opts.trackerTimeoutMs } : {};
  const source = new AdoClient(
    {
      organization: `${sb.ado.url}/${config.ado.org}`,
      project: config.ado.project,
      token: config.ado.pat,
    },
    httpOptions,
  );
  const target = new JiraClient(
    {
      baseUrl: sb.jira.url,
      email: config.jira.email,
      token: config.jira.apiToken,
    },
    httpOptions,
  );
  laneLimit = (endpoint) =>
    endpoint.startsWith('GET /sandbox-org') || endpoint.includes('/_apis/')
      ? source.http.pacer.laneState(endpoint).limit
      : target.http.pacer.laneState(endpoint).limit;
  const deps = {
    store,
    journal: new StoreRunJournal(store),
    artifacts: recordReads(countArtifacts(new DiskArtifactStore(dir), usage), artifactReads),
    source,
    target,
    indexLagMs: 0,
    pluginDefinitions: PLUGIN_DEFINITIONS,
  };
  const run = await createRun(store, tenant.id, project.id, 'FULL', {
    ...(opts.comments ? {} : { migrateComments: false }),
    ...(opts.verify ? { verify: true } : {}),
  });
  const ref = { tenantId: tenant.id, runId: run.id };

  // The log's length only (`?count`), or its entries from where the phase began.
  const logLength = async (url: string) =>
    ((await (await fetch(`${url}/_sandbox/requests/count`)).json()) as { count: number }).count;
  const logSince = async (url: string, from: number) =>
    opts.requestLog === 'entries'
      ? ((await (await fetch(`${url}/_sandbox/requests?from=${from}`)).json()) as LogEntry[])
      : [];

  async function migrate(): Promise<MigrationResult> {
    const phaseRows: PhaseRow[] = [];
    const started = performance.now();
    // Each engine call is a Lambda invocation with a 15-minute budget, and a few state transitions of the state
    // machine (RunBatch -> Answer -> WithinBudget -> Loop; Start, Preflight and Finalize add a few more).
    const call = async <T>(
      transitions: number,
      work: (remainingMs: () => number) => Promise<T>,
    ): Promise<T> => {
      const began = performance.now();
      usage.invocations++;
      usage.transitions += transitions;
      return work(() => INVOCATION_MS - (performance.now() - began));
    };
    usage.transitions += 4;
    // The engine's requests only: not the bench's tenant, project and run.
    requests.clear();
    let logsBefore = [0, 0];
    await drivePhases(
      {
        // The bench's own read of the run is not the engine's request.
        phase: () =>
          requests.uncounted(async () => (await store.runs.get(tenant.id, run.id))?.cursor.phase ?? 0),
        batch: () => call(4, (remainingMs) => runBatch(deps, ref, remainingMs, config.jira.projectKey)),
        finalize: () => call(3, () => finalizeStep(deps, ref)),
        async beforePhase() {
          logsBefore = [await logLength(sb.jira.url), await logLength(sb.ado.url)];
          flow.take();
        },
        async afterPhase(span) {
          usage.engineMs += span.ms;
          const [jiraBefore = 0, adoBefore = 0] = logsBefore;
          const [jiraAfter, adoAfter] = [await logLength(sb.jira.url), await logLength(sb.ado.url)];
          phaseRows.push({
            ...span,
            jiraCalls: jiraAfter - jiraBefore,
            adoCalls: adoAfter - adoBefore,
            jira: await logSince(sb.jira.url, jiraBefore),
            ado: await logSince(sb.ado.url, adoBefore),
            flow: flow.take(),
          });
          opts.onPhase?.(phaseRows[phaseRows.length - 1] as PhaseRow);
        },
      },
      opts.until,
    );
    const totalMs = performance.now() - started;
    requests.stop();
    const done = await store.runs.get(tenant.id, run.id);
    return {
      phaseRows,
      totalMs,
      run: done,
      items: done?.totalItems ?? 0,
      usage,
      requests,
      engineCalls: usage.invocations,
      artifactReads,
      peakRss,
      sandboxPeakRss,
      jiraSettings,
      adoSettings,
    };
  }

  return {
    db: raw,
    table: TABLE,
    artifactsDir: dir,
    migrate,
    async close() {
      clearInterval(sampler);
      await sb.stop();
      raw.destroy();
      await dynamo.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
