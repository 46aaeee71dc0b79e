import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type LinkPlan, mergeLinkPlans } from '../../functions/engine/phases/links.ts';
import {
  loadOrComputePlan,
  PLAN_SLICE,
  PLAN_SLICES_IN_FLIGHT,
  preparePlanInSlices,
} from '../../functions/engine/phases/links-jira.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function memoryArtifacts() {
  const files = new Map<string, string>();
  return {
    files,
    get: async (key: string) => files.get(key),
    put: async (key: string, body: string) => {
      files.set(key, body);
    },
  };
}

describe('a plan computed slice by slice', () => {
  it('spreads over several invocations when the budget runs low, one slice at least per call', async () => {
    const artifacts = memoryArtifacts();
    const computed: number[] = [];
    const slice = async (from: number, to: number) => {
      computed.push(from);
      return { from, to };
    };
    const merge = (parts: { from: number; to: number }[]) => ({ slices: parts.map((p) => p.from) });
    const items = 3 * PLAN_SLICE + 1; // four slices
    const lowBudget = () => 1_000;
    const calls: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      const ready = await preparePlanInSlices(
        artifacts,
        'plan.json',
        items,
        slice,
        merge,
        new InvocationScope(),
        lowBudget,
      );
      calls.push(ready);
      if (ready) break;
    }
    expect(calls).toEqual([false, false, false, true]);
    expect(computed).toEqual([0, PLAN_SLICE, 2 * PLAN_SLICE, 3 * PLAN_SLICE]); // each slice once
    expect(JSON.parse(artifacts.files.get('plan.json') as string)).toEqual({
      slices: [0, PLAN_SLICE, 2 * PLAN_SLICE, 3 * PLAN_SLICE],
    });
    // Ready: nothing is computed again.
    expect(
      await preparePlanInSlices(
        artifacts,
        'plan.json',
        items,
        slice,
        merge,
        new InvocationScope(),
        lowBudget,
      ),
    ).toBe(true);
    expect(computed).toHaveLength(4);
  });

  it('does it all in one call when time allows, and an empty manifest is one empty slice', async () => {
    const artifacts = memoryArtifacts();
    let slices = 0;
    const count = async () => ++slices;
    expect(
      await preparePlanInSlices(artifacts, 'a', 2 * PLAN_SLICE, count, (p) => p, new InvocationScope()),
    ).toBe(true);
    expect(JSON.parse(artifacts.files.get('a') as string)).toEqual([1, 2]);
    expect(await preparePlanInSlices(artifacts, 'b', 0, count, (p) => p, new InvocationScope())).toBe(true);
    expect(JSON.parse(artifacts.files.get('b') as string)).toEqual([3]);
  });

  it('computes the slices side by side when time allows, a few at a time, and keeps their order', async () => {
    const artifacts = memoryArtifacts();
    let inFlight = 0;
    let most = 0;
    const slice = async (from: number) => {
      most = Math.max(most, ++inFlight);
      // Later slices answer first: the plan still lists them in manifest order.
      await new Promise((resolve) => setTimeout(resolve, 10 - from / PLAN_SLICE));
      inFlight--;
      return from;
    };
    const items = 6 * PLAN_SLICE;
    expect(await preparePlanInSlices(artifacts, 'p', items, slice, (p) => p, new InvocationScope())).toBe(
      true,
    );
    expect(most).toBe(PLAN_SLICES_IN_FLIGHT);
    expect(JSON.parse(artifacts.files.get('p') as string)).toEqual(
      Array.from({ length: 6 }, (_, i) => i * PLAN_SLICE),
    );
  });

  it('a plan read by an invocation is held by it alone: read once in it, gone with it, read again by the next', async () => {
    const artifacts = memoryArtifacts();
    await artifacts.put(
      'plan.json',
      JSON.stringify({ units: Array.from({ length: 1000 }, (_, i) => ({ i })) }),
    );
    let reads = 0;
    const counted = {
      get: (key: string) => {
        reads++;
        return artifacts.get(key);
      },
      put: artifacts.put,
    };
    const notComputed = async (): Promise<{ units: unknown[] }> => {
      throw new Error('the plan is stored: not computed');
    };
    // One invocation reads the plan for its units and its worker: one read; only a weak reference leaves it.
    const readInOneInvocation = async () => {
      const invocation = new InvocationScope();
      const plan = await loadOrComputePlan(counted, 'plan.json', notComputed, invocation);
      const again = await loadOrComputePlan(counted, 'plan.json', notComputed, invocation);
      return { same: plan === again, units: plan.units.length, plan: new WeakRef(plan) };
    };
    const first = await readInOneInvocation();
    expect(first.same).toBe(true);
    expect(first.units).toBe(1000);
    expect(reads).toBe(1);

    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    // The invocation is over: nothing of the process holds its plan (a warm container's next phase or run).
    expect(first.plan.deref()).toBeUndefined();
    const next = await loadOrComputePlan(counted, 'plan.json', notComputed, new InvocationScope());
    expect(next.units).toHaveLength(1000);
    expect(reads).toBe(2);
  });

  it('keeps a link planned from both of its ends once, with its comment, and warnings once', () => {
    const a: LinkPlan = {
      units: [
        { kind: 'issue', type: 'Blocks', from: 1, to: 1500 },
        { kind: 'remote', on: 2, other: 99, url: 'u', title: 't', globalId: 'g' },
      ],
      symmetric: ['relates'],
      warnings: ['Jira has no "Affects" link type'],
    };
    const b: LinkPlan = {
      units: [
        { kind: 'issue', type: 'blocks', from: 1, to: 1500, comment: 'why' },
        { kind: 'remote', on: 2, other: 99, url: 'u', title: 't', globalId: 'g' },
        { kind: 'remote', on: 1500, other: 99, url: 'u', title: 't', globalId: 'g' },
        { kind: 'unmigrated', type: 'Blocks', from: 7, to: 8 },
      ],
      symmetric: ['relates'],
      warnings: ['Jira has no "Affects" link type'],
    };
    expect(mergeLinkPlans([a, b])).toEqual({
      units: [
        { kind: 'issue', type: 'Blocks', from: 1, to: 1500, comment: 'why' },
        { kind: 'remote', on: 2, other: 99, url: 'u', title: 't', globalId: 'g' },
        { kind: 'remote', on: 1500, other: 99, url: 'u', title: 't', globalId: 'g' },
        { kind: 'unmigrated', type: 'Blocks', from: 7, to: 8 },
      ],
      symmetric: ['relates'],
      warnings: ['Jira has no "Affects" link type'],
    });
  });
});
