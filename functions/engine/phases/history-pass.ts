/**
 * The history pages' revisions for a run too large for each window to read the project's stream
 * (history-reads.ts: more than `STREAM_MAX_WINDOWS` windows): one pass over the reporting revisions stream, made
 * by phase 5's `prepare`, writes each revision into its window's parts (run artifacts, `artifactKeys.historyPart`),
 * so that the stream is read once per run instead of the per-item route costing a call per item. Memory is bounded
 * by `PASS_FLUSH_CHARS`: what is held for all windows is written out, the largest windows' first, whenever it
 * reaches that, not held until the stream ends. A part is a line per revision, `<id> <rev> <revision's JSON>`,
 * so that a window's reader keeps the text and parses an item's revisions only when its unit takes them. The
 * index (how many parts, revisions and characters each window has) is written last: its presence means the pass is done.
 *
 * The pass is one piece of work (the stream cannot be resumed part-way through its side-by-side spans): started
 * only with `PASS_MIN_MS` of the invocation left, given up for the run after `PASS_ATTEMPTS` starts that did not
 * end (the time budget, a crash) or when the service refuses the batched read; then every item is read by the
 * per-item route, as before the pass existed.
 */
import type { PhaseContext } from '#phase-kit/context.ts';
import type { ManifestSlices } from '#phase-kit/manifest-slices.ts';
import { artifactKeys } from '#store/artifact-store.ts';
import { TrackerHttpError } from '#trackers/http.ts';

/**
 * Characters of revisions held for all windows before the largest windows' are written out. Held as the JSON text
 * of each revision (about a byte a character), not as parsed objects, which take several times the room.
 */
export const PASS_FLUSH_CHARS = 16 * 1024 * 1024;
/** The invocation time a pass needs to start: 1,000 calls of 200 revisions (50,000 items) take minutes. */
export const PASS_MIN_MS = 5 * 60_000;
/** Starts of the pass before the run gives it up and reads each item's revisions on its own. */
export const PASS_ATTEMPTS = 2;
/** Left of the invocation when a pass under way gives up (the runner needs its own margin after it). */
const PASS_STOP_MS = 60_000;

/** What the pass wrote: parts and revisions per window of `windowItems` manifest positions. */
export interface HistoryIndex {
  version: 1;
  windowItems: number;
  parts: number[];
  revisions: number[];
  /** The characters of each window's parts: what a reader of the window holds. */
  chars: number[];
}

/** A revision as a window's reader keeps it: its number, and its JSON parsed only when its unit takes it. */
export interface RevisionText {
  rev: number;
  json: string;
}

/** The pass's state while no index is written. */
interface PassState {
  attempts: number;
  /** The run reads each item's revisions on its own: the pass failed too often, or the service refused it. */
  givenUp?: string;
}

export interface PassLimits {
  /** Manifest items per window. */
  items: number;
  /** Spans of the stream read side by side (AdoClient.reportingRevisions). */
  slices?: number;
  /** Characters held before the largest windows' parts are written out. */
  flushChars?: number;
}

type PassContext = Pick<PhaseContext, 'deps' | 'run' | 'preflight' | 'invocation'>;

const INDEX_KEY = 'history-pass-index';

/** The run's index once the pass is done; undefined while it is not (or never will be: given up). */
export function historyIndex(ctx: PassContext): Promise<HistoryIndex | undefined> {
  return ctx.invocation.keep(INDEX_KEY, () => {
    const read = (async () => {
      const body = await ctx.deps.artifacts.get(artifactKeys.historyIndex(ctx.run.tenantId, ctx.run.id));
      return body === undefined ? undefined : (JSON.parse(body) as HistoryIndex);
    })();
    // Not done yet (or a failed read): the next ask reads again.
    read.then(
      (index) => index === undefined && ctx.invocation.drop(INDEX_KEY, read),
      () => ctx.invocation.drop(INDEX_KEY, read),
    );
    return read;
  });
}

/** Window w's revisions, part by part, as item id -> its revisions' text, each part as it is read. */
export async function* windowParts(
  ctx: PassContext,
  index: HistoryIndex,
  window: number,
): AsyncGenerator<[number, RevisionText][]> {
  const { tenantId, id } = ctx.run;
  for (let k = 0; k < (index.parts[window] ?? 0); k++) {
    const body = await ctx.deps.artifacts.get(artifactKeys.historyPart(tenantId, id, window, k));
    // A part the pass wrote and the store lost: its items are read one by one (the caller sees them missing).
    if (body === undefined) continue;
    const out: [number, RevisionText][] = [];
    for (let at = 0; at < body.length; ) {
      const end = body.indexOf('\n', at);
      const line = body.slice(at, end < 0 ? body.length : end);
      at = end < 0 ? body.length : end + 1;
      const first = line.indexOf(' ');
      const second = line.indexOf(' ', first + 1);
      if (first < 0 || second < 0) continue;
      out.push([
        Number(line.slice(0, first)),
        { rev: Number(line.slice(first + 1, second)), json: line.slice(second + 1) },
      ]);
    }
    yield out;
  }
}

