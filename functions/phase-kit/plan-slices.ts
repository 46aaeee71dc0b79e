/**
 * A phase's plan over the whole project (the hierarchy and links phases' units), computed and stored in parts
 * and read back by window, so that what an invocation holds of it never grows with the project.
 *
 * Computed a manifest slice (PLAN_SLICE items) at a time, each slice's result kept as an artifact
 * (`<key>.part-<n>`), across invocations if need be. Once every slice is there, the plan's `finish` goes through
 * them in order, one at a time (as often as it needs), and writes the plan's final parts (its units, de-duplicated
 * where the plan needs it) under a name of their own (`<key>.units-<id>-<n>`), then, last, the plan's index at
 * `<key>`: how many units each final part holds, and the plan's small header. The index present means the plan is
 * done: a crash before it leaves parts nobody reads, and the next call finishes again under a new name.
 *
 * A reader (`openPlan`) reads the index, and the units a window asks for part by part, at most two parsed parts
 * held (manifest-slices.ts `slicedList`, as the manifest's slices). A plan stored whole at the key (`{ units, ... }`,
 * before plans were stored in parts) is read as one part. Readers are kept per invocation (`ctx.invocation`), never
 * in the process: a warm container's next invocation (a later phase, another run) does not find one.
 */
import { randomUUID } from 'node:crypto';
import type { ArtifactStore } from '#store/artifacts.ts';
import type { InvocationScope } from './invocation.ts';
import { type SlicedList, slicedList } from './manifest-slices.ts';
import { inPool } from './toolkit.ts';

type Artifacts = Pick<ArtifactStore, 'get' | 'put'>;

/** Manifest items one slice of a phase's plan covers: its reads fit well inside one invocation's budget. */
export const PLAN_SLICE = 1000;
/** Below this, no further slice is started in this invocation (a slice takes a few seconds at worst). */
const SLICE_BUDGET_MS = 30_000;
/**
 * Slices computed side by side: each is a chain of a few round trips (the items, the id map, the issues' state),
 * so one after another a 2,000-item plan took two chains before the phase's first unit; the HTTP layer holds
 * each endpoint to what the tracker takes.
 */
export const PLAN_SLICES_IN_FLIGHT = 4;
/** Finishing again when a slice's part changed under it (an invocation racing this one rewrote it). */
const FINISH_ATTEMPTS = 3;

/** What is stored at a plan's key once it is done. */
export interface PlanIndex<H> {
  /** Tells an index from a plan stored whole, which has `units` and neither of these. */
  version: 2;
  /** The name of this plan's final parts: part n is at `<key>.units-<id>-<n>`. */
  id: string;
  /** Units in each final part, in order (an empty part is not stored). */
  parts: number[];
  header: H;
}

/** A plan's units read by window, and its header. */
export interface PlanReader<U, H> extends SlicedList<U> {
  readonly header: H;
}

/**
 * How a plan is made: `compute` gives the part of manifest items [from, to); `finish` goes through the parts in
 * manifest order (`parts()`, which reads them one at a time and may be called again for another pass), hands each
 * final part's units to `write` in order, and answers the plan's header.
 */
export interface PlanInSlices<P, U, H> {
  key: string;
  manifestLength: number;
  /** Manifest items a slice covers (PLAN_SLICE; tests use fewer). */
  sliceItems?: number;
  compute(from: number, to: number): Promise<P>;
  finish(parts: () => AsyncGenerator<P>, write: (units: U[]) => Promise<void>): Promise<H>;
}

const rawPartKey = (key: string, n: number) => `${key}.part-${n}`;
const finalPartKey = (key: string, id: string, n: number) => `${key}.units-${id}-${n}`;
/** Where an invocation keeps a plan's reader (InvocationScope): it dies with the invocation. */
const heldPlan = (key: string) => `plan:${key}`;

/**
 * The plan computed a manifest slice at a time, across several invocations if need be (the runner calls again), so
 * a plan over a project of any size need not fit in one. At least one slice is worked per call; no slice starts
 * once the budget runs low. True once the plan's index is stored; `onStored` is called when this call stored it
 * (no other invocation had).
 */
export async function preparePlanInSlices<P, U, H>(
  artifacts: Artifacts,
  plan: PlanInSlices<P, U, H>,
  invocation: InvocationScope,
  remainingMs: () => number = () => Number.POSITIVE_INFINITY,
  onStored?: () => void,
): Promise<boolean> {
  const { key } = plan;
  if (invocation.held(heldPlan(key)) !== undefined) return true;
  const stored = await artifacts.get(key);
  if (stored !== undefined) {
    keepReader<U, H>(artifacts, key, stored, invocation);
    return true;
  }
  const sliceItems = plan.sliceItems ?? PLAN_SLICE;
  const slices = Math.max(1, Math.ceil(plan.manifestLength / sliceItems));
  const missing: number[] = [];
  // Only whether each part is there: the parts are read again, one at a time, when the plan is finished.
  for (let n = 0; n < slices; n++)
    if ((await artifacts.get(rawPartKey(key, n))) === undefined) missing.push(n);
  let started = 0;
  let outOfTime = false;
  await inPool(missing, PLAN_SLICES_IN_FLIGHT, async (n) => {
    if (outOfTime || (started > 0 && remainingMs() < SLICE_BUDGET_MS)) {
      outOfTime = true;
      return;
    }
    started++;
    const part = await plan.compute(n * sliceItems, (n + 1) * sliceItems);
    await artifacts.put(rawPartKey(key, n), JSON.stringify(part));
  });
  if (outOfTime) return false;
  const index = await finishPlan(artifacts, plan, slices);
  // Re-read before storing, and the stored index kept: two invocations racing at the start end up with the same plan.
  let body = await artifacts.get(key);
  if (body === undefined && index !== undefined) {
    await artifacts.put(key, JSON.stringify(index));
    onStored?.();
    body = (await artifacts.get(key)) as string;
  }
  if (body !== undefined) keepReader<U, H>(artifacts, key, body, invocation);
  return true;
}

