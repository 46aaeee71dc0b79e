/**
 * The toolkit the engine's phases and the plugins share (first written for phases 6 and 7): their units (the
 * manifest items the id map knows, in manifest order, fixed once per run as an artifact), run-scoped artifact
 * keys, a small worker pool and the line between "Jira refused this unit" (a failure, the run goes on) and
 * "Jira is gone" (the chunk is thrown and worked again).
 */
import type { Run } from '#domain/runs.ts';
import { CHUNK_SIZE } from '#domain/runs.ts';
import { nowMs } from '#platform/clock.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import {
  type ChunkOutcome,
  emptyOutcome,
  type ItemNote,
  type PhaseContext,
  type UnitOutcome,
} from './context.ts';
import type { ManifestSlices } from './manifest-slices.ts';

/** An artifact of this run, next to the preflight one. */
export const runArtifactKey = (run: Pick<Run, 'tenantId' | 'id'>, name: string) =>
  `tenants/${run.tenantId}/runs/${run.id}/${name}`;

/**
 * Items worked side by side within a chunk (each item's own writes stay in order): the whole chunk (CHUNK_SIZE).
 * Jira answers a write in a few hundred ms and takes 100 a second per endpoint, so it takes about rate x latency =
 * 30 at once to fill an endpoint; the HTTP layer holds each endpoint's requests to what it takes and each issue's
 * writes under Jira's per-issue limit (docs/engine-and-limits.md), so a chunk's time is its slowest item's.
 */
export const ITEM_CONCURRENCY = 50;

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
  // A manifest slice at a time: only the ids are kept, never a slice's id map entries past their own slice.
  const units: number[] = [];
  for await (const slice of preflight.manifest.slices()) {
    const ids = slice.map((m) => m.id);
    const known = await deps.store.idMap.getMany(run.tenantId, run.projectId, ids);
    for (const id of ids) if (known.has(id)) units.push(id);
  }
  await deps.artifacts.put(key, JSON.stringify(units));
  return units;
}

/**
 * The Jira keys of items a pass's units look up one unit at a time (the items a comment refers to, `#123`): each
 * item read from the id map once per pass, since no phase after create writes a key or adds an item, and the
 * lookups the units make in one turn of the event loop sent as one read (a BatchGet of up to 100 keys). A read
 * that fails is the asking units' error, and is not kept.
 */
export function keysOnce(
  read: (ids: number[]) => Promise<Map<number, { targetKey: string }>>,
): (ids: Iterable<number>) => Promise<Map<number, string>> {
  const keys = new Map<number, Promise<string | undefined>>();
  let next: number[] | undefined;
  let sent: Promise<Map<number, { targetKey: string }>> | undefined;
  return async (ids) => {
    const asked = [...new Set(ids)];
    for (const id of asked) {
      if (keys.has(id)) continue;
      if (!next || !sent) {
        const batch: number[] = [];
        next = batch;
        sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          next = undefined;
          return read(batch);
        });
      }
      next.push(id);
      const key = sent.then((found) => found.get(id)?.targetKey);
      key.catch(() => keys.delete(id));
      keys.set(id, key);
    }
    // Taken before any await: a failed read leaves the cache at once, and must still be these units' error.
    const pending = asked.map((id) => [id, keys.get(id)] as const);
    const found = new Map<number, string>();
    for (const [id, lookup] of pending) {
      const key = await lookup;
      if (key !== undefined) found.set(id, key);
    }
    return found;
  };
}

/** The manifest's ids in order, read a slice at a time (a unit list of numbers: 8 bytes an item). */
export async function manifestIdList(manifest: ManifestSlices): Promise<number[]> {
  const ids: number[] = [];
  for await (const slice of manifest.slices()) for (const m of slice) ids.push(m.id);
  return ids;
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

/** An ItemNote writing into `outcome`: each line to its log, each warning to its warnings under the item's name. */
export function noteInto(outcome: UnitOutcome, sourceId: number): ItemNote {
  return (line, warning) => {
    outcome.log.push(line);
    if (warning !== undefined) outcome.warnings.push(`#${sourceId}: ${warning}`);
  };
}

/** Adds `part` to `into` (counts, lines, failures, warnings). */
export function addOutcome(into: UnitOutcome, part: UnitOutcome): void {
  into.success += part.success;
  into.failure += part.failure;
  into.skipped += part.skipped;
  into.log.push(...part.log);
  into.failures.push(...part.failures);
  into.warnings.push(...part.warnings);
  if (part.marks?.length) into.marks = [...(into.marks ?? []), ...part.marks];
}

/**
 * A unit worker's `work` for units done a block at a time (one bulk call for up to CHUNK_SIZE items): the block
 * starts at the first unit asked for that no block under way covers, so blocks follow the checkpoint as chunks
 * did, and every unit of a block awaits the same promise, so a pool with a window of one block works one block
 * at a time and its units finish (and are checkpointed) together. The block's first unit carries its outcome,
 * the others an empty one; a block that throws throws for each of its units.
 */
export function blockUnits(
  total: number,
  block: (from: number) => Promise<UnitOutcome>,
): (index: number) => Promise<UnitOutcome> {
  let current: { from: number; to: number; worked: Promise<UnitOutcome> } | undefined;
  return (index) => {
    if (!current || index < current.from || index >= current.to)
      current = { from: index, to: Math.min(index + CHUNK_SIZE, total), worked: block(index) };
    const { from, worked } = current;
    return worked.then((outcome) => (index === from ? outcome : emptyOutcome()));
  };
}

/**
 * Reads shared by a block of CHUNK_SIZE consecutive units (one ADO call, one id map read for 50 items), done
 * once, when the block's first unit asks. A read concern, not a way of working units: the units themselves are
 * worked one by one by the runner's pool. The runner's pool starts units in order, so a unit pass makes the same
 * batched reads a chunk did; blocks two behind are forgotten (a unit under way keeps what it read). Given the
 * phase's `total` units, the next `ahead` blocks are read as soon as one is asked for, so the window's units never
 * wait on a block's round trips (they are a chain: the id map, then the issues it names); a read nobody asks for
 * yet keeps its error for whoever does.
 */
export function blockReads<T>(
  read: (from: number, to: number) => Promise<T>,
  total = 0,
  ahead = 1,
): (index: number) => Promise<T> {
  const blocks = new Map<number, Promise<T>>();
  const start = (block: number): Promise<T> => {
    let got = blocks.get(block);
    if (!got) {
      got = read(block * CHUNK_SIZE, (block + 1) * CHUNK_SIZE);
      got.catch(() => {}); // read ahead: its error surfaces when a unit of that block awaits it
      blocks.set(block, got);
    }
    return got;
  };
  return (index) => {
    const block = Math.floor(index / CHUNK_SIZE);
    const got = start(block);
    for (let next = block + 1; next <= block + ahead && next * CHUNK_SIZE < total; next++) start(next);
    for (const b of blocks.keys()) if (b < block - 1) blocks.delete(b);
    return got;
  };
}

/**
 * `build` over `items`, one after another, the event loop given a turn between two. Building an item's
 * description takes up to a second or two of CPU (HTML up to the converter's limits, #domain/adf/html-limits.ts);
 * fifty in one stretch would hold every request under way past its timeout (a timer that fires late aborts a
 * request whose answer has already come).
 */
export async function mapYielding<T, R>(items: readonly T[], build: (item: T) => R): Promise<R[]> {
  const out: R[] = [];
  for (const [i, item] of items.entries()) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    out.push(build(item));
  }
  return out;
}