/**
 * JSON text with every character past U+00FF written as its `\\uXXXX` escape (the same JSON): V8 keeps a string
 * with one such character at two bytes a character, so one emoji in a part would double what its reader holds.
 */
const oneByte = (json: string): string =>
  json.replace(/[\u0100-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Each manifest item's window, by id: two typed arrays sorted by id, a few hundred KB at 50,000 items. */
async function windowsById(manifest: ManifestSlices, windowItems: number) {
  const ids = new Int32Array(manifest.length);
  const types = new Set<string>();
  let n = 0;
  for await (const slice of manifest.slices())
    for (const m of slice) {
      ids[n++] = m.id;
      types.add(m.type);
    }
  const order = Uint32Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (ids[a] as number) - (ids[b] as number),
  );
  const sorted = Int32Array.from(order, (i) => ids[i] as number);
  const windows = Uint32Array.from(order, (i) => Math.floor(i / windowItems));
  const windowOf = (id: number): number | undefined => {
    let lo = 0;
    let hi = n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = sorted[mid] as number;
      if (at === id) return windows[mid];
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  };
  return { windowOf, types: [...types], count: Math.ceil(n / windowItems) };
}

/**
 * Phase 5's `prepare`: the pass, when the run wants it and it is not done or given up. True when the history
 * pages may start (done, given up, or not wanted); false when the next invocation should make it (too little
 * time left here, or this one ran out of time during it).
 */
export async function prepareHistoryPass(
  ctx: PassContext,
  remainingMs: () => number,
  limits: PassLimits,
): Promise<boolean> {
  if (await historyIndex(ctx)) return true;
  const { artifacts } = ctx.deps;
  const { tenantId, id } = ctx.run;
  const stateKey = artifactKeys.historyPass(tenantId, id);
  const saved = await artifacts.get(stateKey);
  const state: PassState = saved === undefined ? { attempts: 0 } : (JSON.parse(saved) as PassState);
  if (state.givenUp) return true;
  if (state.attempts >= PASS_ATTEMPTS) {
    await artifacts.put(stateKey, JSON.stringify({ ...state, givenUp: 'out of time' }));
    return true;
  }
  if (remainingMs() < PASS_MIN_MS) return false;
  // Counted before it starts: a crash during it counts too.
  await artifacts.put(stateKey, JSON.stringify({ attempts: state.attempts + 1 }));
  try {
    const index = await pass(ctx, remainingMs, limits);
    if (!index) return false;
    await artifacts.put(artifactKeys.historyIndex(tenantId, id), JSON.stringify(index));
    ctx.invocation.drop(INDEX_KEY, ctx.invocation.held(INDEX_KEY));
    return true;
  } catch (err) {
    // The service refused the batched read (an older server, a proxy): the items are read one by one.
    if (!(err instanceof TrackerHttpError)) throw err;
    await artifacts.put(
      stateKey,
      JSON.stringify({ attempts: state.attempts + 1, givenUp: `Azure DevOps answered ${err.status}` }),
    );
    return true;
  }
}

/** The stream read once into the windows' parts; undefined when the invocation ran out of time first. */
async function pass(
  ctx: PassContext,
  remainingMs: () => number,
  limits: PassLimits,
): Promise<HistoryIndex | undefined> {
  const { artifacts, source } = ctx.deps;
  const { tenantId, id } = ctx.run;
  const { windowOf, types, count } = await windowsById(ctx.preflight.manifest, limits.items);
  const parts = new Array<number>(count).fill(0);
  const revisions = new Array<number>(count).fill(0);
  const chars = new Array<number>(count).fill(0);
  const held = new Map<number, { lines: string[]; chars: number }>();
  let heldChars = 0;
  const flushAt = limits.flushChars ?? PASS_FLUSH_CHARS;
  /** The largest windows' lines written out, one part each, until at most `keep` characters are held. */
  const flush = async (keep: number) => {
    const largest = [...held].sort((a, b) => b[1].chars - a[1].chars);
    for (const [w, h] of largest) {
      if (heldChars <= keep) break;
      await artifacts.put(artifactKeys.historyPart(tenantId, id, w, parts[w] as number), h.lines.join(''));
      parts[w] = (parts[w] as number) + 1;
      held.delete(w);
      heldChars -= h.chars;
    }
  };
  for await (const batch of source.reportingRevisions({ types, slices: limits.slices ?? 1 })) {
    for (const r of batch) {
      const w = windowOf(r.id);
      if (w === undefined) continue;
      const line = `${r.id} ${r.rev} ${oneByte(JSON.stringify(r))}\n`;
      const h = held.get(w) ?? { lines: [], chars: 0 };
      h.lines.push(line);
      h.chars += line.length;
      held.set(w, h);
      revisions[w] = (revisions[w] as number) + 1;
      chars[w] = (chars[w] as number) + line.length;
      heldChars += line.length;
    }
    // Written out while the stream waits: what is held stays within the limit.
    if (heldChars >= flushAt) await flush(flushAt / 2);
    if (remainingMs() < PASS_STOP_MS) return undefined;
  }
  await flush(0);
  return { version: 1, windowItems: limits.items, parts, revisions, chars };
}
