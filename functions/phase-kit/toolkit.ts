/**
 * The toolkit the engine's phases and the plugins share (first written for phases 6 and 7): their units (the
 * manifest items the id map knows, in manifest order, fixed once per run as an artifact), run-scoped artifact
 * keys, a small worker pool and the line between "Jira refused this unit" (a failure, the run goes on) and
 * "Jira is gone" (the chunk is thrown and worked again).
 */
import type { Run } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { ChunkOutcome, PhaseContext } from './context.ts';

/** An artifact of this run, next to the preflight one. */
export const runArtifactKey = (run: Pick<Run, 'tenantId' | 'id'>, name: string) =>
  `tenants/${run.tenantId}/runs/${run.id}/${name}`;

/** Items worked side by side within a chunk (each item's own writes stay in order). */
export const ITEM_CONCURRENCY = 4;

/**
 * The phase's units: source ids of the manifest items that have a Jira issue (created or found), in manifest
 * order. Computed on the phase's first call and kept as an artifact, so every later call (the runner asks
 * before each chunk) sees the same list without reading the whole id map again.
 */
export async function migratedUnits(ctx: PhaseContext, artifactName: string): Promise<number[]> {
  const { deps, run, preflight } = ctx;
  const key = runArtifactKey(run, artifactName);
  const saved = await deps.artifacts.get(key);
  if (saved) return JSON.parse(saved) as number[];
  const ids = preflight.manifest.map((m) => m.id);
  const known = await deps.store.idMap.getMany(run.tenantId, run.projectId, ids);
  const units = ids.filter((id) => known.has(id));
  await deps.artifacts.put(key, JSON.stringify(units));
  return units;
}

/**
 * Runs `work` over `items`, at most `limit` at a time; results in the order of `items`. When one throws, no
 * further item starts, `stopped()` turns true for those under way (long ones check it between writes), and
 * the first error is thrown only once all have settled: nothing of this chunk still writes while it is worked
 * again (on Lambda a promise left running would resume inside the next invocation).
 */
export async function inPool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, stopped: () => boolean) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const stopped = () => failed !== undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await work(items[i] as T, stopped);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.error;
  return results;
}

/** Thrown by a unit that stops because another unit of its chunk failed. */
export class ChunkAbandoned extends Error {
  override name = 'ChunkAbandoned';
}

/**
 * Jira's refusal of one request, as a reason for the failure report; undefined for anything else (the tracker
 * unreachable, a bug): those are thrown, and the chunk, safe to work again, is retried.
 */
export function refusalOf(err: unknown): string | undefined {
  if (!(err instanceof TrackerHttpError) || err.tracker !== 'target') return undefined;
  const body = err.body as { errorMessages?: string[]; errors?: Record<string, string> } | undefined;
  const details = [
    ...(body?.errorMessages ?? []),
    ...Object.entries(body?.errors ?? {}).map(([k, v]) => `${k}: ${v}`),
  ];
  return details.length ? `Jira answered ${err.status}: ${details.join('; ')}` : err.message;
}

/** One item's result in a pooled chunk. */
export interface ItemResult {
  kind: 'success' | 'skipped' | 'failure';
  line: string;
  reason?: string;
}

/** Adds pooled per-item results to the chunk's outcome, recording each failure with its reason. */
export async function tallyResults(
  ctx: PhaseContext,
  phase: number,
  ids: number[],
  results: ItemResult[],
  outcome: ChunkOutcome,
): Promise<void> {
  const { store } = ctx.deps;
  const { run } = ctx;
  for (const [i, r] of results.entries()) {
    outcome[r.kind]++;
    outcome.log.push(r.line);
    if (r.kind === 'failure') {
      await store.runFailures.record(run.tenantId, run.projectId, run.id, {
        sourceId: ids[i] as number,
        phase,
        reason: r.reason ?? 'refused by Jira',
        at: nowIso(),
      });
    }
  }
}
