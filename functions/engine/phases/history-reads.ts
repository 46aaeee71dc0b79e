/**
 * The revisions the history files (history.ts) are made of, read in batches: the reporting revisions API answers
 * the whole project's revisions in change order, 200 a call, where the per-item route costs a call per item. It
 * has no filter by id, so the run's items are read a window at a time: the next `WINDOW_ITEMS` items of the
 * manifest from the one asked for, their revisions kept as the stream goes by and everything else dropped at once.
 * Memory is bounded by two windows (the one units read from and the next, read ahead; each within
 * `MAX_HELD_REVISIONS`: past it the window shrinks to what fits, and the items it gave up are read by a later
 * window), not by the project. A window lives as long as the invocation's
 * source client (one per engine invocation): the chunks after the first one of a window cost no source call.
 * An item's revisions are handed to its unit as soon as the stream has brought them whole, not when the window's
 * stream ends: the stream is in change order, so most items are complete long before its last batch.
 *
 * A run spanning more than `STREAM_MAX_WINDOWS` windows would have each window read the whole project's stream
 * (calls, bytes and CPU growing with the project for every window): there phase 5's `prepare` reads the stream
 * once into each window's parts (history-pass.ts), and a window reads its own parts back.
 *
 * An item the stream did not bring whole (changed since the read, moved in from another project, its type
 * changed) is read by the per-item route, as is every item of a run the batched read does not pay for (an
 * incremental run or an area filter takes a small part of what the stream carries) and of a run whose pass was
 * given up.
 */
