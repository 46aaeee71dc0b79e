/**
 * One item's time budget (phase-kit/toolkit.ts withinItemBudget): past it, the unit's `stopped()` turns true, the
 * unit stops at its next check between writes, and its item fails with the reason while the pass goes on. The
 * service clock is moved by hand (platform/clock.ts): no test here waits. And items built in a loop
 * (mapYielding) let the event loop read what came in between two.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ChunkAbandoned,
  ITEM_BUDGET_MS,
  mapYielding,
  withinItemBudget,
} from '../../functions/phase-kit/toolkit.ts';
import { clock } from '../../functions/platform/clock.ts';

let now = Date.parse('2026-03-12T10:00:00Z');
const advance = (ms: number) => {
  now += ms;
};
vi.spyOn(clock, 'now').mockImplementation(() => new Date(now));
afterEach(() => {
  now = Date.parse('2026-03-12T10:00:00Z');
});

/** A unit that writes `writes` times, checking `stopped()` before each, while the clock moves `step` a write. */
function unit(writes: number, step: number) {
  const done: number[] = [];
  const work = async (stopped: () => boolean) => {
    for (let i = 1; i <= writes; i++) {
      if (stopped()) throw new ChunkAbandoned(`stopped after ${done.length} writes`);
      await Promise.resolve();
      advance(step);
      done.push(i);
    }
    return `${writes} writes`;
  };
  return { done, work };
}

const late = (reason: string) => `failed: ${reason}`;
const running = () => false;

describe('one item’s time budget', () => {
  it('lets a unit within it end as it ends', async () => {
    const { done, work } = unit(3, 60_000);
    expect(await withinItemBudget(ITEM_BUDGET_MS, running, work, late)).toBe('3 writes');
    expect(done).toEqual([1, 2, 3]);
  });

  it('stops a unit past it at its next check: its result says why, nothing more is written', async () => {
    const { done, work } = unit(10, 60_000);
    expect(await withinItemBudget(ITEM_BUDGET_MS, running, work, late)).toBe(
      'failed: stopped after 300 s, the most one item may take',
    );
    expect(done).toEqual([1, 2, 3, 4, 5]);
  });

  it('leaves a unit that ends past it without another check its own result', async () => {
    const { done, work } = unit(1, 600_000);
    expect(await withinItemBudget(ITEM_BUDGET_MS, running, work, late)).toBe('1 writes');
    expect(done).toEqual([1]);
  });

  it('throws what the unit throws when its pass is abandoned, or for any other reason', async () => {
    const abandoned = unit(10, 600_000);
    let passStopped = false;
    const stopping = withinItemBudget(ITEM_BUDGET_MS, () => passStopped, abandoned.work, late);
    passStopped = true;
    await expect(stopping).rejects.toThrow(new ChunkAbandoned('stopped after 1 writes'));
    const broken = async () => {
      advance(600_000);
      throw new Error('Jira is gone');
    };
    await expect(withinItemBudget(ITEM_BUDGET_MS, running, broken, late)).rejects.toThrow('Jira is gone');
  });
});

describe('items worked one after another in a loop', () => {
  it('give the event loop a turn between two, so answers under way are read before their timeout', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('an answer read'));
    const built = await mapYielding(['#1', '#2', '#3'], (id) => {
      order.push(`${id} built`);
      return `${id} description`;
    });
    expect(built).toEqual(['#1 description', '#2 description', '#3 description']);
    expect(order).toEqual(['#1 built', 'an answer read', '#2 built', '#3 built']);
  });
});
