/** The runner's pool over a phase's units (engine/unit-pool.ts), with a fake phase: units are promises we settle. */
import { describe, expect, it } from 'vitest';
import { type UnitPoolOptions, workUnitPool } from '../../functions/engine/unit-pool.ts';

/** A fake phase of `total` units, each settled by the test (or at once, when `auto` says so). */
function fakePhase(total: number, auto: (i: number) => boolean = () => true, from = 0) {
  const release = new Map<number, (fail?: Error) => void>();
  const started: number[] = [];
  const finished = new Set<number>();
  const moves: { from: number; to: number }[] = [];
  let checkpoint = from;
  let maxAhead = 0;
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const l of listeners.splice(0)) l();
  };
  const options: UnitPoolOptions<number> = {
    from,
    total,
    window: 50,
    minMove: 10,
    canStart: () => true,
    work: (i) => {
      started.push(i);
      // Units started and not yet checkpointed, this one included.
      maxAhead = Math.max(maxAhead, i + 1 - checkpoint);
      changed();
      return new Promise<number>((resolve, reject) => {
        const settle = (fail?: Error) => {
          if (fail) reject(fail);
          else {
            finished.add(i);
            resolve(i);
          }
          changed();
        };
        if (auto(i)) queueMicrotask(() => settle());
        else release.set(i, settle);
      });
    },
    move: async (from, results) => {
      expect(from).toBe(checkpoint);
      expect(results).toEqual(results.map((_, n) => from + n)); // the units' own results, in order
      // Only a finished prefix is covered.
      for (const i of results) expect(finished.has(i), `unit ${i} finished`).toBe(true);
      expect(results.length).toBeLessThanOrEqual(50);
      moves.push({ from, to: from + results.length });
      checkpoint = from + results.length;
      changed();
      return true;
    },
  };
  /** Resolves once `check` holds (checked at every start, finish and move). */
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => listeners.push(resolve));
  };
  return {
    options,
    started,
    finished,
    moves,
    until,
    release: (i: number, fail?: Error) => release.get(i)?.(fail),
    maxAhead: () => maxAhead,
    checkpoint: () => checkpoint,
  };
}

describe('workUnitPool', () => {
  it('works every unit once, never more than 50 past the checkpoint, and moves it over all of them', async () => {
    const p = fakePhase(237);
    expect(await workUnitPool(p.options)).toEqual({ checkpoint: 237, ended: 'done' });
    expect([...p.started].sort((a, b) => a - b)).toEqual(Array.from({ length: 237 }, (_, i) => i));
    expect(p.maxAhead()).toBeLessThanOrEqual(50);
    expect(p.moves.at(-1)?.to).toBe(237);
  });

  it('a slow head unit does not stop the 49 behind it; the checkpoint waits for it, then moves over all 50', async () => {
    const p = fakePhase(120, (i) => i !== 0);
    const pool = workUnitPool(p.options);
    await p.until(() => p.finished.size === 49);
    expect([...p.finished].sort((a, b) => a - b)).toEqual(Array.from({ length: 49 }, (_, i) => i + 1));
    // Nothing covered yet, and nothing past the window started.
    expect(p.moves).toEqual([]);
    expect(Math.max(...p.started)).toBe(49);
    p.release(0);
    expect(await pool).toEqual({ checkpoint: 120, ended: 'done' });
    expect(p.moves[0]).toEqual({ from: 0, to: 50 });
    expect(p.maxAhead()).toBeLessThanOrEqual(50);
  });

  it('a slow unit mid-window holds back the checkpoint only: the units after the window refill it', async () => {
    const p = fakePhase(200, (i) => i !== 30);
    const pool = workUnitPool(p.options);
    // Units 0-29 are checkpointed, and units up to 79 (30 + 50 - 1) start while unit 30 is still under way.
    await p.until(() => p.started.includes(79));
    await p.until(() => p.finished.size === 79);
    expect(p.checkpoint()).toBe(30);
    expect(Math.max(...p.started)).toBe(79);
    expect(p.finished.has(30)).toBe(false);
    p.release(30);
    expect(await pool).toEqual({ checkpoint: 200, ended: 'done' });
    expect(p.maxAhead()).toBeLessThanOrEqual(50);
  });

  it('a unit that throws: no more start, those under way end, nothing more is moved, the error is thrown', async () => {
    const p = fakePhase(150, (i) => i < 20 || i > 40);
    const pool = workUnitPool(p.options);
    await p.until(() => p.started.includes(69));
    p.release(25, new Error('crash in unit 25'));
    // The others of the window still settle (a unit under way is never left writing).
    for (let i = 20; i <= 40; i++) if (i !== 25) p.release(i);
    await expect(pool).rejects.toThrow('crash in unit 25');
    expect(p.checkpoint()).toBe(20); // units 20-24 finished, but nothing is moved after an error
    expect(Math.max(...p.started)).toBeLessThan(p.checkpoint() + 50 + 1);

    // Worked again from the checkpoint (units are safe to work again): everything covered, once each move.
    const again = fakePhase(150, () => true, p.checkpoint());
    const end = await workUnitPool(again.options);
    expect(end).toEqual({ checkpoint: 150, ended: 'done' });
    let at = 0;
    for (const m of [...p.moves, ...again.moves]) {
      expect(m.from).toBe(at);
      at = m.to;
    }
    expect(at).toBe(150);
  });

  it('a move that throws (killed before the checkpoint) is a crash too: nothing after it is moved', async () => {
    const p = fakePhase(100);
    let moves = 0;
    const crashing: UnitPoolOptions<number> = {
      ...p.options,
      move: async (from, results) => {
        if (++moves === 2) throw new Error('killed before the checkpoint');
        return p.options.move(from, results);
      },
    };
    await expect(workUnitPool(crashing)).rejects.toThrow('killed before the checkpoint');
    expect(p.moves).toHaveLength(1);
  });

  it('stops starting when a move says stop (pause) or the budget runs low, and moves over what was under way', async () => {
    const paused = fakePhase(300);
    const pauseAfterFirst: UnitPoolOptions<number> = {
      ...paused.options,
      move: async (from, results) => (await paused.options.move(from, results)) && from > 100,
    };
    const end = await workUnitPool(pauseAfterFirst);
    expect(end.ended).toBe('stopped');
    // Every unit started was worked and covered; none past the window of the move that said stop.
    expect(end.checkpoint).toBe(paused.started.length);
    expect(end.checkpoint).toBeLessThan(300);

    const budget = fakePhase(300);
    let starts = 0;
    const low = await workUnitPool({ ...budget.options, canStart: () => ++starts <= 75 });
    expect(low).toEqual({ checkpoint: 75, ended: 'stopped' });
    expect(budget.started).toHaveLength(75);
  });
});