import { CHUNK_SIZE } from '#domain/runs.ts';
import type { PhaseContext } from '#phase-kit/context.ts';
import type { ManifestSlices } from '#phase-kit/manifest-slices.ts';
import type { AdoClient, AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import {
  type HistoryIndex,
  historyIndex,
  prepareHistoryPass,
  type RevisionText,
  windowParts,
} from './history-pass.ts';

/** Manifest items one window covers: 20 chunks of the attachments phase. */
export const WINDOW_ITEMS = 1000;
/**
 * Manifest items a window of the one pass's parts covers (history-pass.ts): its reader holds its items' revisions
 * as text, two windows at a time.
 */
export const PASS_WINDOW_ITEMS = 500;
/** The most revisions a window holds (a few KB each, long text included: tens of MB). */
export const MAX_HELD_REVISIONS = 25_000;

/**
 * Spans of time a window's stream is read in, side by side (AdoClient.reportingRevisions): one stream of the
 * project's revisions is a call after another (~40 calls, 13 s at 2,000 items under the realistic latency), which
 * the first units of each window would wait for.
 */
export const REVISION_SLICES = 8;

/**
 * Windows a run may span and still read the project's stream. The stream carries the whole project (the API has
 * no filter by id), so a window reading it costs the project, not the window; with at most two windows of the run
 * (a FULL run's manifest is the project's items of its types) a window's read is at most twice its own items'.
 */
export const STREAM_MAX_WINDOWS = 2;

export interface WindowLimits {
  items: number;
  heldRevisions: number;
  /** Spans read side by side (1 or none: one stream from the beginning). */
  slices?: number;
  /** Windows the run may span for its windows to read the stream (STREAM_MAX_WINDOWS when absent). */
  streamWindows?: number;
  /** Characters the one pass of a larger run holds before writing out (history-pass.ts's default when absent). */
  flushChars?: number;
  /** Items per window of the one pass's parts (`items` when absent). */
  passItems?: number;
}
const LIMITS: WindowLimits = {
  items: WINDOW_ITEMS,
  heldRevisions: MAX_HELD_REVISIONS,
  slices: REVISION_SLICES,
  streamWindows: STREAM_MAX_WINDOWS,
  passItems: PASS_WINDOW_ITEMS,
};

/** A unit waiting for an item's revisions 1..rev from the stream. */
interface Waiter {
  rev: number;
  /** The revisions once the stream brought them whole; undefined once the stream is over without them. */
  answer(revisions: AdoWorkItem[] | undefined): void;
}

interface Window {
  from: number;
  to: number;
  revisions: Map<number, AdoWorkItem[]>;
  ready: Promise<void>;
  /** The service refused the batched read (an older server, a proxy): this window's items are read one by one. */
  refused?: boolean;
  /** Units whose item the stream has not brought whole yet, by item id; all answered when the stream is over. */
  waiting: Map<number, Waiter[]>;
  /** The stream is over (read to its end, refused or failed): nobody waits on it any more. */
  over?: boolean;
}

/** A window of the pass's parts: its items' revisions as text, parsed when a unit takes its item's. */
interface PartsWindow {
  from: number;
  revisions: Map<number, RevisionText[]>;
  ready: Promise<void>;
}

interface PartsReader {
  /** As Reader's: at most two held. */
  windows: PartsWindow[];
}

interface Reader {
  /** The window units read from and, read ahead, the one after it: at most two held. */
  windows: Window[];
  /**
   * Each item's manifest position, for a run of at most `streamWindows` windows (a reader exists for no other):
   * a few thousand entries at most.
   */
  positions?: { manifest: ManifestSlices; at: Promise<Map<number, number>> };
}

/** Whether reading the whole project's revisions pays off: a FULL run of the whole project (of some types). */
export function batchedHistoryReads(ctx: Pick<PhaseContext, 'run'>): boolean {
  return ctx.run.type === 'FULL' && !ctx.run.options.areaFilter;
}

async function positionOf(reader: Reader, manifest: ManifestSlices, id: number): Promise<number | undefined> {
  if (reader.positions?.manifest !== manifest) {
    const at = (async () => {
      const positions = new Map<number, number>();
      for await (const slice of manifest.slices()) for (const m of slice) positions.set(m.id, positions.size);
      return positions;
    })();
    reader.positions = { manifest, at };
    // A failed read is made again by the next unit to ask.
    at.catch(() => {
      if (reader.positions?.at === at) reader.positions = undefined;
    });
  }
  return (await reader.positions.at).get(id);
}

/** Revisions 1..rev, each once: what the item's history file needs. */
function whole<R extends { rev: number }>(revisions: R[] | undefined, rev: number): R[] | undefined {
  if (!revisions || revisions.length !== rev) return undefined;
  const sorted = [...revisions].sort((a, b) => a.rev - b.rev);
  return sorted.every((r, i) => r.rev === i + 1) ? sorted : undefined;
}

/** Answers the units waiting for these items whose revisions the stream has now brought whole. */
function answerWhole(window: Window, ids: Iterable<number>): void {
  for (const id of ids) {
    const waiters = window.waiting.get(id);
    if (!waiters) continue;
    const left = waiters.filter((w) => {
      const revisions = whole(window.revisions.get(id), w.rev);
      if (revisions) w.answer(revisions);
      return !revisions;
    });
    if (left.length > 0) window.waiting.set(id, left);
    else window.waiting.delete(id);
  }
}

async function fill(
  source: AdoClient,
  manifest: ManifestSlices,
  window: Window,
  asked: number,
  maxHeld: number,
  slices = 1,
): Promise<void> {
  let held = 0;
  try {
    const slice = await manifest.range(window.from, window.to);
    const position = new Map(slice.map((m, i) => [m.id, window.from + i]));
    for await (const batch of source.reportingRevisions({
      types: [...new Set(slice.map((m) => m.type))],
      slices,
    })) {
      const brought = new Set<number>();
      for (const r of batch) {
        const at = position.get(r.id);
        if (at === undefined || at >= window.to) continue;
        const list = window.revisions.get(r.id);
        if (list) list.push(r);
        else window.revisions.set(r.id, [r]);
        brought.add(r.id);
        held++;
      }
      answerWhole(window, brought);
      if (held <= maxHeld) continue;
      // Too much for one window: keep the first half (at least the chunk asked for), give the rest up (their
      // units, still waiting, go on to a later window when this stream is over).
      window.to = Math.max(asked + CHUNK_SIZE, window.from + Math.floor((window.to - window.from) / 2));
      held = 0;
      for (const [id, list] of window.revisions) {
        if ((position.get(id) ?? window.to) >= window.to) window.revisions.delete(id);
        else held += list.length;
      }
    }
  } finally {
    // Read, refused or failed: the units still waiting go on from `ready` (a later window, per item, the error).
    window.over = true;
    for (const waiters of window.waiting.values()) for (const w of waiters) w.answer(undefined);
    window.waiting.clear();
  }
}

/** The item's revisions as soon as the window's stream has brought them whole; undefined once it is over. */
function streamed(window: Window, item: AdoWorkItem): Promise<AdoWorkItem[] | undefined> {
  const now = whole(window.revisions.get(item.id), item.rev);
  if (now || window.over) return Promise.resolve(now);
  return new Promise((answer) => {
    const waiters = window.waiting.get(item.id);
    const waiter = { rev: item.rev, answer };
    if (waiters) waiters.push(waiter);
    else window.waiting.set(item.id, [waiter]);
  });
}

type HistoryContext = Pick<PhaseContext, 'deps' | 'run' | 'preflight' | 'invocation'>;

/** Windows the run's manifest spans. */
const windowsOf = (ctx: HistoryContext, limits: WindowLimits) =>
  Math.ceil(ctx.preflight.manifest.length / Math.max(limits.items, CHUNK_SIZE));

/** Whether the run reads revisions in batches at all: a FULL run of the whole project, from a server that can. */
const batched = (ctx: HistoryContext) =>
  batchedHistoryReads(ctx) && typeof ctx.deps.source.reportingRevisions === 'function';

/**
 * The invocation's reader: of the stream, for a run spanning at most `streamWindows` windows; of the parts the
 * pass wrote, for a larger run once its pass is done. Undefined: each item is read on its own.
 */
async function readerOf(
  ctx: HistoryContext,
  limits: WindowLimits,
): Promise<{ stream: Reader } | { parts: PartsReader; index: HistoryIndex } | undefined> {
  if (!batched(ctx)) return undefined;
  if (windowsOf(ctx, limits) <= (limits.streamWindows ?? STREAM_MAX_WINDOWS))
    return { stream: ctx.invocation.keep<Reader>('history-reader', () => ({ windows: [] })) };
  const index = await historyIndex(ctx);
  if (!index) return undefined;
  return {
    parts: ctx.invocation.keep<PartsReader>('history-parts-reader', () => ({ windows: [] })),
    index,
  };
}

/**
 * Phase 5's `prepare`: for a run spanning more than `streamWindows` windows, the one pass over the project's
 * stream that writes each window's parts (history-pass.ts). True when the phase's units may start.
 */
export function prepareHistoryReads(
  ctx: HistoryContext,
  remainingMs: () => number,
  limits: WindowLimits = LIMITS,
): Promise<boolean> {
  if (
    ctx.run.options.dryRun ||
    !batched(ctx) ||
    windowsOf(ctx, limits) <= (limits.streamWindows ?? STREAM_MAX_WINDOWS)
  )
    return Promise.resolve(true);
  return prepareHistoryPass(ctx, remainingMs, {
    items: Math.max(limits.passItems ?? limits.items, CHUNK_SIZE),
    ...(limits.slices ? { slices: limits.slices } : {}),
    ...(limits.flushChars ? { flushChars: limits.flushChars } : {}),
  });
}

/**
 * The window of the pass's parts that holds manifest position `at`, its read started if it is not under way (the
 * latest two kept). A window with more revisions than a window may hold is not read: its items are read on their
 * own.
 */
function partsWindowAt(
  ctx: HistoryContext,
  reader: PartsReader,
  index: HistoryIndex,
  at: number,
  limits: WindowLimits,
): PartsWindow {
  const w = Math.floor(at / index.windowItems);
  const from = w * index.windowItems;
  const held = reader.windows.find((x) => x.from === from);
  if (held) return held;
  const fresh: PartsWindow = { from, revisions: new Map(), ready: Promise.resolve() };
  fresh.ready = (async () => {
    if ((index.revisions[w] ?? 0) > limits.heldRevisions) return;
    for await (const part of windowParts(ctx, index, w))
      for (const [id, r] of part) {
        const list = fresh.revisions.get(id);
        if (list) list.push(r);
        else fresh.revisions.set(id, [r]);
      }
  })();
  // A window read ahead may be asked for by no unit (the pass stopped): its error is the askers' to see.
  fresh.ready.catch(() => undefined);
  reader.windows = [...reader.windows, fresh].slice(-2);
  return fresh;
}

/** The item's revisions from its window of the pass's parts, parsed now; undefined when they are not there whole. */
async function fromParts(window: PartsWindow, item: AdoWorkItem): Promise<AdoWorkItem[] | undefined> {
  await window.ready;
  return whole(window.revisions.get(item.id), item.rev)?.map((r) => JSON.parse(r.json) as AdoWorkItem);
}

/**
 * The window that holds manifest position `at`, its read started if it is not under way (the latest two kept):
 * from the start of the item's chunk (the chunk's items ask side by side, in no set order), or from `at` itself
 * for the window after another.
 */
function windowAt(
  ctx: HistoryContext,
  reader: Reader,
  at: number,
  limits: WindowLimits,
  from = at - (at % CHUNK_SIZE),
): Window {
  const held = reader.windows.find((w) => at >= w.from && at < w.to);
  if (held) return held;
  const manifest = ctx.preflight.manifest;
  const fresh: Window = {
    from,
    // Never less than the chunk: its items wait for this window.
    to: Math.min(manifest.length, from + Math.max(limits.items, CHUNK_SIZE)),
    revisions: new Map(),
    ready: Promise.resolve(),
    waiting: new Map(),
  };
  fresh.ready = fill(ctx.deps.source, manifest, fresh, from, limits.heldRevisions, limits.slices).catch(
    (err: unknown) => {
      // A tracker's answer ends the batched read, not the items; a wait handed back or a lost connection does.
      if (!(err instanceof TrackerHttpError)) throw err;
      fresh.refused = true;
    },
  );
  // A window read ahead may be asked for by no unit (the pass stopped): its error is the askers' to see.
  fresh.ready.catch(() => undefined);
  reader.windows = [...reader.windows, fresh].slice(-2);
  return fresh;
}

/**
 * Starts reading the window that holds manifest position `at` if none is under way, and the next one once `at` is
 * half way through its window: the stream of the project's revisions takes seconds (a call of 200 after
 * another), so units find it read instead of all waiting for it at the start of each window. Answers when the
 * windows it started are read (the engine does not wait for it; tests do).
 */
export async function readHistoryAhead(
  ctx: HistoryContext,
  at: number,
  limits: WindowLimits = LIMITS,
): Promise<void> {
  const found = await readerOf(ctx, limits);
  const length = ctx.preflight.manifest.length;
  if (!found || at >= length) return;
  if ('parts' in found) {
    const { parts, index } = found;
    const window = partsWindowAt(ctx, parts, index, at, limits);
    const to = window.from + index.windowItems;
    const reading = [window.ready];
    if (at >= window.from + index.windowItems / 2 && to < length)
      reading.push(partsWindowAt(ctx, parts, index, to, limits).ready);
    await Promise.all(reading);
    return;
  }
  const reader = found.stream;
  const window = windowAt(ctx, reader, at, limits);
  const reading = [window.ready];
  if (at >= window.from + (window.to - window.from) / 2 && window.to < length)
    reading.push(windowAt(ctx, reader, window.to, limits, window.to).ready);
  await Promise.all(reading);
}

/**
 * The item's revisions, oldest first: from the run's batched read as soon as it has brought them whole, else (the
 * stream over without them) per item. `at` is the item's manifest position, where the caller knows it (the
 * parts' windows are found by it; without it, an item of a run read in parts is read on its own).
 */
export async function historyRevisions(
  ctx: HistoryContext,
  item: AdoWorkItem,
  limits: WindowLimits = LIMITS,
  at?: number,
): Promise<AdoWorkItem[]> {
  const source = ctx.deps.source;
  const found = await readerOf(ctx, limits);
  if (!found) return source.revisions(item.id);
  if ('parts' in found) {
    if (at === undefined) return source.revisions(item.id);
    const window = partsWindowAt(ctx, found.parts, found.index, at, limits);
    return (await fromParts(window, item)) ?? source.revisions(item.id);
  }
  const reader = found.stream;
  const position = at ?? (await positionOf(reader, ctx.preflight.manifest, item.id));
  if (position === undefined) return source.revisions(item.id);
  const window = windowAt(ctx, reader, position, limits);
  // Revisions are never rewritten: 1..rev once seen are the item's, whatever the stream brings after them.
  const early = await streamed(window, item);
  if (early) return early;
  await window.ready;
  if (window.refused) return source.revisions(item.id);
  // The window may have shrunk while it filled: an item it gave up starts the next one.
  if (position >= window.to) return historyRevisions(ctx, item, limits, position);
  return whole(window.revisions.get(item.id), item.rev) ?? source.revisions(item.id);
}
