/**
 * The comments phase's unit order: chunk by chunk as the chunker cuts them, the next part of every long thread in
 * each chunk beside the short threads, so the longest thread sets the phase's length instead of adding to it.
 */
import { describe, expect, it } from 'vitest';
import { COMMENTS_PER_UNIT, scheduleUnits } from '../../functions/engine/phases/comments.ts';

describe('comment units', () => {
  it('spreads the parts of long threads over consecutive chunks, short threads alongside, each unit once', () => {
    const threads = [
      { id: 1, count: 3 },
      { id: 2, count: 4 * COMMENTS_PER_UNIT + 15 }, // five parts
      ...Array.from({ length: 150 }, (_, i) => ({ id: 100 + i, count: i % 7 })),
      { id: 3, count: 2 * COMMENTS_PER_UNIT }, // two parts
    ];
    const units = scheduleUnits(threads);
    // Cut as the chunker cuts: at most 50 units, never two parts of one thread (the budget is no bound here).
    const chunks: (typeof units)[] = [];
    for (const u of units) {
      const last = chunks.at(-1);
      if (!last || last.length === 50 || last.some((v) => v.id === u.id)) chunks.push([u]);
      else last.push(u);
    }
    expect(chunks.length).toBe(5);
    expect(chunks.map((c) => c.find((u) => u.id === 2)?.part)).toEqual([1, 2, 3, 4, 5]);
    expect(chunks.map((c) => c.find((u) => u.id === 3)?.part)).toEqual([
      1,
      2,
      undefined,
      undefined,
      undefined,
    ]);
    // The longest threads lead each chunk; the short ones fill the first chunks.
    expect(chunks[0]?.slice(0, 2)).toEqual([
      { id: 2, part: 1, parts: 5 },
      { id: 3, part: 1, parts: 2 },
    ]);
    expect(chunks.slice(0, 3).map((c) => c.length)).toEqual([50, 50, 50]);
    expect(units.length).toBe(threads.length + 4 + 1);
  });
});
