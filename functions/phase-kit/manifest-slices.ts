/**
 * The run's manifest read a slice at a time. The preflight artifact keeps it in slices of MANIFEST_SLICE_ITEMS
 * items (preflight-artifact.ts): a reader of a window of it parses only the slices the window crosses, and holds
 * at most two parsed slices (a window that crosses a slice end, or a pass moving from one slice to the next),
 * so what a reader holds never grows with the project.
 */
import type { ManifestItem } from '#domain/manifest.ts';

/** Items per slice of the stored manifest (the plans of the hierarchy and links phases are computed per 1,000 too). */
export const MANIFEST_SLICE_ITEMS = 1000;

/** Parsed slices a reader keeps: the one being read and the one before or after it. */
const HELD_SLICES = 2;

export interface ManifestSlices {
  /** Items in the manifest. */
  readonly length: number;
  /** Items of the slice size this manifest is stored in (the last slice may hold fewer). */
  readonly sliceItems: number;
  /** The items at positions [from, to), in manifest order (to is clamped to the length). */
  range(from: number, to: number): Promise<ManifestItem[]>;
  /** The whole manifest a slice at a time, in order. */
  slices(): AsyncGenerator<ManifestItem[]>;
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
  let held: { n: number; items: Promise<ManifestItem[]> }[] = [];
  const slice = (n: number): Promise<ManifestItem[]> => {
    const found = held.find((h) => h.n === n);
    if (found) {
      held = [...held.filter((h) => h !== found), found];
      return found.items;
    }
    const items = readSlice(n);
    held = [...held, { n, items }].slice(-HELD_SLICES);
    // A failed read is not kept: the next ask reads again.
    items.catch(() => {
      held = held.filter((h) => h.items !== items);
    });
    return items;
  };
  const count = Math.ceil(length / sliceItems);
  return {
    length,
    sliceItems,
    async range(from, to) {
      const end = Math.min(to, length);
      const out: ManifestItem[] = [];
      for (let n = Math.floor(from / sliceItems); n * sliceItems < end; n++) {
        const start = n * sliceItems;
        out.push(...(await slice(n)).slice(Math.max(from - start, 0), end - start));
      }
      return out;
    },
    async *slices() {
      for (let n = 0; n < count; n++) yield await slice(n);
    },
  };
}

/** A manifest already in memory (an artifact written before slices, or the preflight phase's own), as one slice. */
export function manifestInMemory(items: readonly ManifestItem[]): ManifestSlices {
  const all = [...items];
  return slicedManifest(all.length, Math.max(all.length, 1), async () => all);
}
