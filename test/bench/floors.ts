/**
 * The bench's arithmetic: a phase's floor time from the sandboxes' modelled limits, and the AWS bill of a run.
 * Floor (the least time the trackers allow): the largest of, per Jira endpoint, its requests / its rate (burst
 * bucket); the busiest issue's writes under the per-issue windows (n writes under W per S seconds need
 * floor((n - 1) / W) x S); that issue's writes one after another at the mean write latency (an issue's writes are
 * ordered); the sprints' start and close steps one after another (date order); and Azure DevOps' calls past what its
 * throughput budget lets through without blocking.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ArtifactStore } from '../../functions/store/artifacts.ts';
import type { AdoLimitSettings } from '../../local/sandbox/common/limits/ado.ts';
import type { JiraLimitSettings } from '../../local/sandbox/common/limits/jira.ts';
import type { LatencySettings } from '../../local/sandbox/common/limits/latency.ts';

export interface LogEntry {
  method: string;
  path: string;
  status: number;
  endpoint?: string;
  reason?: string;
  /** The answer's time at the sandbox. */
  ms?: number;
  /** When the request arrived and when it was answered (ISO 8601). */
  receivedAt?: string;
  at?: string;
  /** Who sent it (a hash of its Authorization header): tells several runs' requests to one site apart. */
  client?: string;
}

export interface SandboxSettings<L> {
  latency: LatencySettings;
  limits: L;
}

export interface PhaseFloor {
  seconds: number;
  /** What sets it. */
  by: string;
  endpoints: { endpoint: string; count: number; rate: number; seconds: number }[];
  throttled: Record<string, number>;
  busiestIssue?: { key: string; writes: number };
}

/**
 * The mean of the sandbox's latency draw: n writes one after another take n x the mean on average (the log-normal's
 * mean is median x exp(sigma^2 / 2), sigma = ln(p95 / median) / 1.645), more than n x the median.
 */
export function meanMs(p: { medianMs: number; p95Ms: number }): number {
  if (p.medianMs <= 0 || p.p95Ms <= p.medianMs) return Math.max(0, p.medianMs);
  const sigma = Math.log(p.p95Ms / p.medianMs) / 1.6449;
  return p.medianMs * Math.exp((sigma * sigma) / 2);
}

/** A sprint's start or close: one board's are a chain in date order. */
const SPRINT_STEP = 'POST /rest/agile/1.0/sprint/{sprintId}';
const isJiraWrite = (e: LogEntry) => e.method !== 'GET' && !e.path.split('?')[0]?.endsWith('/search/jql');
const issueOf = (path: string) => {
  const key = /\/rest\/api\/3\/issue\/([^/?]+)/.exec(path)?.[1];
  return key === 'bulk' ? undefined : key;
};