/** Thrown by a unit that stops because another unit of its chunk failed (or its item ran out of time). */
export class ChunkAbandoned extends Error {
  override name = 'ChunkAbandoned';
}

/**
 * How long one item's unit may work. Units are cut to take far less (a part of a thread's comments about 30 s at
 * Jira's per-issue limit, an item's files a few uploads, each request bounded by the client's timeout): only an
 * item something is wrong with reaches it, and it then fails alone, well inside one invocation.
 */
export const ITEM_BUDGET_MS = 5 * 60_000;

/**
 * Works one item's unit under a time budget (ITEM_BUDGET_MS; EngineDeps.itemBudgetMs in tests). Past it, the
 * unit's `stopped()` turns true as when its pass is abandoned: the unit stops at its next check between two
 * writes (ChunkAbandoned), and `late(reason)` is its result: its item fails with the reason, the pass goes on.
 * The result waits for the unit to settle, so nothing of it writes after its checkpoint; a unit that ends anyway
 * keeps its own result, and any other error is thrown as before. Only awaited work is ever cut short: nothing
 * interrupts synchronous work (parsing HTML), which the converter's input limits bound instead
 * (#domain/adf/html-limits.ts).
 */
export async function withinItemBudget<R>(
  budgetMs: number,
  stopped: () => boolean,
  work: (stopped: () => boolean) => Promise<R>,
  late: (reason: string) => R,
): Promise<R> {
  const started = nowMs();
  const over = () => nowMs() - started >= budgetMs;
  try {
    return await work(() => stopped() || over());
  } catch (err) {
    if (!(err instanceof ChunkAbandoned) || stopped() || !over()) throw err;
    return late(`stopped after ${Math.round(budgetMs / 1000)} s, the most one item may take`);
  }
}

/**
 * Whether Jira refused the request itself: a 4xx that stands (the item's or the tenant's to mend). Not a 5xx
 * or an unreachable Jira (a passing fault: the run waits it out, trackers/tracker-errors.ts `passingFault`), a
 * 401 (the credentials' business) or a 429 (the pacer's): an item never fails for those.
 */
export function isRefusal(err: unknown): err is TrackerHttpError {
  return (
    err instanceof TrackerHttpError &&
    err.tracker === 'target' &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 401 &&
    err.status !== 429
  );
}

/**
 * Jira's refusal of one request, as a reason for the failure report; undefined for anything else (a passing
 * fault, a bug): those are thrown, and the unit, safe to work again, is worked again after the run's wait.
 */
export function refusalOf(err: unknown): string | undefined {
  if (!isRefusal(err)) return undefined;
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
  /** The item's warnings, each without the item's name (the outcome names it). */
  warnings?: string[];
}

/** One item's result as a unit's outcome (a failure carries its reason, for the runner to record). */
export function unitResult(sourceId: number, r: ItemResult): UnitOutcome {
  const out = emptyOutcome();
  out[r.kind]++;
  out.log.push(r.line);
  if (r.kind === 'failure') out.failures.push({ sourceId, reason: r.reason ?? 'refused by Jira' });
  for (const w of r.warnings ?? []) out.warnings.push(`#${sourceId}: ${w}`);
  return out;
}

/** Adds pooled per-item results to the chunk's outcome, each failure with its reason (the runner records them). */
export function tallyResults(ids: number[], results: ItemResult[], outcome: ChunkOutcome): void {
  for (const [i, r] of results.entries()) {
    outcome[r.kind]++;
    outcome.log.push(r.line);
    if (r.kind === 'failure')
      outcome.failures.push({ sourceId: ids[i] as number, reason: r.reason ?? 'refused by Jira' });
    for (const w of r.warnings ?? []) outcome.warnings.push(`#${ids[i]}: ${w}`);
  }
}
