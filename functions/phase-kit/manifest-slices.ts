/**
 * The run's manifest read a slice at a time. The preflight artifact keeps it in slices of MANIFEST_SLICE_ITEMS
 * items (preflight-artifact.ts): a reader of a window of it parses only the slices the window crosses, and holds
 * at most two parsed slices (a window that crosses a slice end, or a pass moving from one slice to the next),
 * so what a reader holds never grows with the project. The hierarchy and links phases' plans are read the same way
 * (`slicedList`: parts of any size, phase-kit/plan-slices.ts).
 */
import type { ManifestItem } from '#domain/manifest.ts';

/** Items per slice of the stored manifest (the plans of the hierarchy and links phases are computed per 1,000 too). */
export const MANIFEST_SLICE_ITEMS = 1000;

/** Parsed slices (or parts) a reader keeps: the one being read and the one before or after it. */
const HELD_SLICES = 2;

/** A list stored in parts read one at a time (the manifest's slices, a phase plan's parts). */
export interface SlicedList<T> {
  /** Entries in the list. */
  readonly length: number;
  /** The entries at positions [from, to), in order (to is clamped to the length). */
  range(from: number, to: number): Promise<T[]>;
  /** The entry at `index`; undefined past the end. */
  at(index: number): Promise<T | undefined>;
  /** The whole list a part at a time, in order. */
  slices(): AsyncGenerator<T[]>;
}

/** The manifest as a list of slices of one size (the last may hold fewer). */
export interface ManifestSlices extends SlicedList<ManifestItem> {
  /** Items of the slice size this manifest is stored in. */
  readonly sliceItems: number;
}

/**
 * A list stored in parts of `sizes[n]` entries, part n read by `readPart(n)` (which parses it): at most two parsed
 * parts are held, the least recently used let go first. An empty part is never read.
 */
export function slicedList<T>(
  sizes: readonly number[],
  readPart: (n: number) => Promise<T[]>,
): SlicedList<T> {
  const starts = [0];
  for (const size of sizes) starts.push((starts.at(-1) as number) + size);
  const length = starts.at(-1) as number;
  let held: { n: number; items: Promise<T[]> }[] = [];
  const part = (n: number): Promise<T[]> => {
    if (sizes[n] === 0) return Promise.resolve([]);
    const found = held.find((h) => h.n === n);
    if (found) {
      held = [...held.filter((h) => h !== found), found];
      return found.items;
    }
    const items = readPart(n);
    held = [...held, { n, items }].slice(-HELD_SLICES);
    // A failed read is not kept: the next ask reads again.
    items.catch(() => {
      held = held.filter((h) => h.items !== items);
    });
    return items;
  };
  const range = async (from: number, to: number) => {
    const begin = Math.max(from, 0);
    const end = Math.min(to, length);
    // The first part that ends past `begin`.
    let lo = 0;
    let hi = sizes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((starts[mid + 1] as number) <= begin) lo = mid + 1;
      else hi = mid;
    }
    const out: T[] = [];
    for (let n = lo; n < sizes.length && (starts[n] as number) < end; n++) {
      const start = starts[n] as number;
      out.push(...(await part(n)).slice(Math.max(begin - start, 0), end - start));
    }
    return out;
  };
  return {
    length,
    range,
    at: async (index) => (await range(index, index + 1))[0],
    async *slices() {
      for (let n = 0; n < sizes.length; n++) yield await part(n);
    },
  };
}

/**
 * A manifest of `length` items stored in slices of `sliceItems`, slice n read by `readSlice(n)` (which parses
 * it): at most two parsed slices are held, the least recently used let go first.
 */
export function slicedManifest(
  length: number,
  sliceItems: number,
  readSlice: (n: number) => Promise<ManifestItem[]>,
): ManifestSlices {
  const sizes = Array.from({ length: Math.ceil(length / sliceItems) }, (_, n) =>
    Math.min(sliceItems, length - n * sliceItems),
  );
  return { ...slicedList(sizes, readSlice), sliceItems };
}

/**
 * A manifest already in memory (an artifact written before slices, the preflight phase's own, a test's), as one
 * slice. It is the array itself as well, so that what holds the whole list anyway (a test, a tool) reads it both
 * ways.
 */
export function manifestInMemory(items: readonly ManifestItem[]): ManifestItem[] & ManifestSlices {
  // The slice a reader gets is a plain list, not the list with these methods.
  const all = [...items];
  const { sliceItems, range, at, slices } = slicedManifest(
    all.length,
    Math.max(all.length, 1),
    async () => all,
  );
  // Not enumerable: the list still compares, spreads and serialises as the plain list it is.
  const hidden = (value: unknown) => ({ value, enumerable: false });
  return Object.defineProperties([...all], {
    sliceItems: hidden(sliceItems),
    range: hidden(range),
    at: hidden(at),
    slices: hidden(slices),
  }) as ManifestItem[] & ManifestSlices;
}

/**
 * Whether ids are in the manifest, for a reader that asks about ids it met elsewhere (a link's far end): the ids
 * alone, sorted in one typed array (4 bytes an item, not a parsed slice's objects), read a slice at a time.
 */
export async function manifestIds(manifest: ManifestSlices): Promise<(id: number) => boolean> {
  const ids = new Int32Array(manifest.length);
  let n = 0;
  for await (const slice of manifest.slices()) for (const m of slice) ids[n++] = m.id;
  ids.sort();
  return (id) => {
    let lo = 0;
    let hi = n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = ids[mid] as number;
      if (at === id) return true;
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  };
}
