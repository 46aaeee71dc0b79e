/** The runner's pool over a phase's units (engine/unit-pool.ts), with a fake phase: units are promises we settle. */
import { describe, expect, it } from 'vitest';
import { type PoolMove, type UnitPoolOptions, workUnitPool } from '../../functions/engine/unit-pool.ts';

/** A fake phase of `total` units, each settled by the test (or at once, when `auto` says so). */
function fakePhase(
  total: number,
  auto: (i: number) => boolean = () => true,
  from: { index: number; done?: number[] } = { index: 0 },
  reach = 500,
) {
  const release = new Map<number, (fail?: Error) => void>();
  const started: number[] = [];
  const finished = new Set<number>();
  const moves: { units: number[]; to: { index: number; done: number[] } }[] = [];
  // What the checkpoint covers: every unit before `cursor.index`, and `cursor.done`.
  let cursor = { index: from.index, done: from.done ?? [] };
  const covered = (i: number) => i < cursor.index || cursor.done.includes(i);
  let maxUnrecorded = 0;
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const l of listeners.splice(0)) l();
  };
  const options: UnitPoolOptions<number> = {
    from: from.index,
    done: from.done ?? [],
    total,
    window: 50,
    reach,
    minMove: 10,
    minMoveFull: 3,
    signal: new AbortController().signal,
    work: (i) => {
      expect(covered(i), `unit ${i} worked again after it was covered`).toBe(false);
      expect(i).toBeLessThan(cursor.index + reach);
      started.push(i);
      // Units started and not yet covered by the checkpoint, this one included: what a crash would lose.
      maxUnrecorded = Math.max(maxUnrecorded, started.filter((s) => !covered(s)).length);
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
    move: async ({ units, to }: PoolMove<number>) => {
      const indexes = units.map((u) => u.index);
      expect(units.map((u) => u.result)).toEqual(indexes); // the units' own results
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
      for (const i of indexes) {
        expect(finished.has(i), `unit ${i} finished`).toBe(true);
        expect(covered(i), `unit ${i} covered twice`).toBe(false);
      }
      expect(indexes.length).toBeLessThanOrEqual(50);
      // The new cursor covers exactly what it covered and these units.
      const all = new Set([...cursor.done, ...indexes]);
      for (let i = cursor.index; i < to.index; i++) {
        expect(all.has(i), `unit ${i} below the new index`).toBe(true);
        all.delete(i);
      }
      expect(all.has(to.index)).toBe(false);
      expect(to.done).toEqual([...all].sort((a, b) => a - b));
      moves.push({ units: indexes, to });
      cursor = to;
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
    maxUnrecorded: () => maxUnrecorded,
    cursor: () => cursor,
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('workUnitPool', () => {
  it('works every unit once, never more than 50 not yet covered, and moves the checkpoint over all of them', async () => {
    const p = fakePhase(237);
    expect(await workUnitPool(p.options)).toEqual({ checkpoint: 237, ended: 'done' });
    expect([...p.started].sort((a, b) => a - b)).toEqual(range(0, 237));
    expect(p.maxUnrecorded()).toBeLessThanOrEqual(50);
    expect(p.cursor()).toEqual({ index: 237, done: [] });
  });

  it('a slow unit holds back no other: the units past it are covered as done, up to the reach', async () => {
    const p = fakePhase(300, (i) => i !== 30, { index: 0 }, 120);
    const pool = workUnitPool(p.options);
    // Units far past 30 + 50 start and are covered while unit 30 is under way, up to 30 + 120 - 1.
    await p.until(() => p.finished.size === 149);
    expect(Math.max(...p.started)).toBe(149);
    expect(p.cursor().index).toBe(30);
    // Covered as done past it, but for fewer than 10 (a move's least, while a unit is under way).
    expect(p.cursor().done).toEqual(range(31, 31 + p.cursor().done.length));
    expect(p.cursor().done.length).toBeGreaterThan(149 - 31 - 10);
    expect(p.maxUnrecorded()).toBeLessThanOrEqual(50);
    p.release(30);
    expect(await pool).toEqual({ checkpoint: 300, ended: 'done' });
    expect(p.started).toHaveLength(300);
  });

  it('with the window full, moves over what finished at once rather than idle until 10 have', async () => {
    const p = fakePhase(100, () => false);
    const pool = workUnitPool(p.options);
    await p.until(() => p.started.length === 50);
    // Two of the 50 finish: fewer than a full window's move (3), so no move yet.
    for (const i of [0, 1]) p.release(i);
    await p.until(() => p.finished.size === 2);
    await new Promise((r) => setImmediate(r)); // the pool has seen them
    expect(p.moves).toEqual([]);
    // A third: no unit may start until the checkpoint covers them, so it moves now rather than wait for 10.
    p.release(2);
    await p.until(() => p.moves.length === 1);
    expect(p.moves[0]?.units).toEqual([0, 1, 2]);
    // Three started in their place; the rest finish as they come.
    await p.until(() => p.started.length === 53);
    for (let i = 3; i < 100; i++) p.release(i);
    await p.until(() => p.started.length === 100);
    for (let i = 53; i < 100; i++) p.release(i);
    expect(await pool).toEqual({ checkpoint: 100, ended: 'done' });
    expect(p.maxUnrecorded()).toBeLessThanOrEqual(50);
  });

  it('a resume passes over the units the checkpoint covers past its index, and works only the others', async () => {
    const done = [12, 13, 20, 47, 60];
    const p = fakePhase(80, () => true, { index: 10, done });
    expect(await workUnitPool(p.options)).toEqual({ checkpoint: 80, ended: 'done' });
    expect([...p.started].sort((a, b) => a - b)).toEqual(range(10, 80).filter((i) => !done.includes(i)));
    // A cursor whose done list starts at its index moves its index over them first.
    const q = fakePhase(20, () => true, { index: 5, done: [5, 6, 9] });
    expect(await workUnitPool(q.options)).toEqual({ checkpoint: 20, ended: 'done' });
    expect(q.started.sort((a, b) => a - b)).toEqual([7, 8, ...range(10, 20)]);
  });

  it('a crash after out-of-order moves: the next call works again only what was not covered, at most 50 units', async () => {
    const p = fakePhase(200, (i) => i !== 25 && (i < 90 || i > 110));
    const pool = workUnitPool(p.options);
    await p.until(() => p.started.includes(110) && p.finished.size >= 80);
    p.release(95, new Error('crash in unit 95'));
    // The others under way still settle (a unit under way is never left writing).
    for (const i of [25, ...range(90, 111)]) if (i !== 95) p.release(i);
    await expect(pool).rejects.toThrow('crash in unit 95');
    const atCrash = p.cursor();
    expect(atCrash.done.length).toBeGreaterThan(0); // units past a slow one were covered out of order
    const coveredAtCrash = (i: number) => i < atCrash.index || atCrash.done.includes(i);
    const lost = p.started.filter((i) => !coveredAtCrash(i));
    expect(lost.length).toBeLessThanOrEqual(50);

    // Worked again from the checkpoint (units are safe to work again): what it covers never, the lost units once.
    const again = fakePhase(200, () => true, atCrash);
    expect(await workUnitPool(again.options)).toEqual({ checkpoint: 200, ended: 'done' });
    for (const i of again.started) expect(coveredAtCrash(i), `unit ${i} worked again`).toBe(false);
    for (const i of lost) expect(again.started).toContain(i);
    expect(new Set([...p.started.filter(coveredAtCrash), ...again.started]).size).toBe(200);
  });

  it('a move that throws (killed before the checkpoint) is a crash too: nothing after it is moved', async () => {
    const p = fakePhase(100);
    let moves = 0;
    const crashing: UnitPoolOptions<number> = {
      ...p.options,
      move: async (step) => {
        if (++moves === 2) throw new Error('killed before the checkpoint');
        return p.options.move(step);
      },
    };
    await expect(workUnitPool(crashing)).rejects.toThrow('killed before the checkpoint');
    expect(p.moves).toHaveLength(1);
  });

  it('stops starting when a move says stop (pause) or the budget runs low, and moves over what was under way', async () => {
    const paused = fakePhase(300);
    const pauseAfterFirst: UnitPoolOptions<number> = {
      ...paused.options,
      move: async (step) => (await paused.options.move(step)) && step.to.index > 100,
    };
    const end = await workUnitPool(pauseAfterFirst);
    expect(end.ended).toBe('stopped');
    // Every unit started was worked and covered.
    expect(end.checkpoint).toBe(paused.started.length);
    expect(end.checkpoint).toBeLessThan(300);

    const budget = fakePhase(300);
    // The time budget runs low as the 75th unit starts: the invocation's interrupt is aborted.
    const interrupt = new AbortController();
    let starts = 0;
    const low = await workUnitPool({
      ...budget.options,
      signal: interrupt.signal,
      work: (i, stopped) => {
        if (++starts === 75) interrupt.abort();
        return budget.options.work(i, stopped);
      },
    });
    expect(low).toEqual({ checkpoint: 75, ended: 'stopped' });
    expect(budget.started).toHaveLength(75);
  });
});