export function phaseFloor(
  jira: LogEntry[],
  ado: LogEntry[],
  jiraSettings: SandboxSettings<JiraLimitSettings>,
  adoSettings: SandboxSettings<AdoLimitSettings>,
): PhaseFloor {
  const candidates: { seconds: number; by: string }[] = [{ seconds: 0, by: 'nothing' }];
  const throttled: Record<string, number> = {};
  for (const e of [...jira, ...ado]) {
    if (e.status === 429) throttled[e.reason ?? 'injected'] = (throttled[e.reason ?? 'injected'] ?? 0) + 1;
    else if (e.reason) throttled[e.reason] = (throttled[e.reason] ?? 0) + 1;
  }
  // Burst buckets: what the phase asked of each endpoint (refusals included: they spent no token, so not them).
  const counts = new Map<string, number>();
  for (const e of jira) {
    if (e.status === 429) continue;
    const key = e.endpoint ?? `${e.method} ${e.path.split('?')[0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const burst = jiraSettings.limits.burst;
  const endpoints = [...counts.entries()]
    .map(([endpoint, count]) => {
      const method = endpoint.split(' ')[0] ?? 'GET';
      const rate = burst.overrides[endpoint] ?? burst.perMethod[method] ?? 100;
      return { endpoint, count, rate, seconds: burst.enabled ? count / rate : 0 };
    })
    .sort((a, b) => b.seconds - a.seconds || b.count - a.count);
  if (endpoints[0]) candidates.push({ seconds: endpoints[0].seconds, by: `burst ${endpoints[0].endpoint}` });
  // The busiest issue: per-issue windows, and its ordered writes at the mean latency.
  const writes = new Map<string, number>();
  for (const e of jira) {
    const key = e.status !== 429 && isJiraWrite(e) ? issueOf(e.path) : undefined;
    if (key) writes.set(key, (writes.get(key) ?? 0) + 1);
  }
  const [busiest] = [...writes.entries()].sort((a, b) => b[1] - a[1]);
  if (busiest) {
    const [key, n] = busiest;
    if (jiraSettings.limits.perIssue.enabled) {
      const windows = Math.max(
        0,
        ...jiraSettings.limits.perIssue.windows.map((w) => Math.floor((n - 1) / w.writes) * w.seconds),
      );
      candidates.push({ seconds: windows, by: `per-issue windows ${key}` });
    }
    candidates.push({
      seconds: (n * meanMs(jiraSettings.latency.write)) / 1000,
      by: `ordered writes ${key}`,
    });
  }
  // Sprints are started and closed in date order (one active sprint at a time on a board without parallel
  // sprints): a chain of writes, one after another.
  const sprintSteps = jira.filter((e) => e.status < 300 && e.endpoint === SPRINT_STEP);
  if (sprintSteps.length > 0)
    candidates.push({
      seconds: (sprintSteps.length * meanMs(jiraSettings.latency.write)) / 1000,
      by: 'sprint steps in date order',
    });
  // Azure DevOps: TSTUs past the blocking point at the budget's pace.
  const a = adoSettings.limits;
  if (a.enabled) {
    const cost = ado.reduce((sum, e) => {
      if (e.status === 429) return sum;
      const path = e.path.split('?')[0]?.toLowerCase() ?? '';
      const kind = path.endsWith('/wiql')
        ? 'query'
        : e.method === 'GET' || path.endsWith('/workitemsbatch')
          ? 'read'
          : 'write';
      return sum + (a.costs.byEndpoint[e.endpoint ?? ''] ?? a.costs[kind]);
    }, 0);
    const over = cost - a.budget * a.blockAtFactor;
    if (over > 0)
      candidates.push({ seconds: (over / a.budget) * a.windowSeconds, by: 'ADO throughput budget' });
  }
  const best = candidates.reduce((x, y) => (y.seconds > x.seconds ? y : x));
  return {
    seconds: best.seconds,
    by: best.by,
    endpoints,
    throttled,
    ...(busiest ? { busiestIssue: { key: busiest[0], writes: busiest[1] } } : {}),
  };
}

/**
 * The floor of one phase of several runs working one Jira site at once (the site bench): the site's buckets and
 * per-issue windows are shared, so the runs' Jira requests of the phase count together; each run's own chains (its
 * board's sprint steps in date order, its busiest issue's ordered writes) and its own Azure DevOps organization's
 * budget count per run. The largest of those.
 */
export function siteFloor(
  runs: { jira: LogEntry[]; ado: LogEntry[] }[],
  jiraSettings: SandboxSettings<JiraLimitSettings>,
  adoSettings: SandboxSettings<AdoLimitSettings>,
): PhaseFloor {
  const together = phaseFloor(
    runs.flatMap((r) => r.jira.filter((e) => e.endpoint !== SPRINT_STEP)),
    [],
    jiraSettings,
    adoSettings,
  );
  const floors = [together, ...runs.map((r) => phaseFloor(r.jira, r.ado, jiraSettings, adoSettings))];
  return floors.reduce((x, y) => (y.seconds > x.seconds ? y : x));
}

export interface AwsUsage {
  readUnits: number;
  writeUnits: number;
  s3Puts: number;
  s3Gets: number;
  invocations: number;
  transitions: number;
  engineMs: number;
}

/**
 * Published prices (us-east-1, on-demand): Lambda on Arm (Graviton, the engine's architecture in lib/engine.ts)
 * $0.0000133334 per GB-second for the first 7.5 billion GB-seconds a month and $0.20 per million requests
 * (https://aws.amazon.com/lambda/pricing/; x86 is $0.0000166667); DynamoDB $0.625 per million write request units and $0.125 per million
 * read request units (https://aws.amazon.com/dynamodb/pricing/on-demand/); Step Functions Standard $0.025 per
 * 1,000 state transitions (https://aws.amazon.com/step-functions/pricing/); S3 Standard $0.005 per 1,000 PUT and
 * $0.0004 per 1,000 GET (https://aws.amazon.com/s3/pricing/).
 */
export const PRICES = {
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  dynamoWrite: 0.625 / 1e6,
  dynamoRead: 0.125 / 1e6,
  transition: 0.025 / 1000,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
};

export function awsCostPer10k(usage: AwsUsage, items: number, memoryMb: number) {
  const scale = 10_000 / Math.max(items, 1);
  const gbSeconds = (usage.engineMs / 1000) * (memoryMb / 1024) * scale;
  const lambda = gbSeconds * PRICES.lambdaGbSecond + usage.invocations * scale * PRICES.lambdaRequest;
  const dynamo = (usage.readUnits * PRICES.dynamoRead + usage.writeUnits * PRICES.dynamoWrite) * scale;
  const stepFunctions = usage.transitions * scale * PRICES.transition;
  const s3 = (usage.s3Puts * PRICES.s3Put + usage.s3Gets * PRICES.s3Get) * scale;
  return { gbSeconds, lambda, dynamo, stepFunctions, s3, total: lambda + dynamo + stepFunctions + s3 };
}

/** Read commands, by the names the document client's and the base client's commands carry. */
const READS = new Set([
  'GetCommand',
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetCommand',
  'BatchGetItemCommand',
  'TransactGetCommand',
  'TransactGetItemsCommand',
]);

/**
 * What AWS bills a transaction's Put items beyond what DynamoDB Local reports: Local reports a transaction as two
 * units per KB of all its items together (measured: an update of a 5 KB item alone 10, with four 150-byte puts
 * 12), AWS rounds each item up to its KB before doubling (two units for each small item). The Puts' sizes are
 * known from the request (their JSON, a little over DynamoDB's count); the Update's stored item is not, so only
 * the Puts' rounding is added. https://aws.amazon.com/dynamodb/pricing/on-demand/
 */
export function transactionRounding(input: { TransactItems?: { Put?: { Item?: unknown } }[] }): number {
  let units = 0;
  for (const t of input.TransactItems ?? []) {
    if (!t.Put?.Item) continue;
    const kb = Buffer.byteLength(JSON.stringify(t.Put.Item)) / 1024;
    units += 2 * (Math.ceil(kb) - kb);
  }
  return units;
}

/** Asks DynamoDB for the capacity every command consumed (a middleware on the document client) and adds it up. */
export function countCapacity(db: DynamoDBDocumentClient, usage: AwsUsage): void {
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const units = [consumed]
        .flat()
        .reduce((n: number, c) => n + ((c as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0), 0);
      if (READS.has(context.commandName ?? '')) usage.readUnits += units;
      else
        usage.writeUnits +=
          units +
          (context.commandName?.startsWith('TransactWrite')
            ? transactionRounding(args.input as Parameters<typeof transactionRounding>[0])
            : 0);
      return result;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );
}

/** The artifact store, counting its requests as S3 would bill them. */
export function countArtifacts(inner: ArtifactStore, usage: AwsUsage): ArtifactStore {
  return {
    put: (key, body) => {
      usage.s3Puts++;
      return inner.put(key, body);
    },
    get: (key) => {
      usage.s3Gets++;
      return inner.get(key);
    },
    putStream: (key, body) => {
      usage.s3Puts++;
      return inner.putStream(key, body);
    },
    remove: (keys) => inner.remove(keys),
    removeUnder: (prefix) => inner.removeUnder(prefix),
  };
}