/** Thrown by a pass of `finish` that read a part other than the one an earlier pass read. */
class PartChanged extends Error {
  constructor(key: string, n: number) {
    super(`part ${n} of the plan ${key} changed while the plan was finished`);
  }
}

/**
 * The plan's final parts written from its slices' parts, under a new name; its index, or undefined when another
 * invocation stored one meanwhile. Each pass reads the same parts: a part rewritten between two passes (by an
 * invocation that found it missing and computed it too) makes the finish start again.
 */
async function finishPlan<P, U, H>(
  artifacts: Artifacts,
  plan: PlanInSlices<P, U, H>,
  slices: number,
): Promise<PlanIndex<H> | undefined> {
  for (let attempt = 1; ; attempt++) {
    if ((await artifacts.get(plan.key)) !== undefined) return undefined;
    const id = randomUUID().slice(0, 8);
    // Each part's hash as the first pass read it, not its body: the finish holds one part at a time.
    const read: number[] = [];
    async function* parts(): AsyncGenerator<P> {
      for (let n = 0; n < slices; n++) {
        const body = await artifacts.get(rawPartKey(plan.key, n));
        if (body === undefined) throw new Error(`part ${n} of the plan ${plan.key} is missing`);
        const hash = hash32(body);
        read[n] ??= hash;
        if (read[n] !== hash) throw new PartChanged(plan.key, n);
        yield JSON.parse(body) as P;
      }
    }
    const counts: number[] = [];
    try {
      const header = await plan.finish(parts, async (units) => {
        const n = counts.push(units.length) - 1;
        if (units.length) await artifacts.put(finalPartKey(plan.key, id, n), JSON.stringify(units));
      });
      return { version: 2, id, parts: counts, header };
    } catch (err) {
      if (!(err instanceof PartChanged) || attempt >= FINISH_ATTEMPTS) throw err;
    }
  }
}

/** The 32-bit FNV-1a hash of a string's UTF-16 code units. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * A set of 32-bit hashes in one typed array (open addressing, at most half full): 8 to 16 bytes a hash, where a
 * set of the strings they hash would hold each string and its entry. `add` tells whether the hash was met before,
 * which for two different strings may happen by chance: a "met before" is a maybe, a "not met" is certain.
 */
export class HashSeen {
  private table = new Uint32Array(1024);
  private count = 0;

  /** Adds `hash`; true if it was in the set already. */
  add(hash: number): boolean {
    // 0 marks an empty place: the hash 0 goes in as 1 (one more chance of a false "met before").
    const h = hash >>> 0 || 1;
    if (this.count * 2 >= this.table.length) this.grow();
    const mask = this.table.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = this.table[i];
      if (at === h) return true;
      if (at === 0) {
        this.table[i] = h;
        this.count++;
        return false;
      }
    }
  }

  /** Bytes the set holds. */
  get bytes(): number {
    return this.table.byteLength;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    this.count = 0;
    for (const h of old) if (h !== 0) this.add(h);
  }
}

/** A plan stored whole (before plans were stored in parts). */
interface WholePlan<U> {
  units: U[];
}

function readerOf<U, H>(artifacts: Artifacts, key: string, body: string): PlanReader<U, H> {
  const stored = JSON.parse(body) as PlanIndex<H> | WholePlan<U>;
  if ('version' in stored && stored.version === 2 && Array.isArray(stored.parts)) {
    const { id, parts, header } = stored;
    return Object.assign(
      slicedList<U>(parts, async (n) => {
        const part = await artifacts.get(finalPartKey(key, id, n));
        if (part === undefined) throw new Error(`part ${n} of the plan ${key} is missing`);
        return JSON.parse(part) as U[];
      }),
      { header },
    );
  }
  // A run under way when plans began to be stored in parts: its plan is one part, held as it was read.
  const { units, ...header } = stored as WholePlan<U>;
  return Object.assign(
    slicedList<U>([units.length], async () => units),
    { header: header as H },
  );
}

function keepReader<U, H>(
  artifacts: Artifacts,
  key: string,
  body: string,
  invocation: InvocationScope,
): PlanReader<U, H> {
  return invocation.keep(heldPlan(key), () => readerOf<U, H>(artifacts, key, body));
}

/**
 * The invocation's reader of the plan at `key` (read once per invocation, its index only); throws when the plan
 * is not stored (the phase's `prepare` stores it before anything asks).
 */
export async function openPlan<U, H>(
  artifacts: Artifacts,
  key: string,
  invocation: InvocationScope,
): Promise<PlanReader<U, H>> {
  const held = invocation.held<PlanReader<U, H>>(heldPlan(key));
  if (held !== undefined) return held;
  const body = await artifacts.get(key);
  if (body === undefined) throw new Error(`the plan ${key} was not stored`);
  return keepReader<U, H>(artifacts, key, body, invocation);
}
