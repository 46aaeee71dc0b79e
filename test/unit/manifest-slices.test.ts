/**
 * The manifest read a slice at a time (functions/phase-kit/manifest-slices.ts): a window parses only the slices it
 * crosses, and the reader never holds more than two parsed slices, which the parses it asks for show: a slice it
 * let go is parsed again when a window comes back to it.
 */
import { describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../functions/domain/manifest.ts';
import { manifestIds, manifestInMemory, slicedManifest } from '../../functions/phase-kit/manifest-slices.ts';

const ITEMS = 2500;
const SLICE = 1000;
const item = (i: number): ManifestItem => ({ id: 100 + i, type: i % 2 ? 'Bug' : 'Task', parentId: null });
const all = Array.from({ length: ITEMS }, (_, i) => item(i));

/** A manifest of 2,500 items in slices of 1,000, and the slices it parsed, in order. */
function manifest() {
  const parsed: number[] = [];
  const reader = slicedManifest(ITEMS, SLICE, async (n) => {
    parsed.push(n);
    return all.slice(n * SLICE, (n + 1) * SLICE);
  });
  return { reader, parsed };
}

describe('the manifest read a slice at a time', () => {
  it('parses only the slices a window crosses and holds at most two of them', async () => {
    const { reader, parsed } = manifest();
    expect(reader.length).toBe(ITEMS);

    expect(await reader.range(0, 50)).toEqual(all.slice(0, 50));
    expect(parsed).toEqual([0]);
    // A window across a slice end: both slices, each parsed once.
    expect(await reader.range(990, 1010)).toEqual(all.slice(990, 1010));
    expect(parsed).toEqual([0, 1]);
    expect(await reader.range(1500, 1600)).toEqual(all.slice(1500, 1600));
    expect(parsed).toEqual([0, 1]);
    // The third slice lets the first go (the least recently read) ...
    expect(await reader.range(2000, 2600)).toEqual(all.slice(2000, 2500));
    expect(parsed).toEqual([0, 1, 2]);
    expect(await reader.range(1200, 1210)).toEqual(all.slice(1200, 1210));
    expect(parsed).toEqual([0, 1, 2]);
    // ... so coming back to it parses it again, and lets the third go.
    expect(await reader.range(10, 20)).toEqual(all.slice(10, 20));
    expect(parsed).toEqual([0, 1, 2, 0]);
    expect(await reader.range(2400, 2500)).toEqual(all.slice(2400, 2500));
    expect(parsed).toEqual([0, 1, 2, 0, 2]);
  });

  it('goes through the whole manifest one slice at a time, each parsed once', async () => {
    const { reader, parsed } = manifest();
    const seen: number[] = [];
    for await (const slice of reader.slices()) seen.push(slice.length);
    expect(seen).toEqual([1000, 1000, 500]);
    expect(parsed).toEqual([0, 1, 2]);
  });

  it('reads a slice again after a failed read, rather than keeping the failure', async () => {
    let fail = true;
    const reader = slicedManifest(ITEMS, SLICE, async (n) => {
      if (fail) throw new Error('artifact store unavailable');
      return all.slice(n * SLICE, (n + 1) * SLICE);
    });
    await expect(reader.range(0, 10)).rejects.toThrow('artifact store unavailable');
    fail = false;
    expect(await reader.range(0, 10)).toEqual(all.slice(0, 10));
  });

  it('of a manifest in memory (an artifact from before slices) is one slice', async () => {
    const reader = manifestInMemory(all.slice(0, 5));
    expect(reader.length).toBe(5);
    expect(await reader.range(1, 3)).toEqual(all.slice(1, 3));
    const slices: ManifestItem[][] = [];
    for await (const slice of reader.slices()) slices.push(slice);
    expect(slices).toEqual([all.slice(0, 5)]);
    const empty = manifestInMemory([]);
    expect(await empty.range(0, 10)).toEqual([]);
    for await (const _ of empty.slices()) throw new Error('an empty manifest has no slice');
  });

  it('answers whether ids are in it from its ids alone, read one slice at a time', async () => {
    const { reader, parsed } = manifest();
    const inScope = await manifestIds(reader);
    expect(parsed).toEqual([0, 1, 2]);
    expect([100, 101, 1099, 2599].map(inScope)).toEqual([true, true, true, true]);
    expect([99, 2600, 0, -1].map(inScope)).toEqual([false, false, false, false]);
    // Asked again, nothing is read again.
    expect(parsed).toEqual([0, 1, 2]);
  });

  it('in memory, is also the plain list: it compares and serialises as one', async () => {
    const list = manifestInMemory(all.slice(0, 3));
    expect(list).toEqual(all.slice(0, 3));
    expect(JSON.parse(JSON.stringify(list))).toEqual(all.slice(0, 3));
    expect(await list.at(2)).toEqual(all[2]);
  });
});
