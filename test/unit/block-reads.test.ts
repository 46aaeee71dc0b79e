import { describe, expect, it } from 'vitest';
import { blockReads, keysOnce } from '#phase-kit/toolkit.ts';

/** A read that records which blocks were asked for and can be held until released. */
function recordingRead(fail?: number) {
  const asked: number[] = [];
  const read = async (from: number, to: number) => {
    asked.push(from);
    if (from === fail) throw new Error(`block at ${from} failed`);
    return { from, to };
  };
  return { asked, read };
}

describe('blockReads', () => {
  it('reads a block once, and the next block as soon as one is asked for', async () => {
    const { asked, read } = recordingRead();
    const block = blockReads(read, 120);
    expect(await block(3)).toEqual({ from: 0, to: 50 });
    expect(asked).toEqual([0, 50]);
    await block(49);
    expect(await block(50)).toEqual({ from: 50, to: 100 });
    expect(asked).toEqual([0, 50, 100]);
    // The last block has no next one: nothing past the phase's units is read.
    await block(119);
    expect(asked).toEqual([0, 50, 100]);
  });

  it('reads as many blocks ahead as asked, never past the last', async () => {
    const { asked, read } = recordingRead();
    const block = blockReads(read, 180, 2);
    await block(0);
    expect(asked).toEqual([0, 50, 100]);
    await block(60);
    expect(asked).toEqual([0, 50, 100, 150]);
    await block(110);
    expect(asked).toEqual([0, 50, 100, 150]);
  });

  it('reads nothing ahead without the phase total', async () => {
    const { asked, read } = recordingRead();
    const block = blockReads(read);
    await block(0);
    expect(asked).toEqual([0]);
  });

  it("keeps a read-ahead's error for the unit that asks for its block", async () => {
    const { read } = recordingRead(50);
    const block = blockReads(read, 100);
    await block(0); // reads 50 ahead, which fails: no unhandled rejection
    await new Promise((r) => setImmediate(r));
    await expect(block(50)).rejects.toThrow('block at 50 failed');
  });
});

describe('keysOnce', () => {
  /** An id map of items 1-9 (key `K-<id>`) that records each read and fails the reads of `failing`. */
  function idMap(failing?: number) {
    const reads: number[][] = [];
    const read = async (ids: number[]) => {
      reads.push([...ids]);
      if (failing !== undefined && ids.includes(failing)) throw new Error(`read of ${failing} failed`);
      return new Map(ids.filter((id) => id < 10).map((id) => [id, { targetKey: `K-${id}` }]));
    };
    return { reads, read };
  }

  it('sends the lookups of one turn as one read, and reads no item twice, mapped or not', async () => {
    const { reads, read } = idMap();
    const keys = keysOnce(read);
    const [a, b] = await Promise.all([keys([1, 2, 12]), keys([2, 3])]);
    expect(a).toEqual(
      new Map([
        [1, 'K-1'],
        [2, 'K-2'],
      ]),
    );
    expect(b).toEqual(
      new Map([
        [2, 'K-2'],
        [3, 'K-3'],
      ]),
    );
    expect(reads).toEqual([[1, 2, 12, 3]]);
    // Known since, found or not: only the new item is read.
    expect(await keys([3, 12, 4])).toEqual(
      new Map([
        [3, 'K-3'],
        [4, 'K-4'],
      ]),
    );
    expect(reads).toEqual([[1, 2, 12, 3], [4]]);
    expect(await keys([])).toEqual(new Map());
    expect(reads).toHaveLength(2);
  });

  it('fails the lookups of a read that failed, and reads those items again when asked again', async () => {
    const { reads, read } = idMap(5);
    const keys = keysOnce(read);
    await expect(keys([5, 6])).rejects.toThrow('read of 5 failed');
    expect(await keys([6])).toEqual(new Map([[6, 'K-6']]));
    await expect(keys([5])).rejects.toThrow('read of 5 failed');
    expect(reads).toEqual([[5, 6], [6], [5]]);
  });

  it('fails a lookup whose read failed while the unit waited on an earlier, slower read', async () => {
    let releaseSlow = () => {};
    const slow = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const keys = keysOnce(async (ids) => {
      if (ids.includes(5)) throw new Error('read of 5 failed');
      await slow;
      return new Map(ids.map((id) => [id, { targetKey: `K-${id}` }]));
    });
    const first = keys([1]); // its read under way, and slow
    await new Promise((resolve) => setImmediate(resolve));
    const both = keys([1, 5]); // 1 waits on that read; 5's own read fails meanwhile
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    releaseSlow();
    await expect(both).rejects.toThrow('read of 5 failed');
    expect(await first).toEqual(new Map([[1, 'K-1']]));
  });
});
