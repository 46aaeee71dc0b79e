import { describe, expect, it } from 'vitest';
import { blockReads } from '#phase-kit/toolkit.ts';

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
