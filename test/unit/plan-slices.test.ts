/**
 * A phase's plan computed a manifest slice at a time and stored in parts (functions/phase-kit/plan-slices.ts): its
 * index at the plan's key, its units read by window a part at a time (at most two parsed parts held), the link
 * plan's parts de-duplicated as joining them whole did, and a plan stored whole (before parts) still read.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { dedupeLinkParts, type LinkPlan, type LinkUnit } from '../../functions/engine/phases/links.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import {
  HashSeen,
  openPlan,
  PLAN_SLICE,
  PLAN_SLICES_IN_FLIGHT,
  type PlanInSlices,
  preparePlanInSlices,
} from '../../functions/phase-kit/plan-slices.ts';
import { seededRandom } from '../../local/sandbox/common/random.ts';
import { mergeLinkPlans } from '../support/link-plan-reference.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function memoryArtifacts() {
  const files = new Map<string, string>();
  const reads: string[] = [];
  return {
    files,
    reads,
    get: async (key: string) => {
      reads.push(key);
      return files.get(key);
    },
    put: async (key: string, body: string) => {
      files.set(key, body);
    },
  };
}

/** A plan whose slices' parts are `{ units }`, written as they are, the header `{ first }` from the first. */
function plainPlan<U>(
  key: string,
  manifestLength: number,
  compute: (from: number, to: number) => Promise<U[]>,
  sliceItems?: number,
): PlanInSlices<{ units: U[] }, U, { first: U | null }> {
  return {
    key,
    manifestLength,
    ...(sliceItems ? { sliceItems } : {}),
    compute: async (from, to) => ({ units: await compute(from, to) }),
    async finish(parts, write) {
      let first: U | null = null;
      for await (const part of parts()) {
        first ??= part.units[0] ?? null;
        await write(part.units);
      }
      return { first };
    },
  };
}

const allUnits = async <U>(artifacts: ReturnType<typeof memoryArtifacts>, key: string) => {
  const reader = await openPlan<U, unknown>(artifacts, key, new InvocationScope());
  return reader.range(0, reader.length);
};

describe('a plan computed slice by slice', () => {
  it('spreads over several invocations when the budget runs low, one slice at least per call', async () => {
    const artifacts = memoryArtifacts();
    const computed: number[] = [];
    const plan = plainPlan('plan.json', 3 * PLAN_SLICE + 1, async (from) => {
      computed.push(from);
      return [from];
    });
    const lowBudget = () => 1_000;
    const calls: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      const ready = await preparePlanInSlices(artifacts, plan, new InvocationScope(), lowBudget);
      calls.push(ready);
      if (ready) break;
    }
    expect(calls).toEqual([false, false, false, true]);
    expect(computed).toEqual([0, PLAN_SLICE, 2 * PLAN_SLICE, 3 * PLAN_SLICE]); // each slice once
    expect(await allUnits(artifacts, 'plan.json')).toEqual([0, PLAN_SLICE, 2 * PLAN_SLICE, 3 * PLAN_SLICE]);
    // Ready: nothing is computed again.
    expect(await preparePlanInSlices(artifacts, plan, new InvocationScope(), lowBudget)).toBe(true);
    expect(computed).toHaveLength(4);
  });

  it('does it all in one call when time allows, and an empty manifest is one empty slice', async () => {
    const artifacts = memoryArtifacts();
    let slices = 0;
    const count = async () => [++slices];
    expect(
      await preparePlanInSlices(artifacts, plainPlan('a', 2 * PLAN_SLICE, count), new InvocationScope()),
    ).toBe(true);
    expect(await allUnits(artifacts, 'a')).toEqual([1, 2]);
    expect(await preparePlanInSlices(artifacts, plainPlan('b', 0, count), new InvocationScope())).toBe(true);
    expect(await allUnits(artifacts, 'b')).toEqual([3]);
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
      return [from];
    };
    const plan = plainPlan('p', 6 * PLAN_SLICE, slice);
    expect(await preparePlanInSlices(artifacts, plan, new InvocationScope())).toBe(true);
    expect(most).toBe(PLAN_SLICES_IN_FLIGHT);
    expect(await allUnits(artifacts, 'p')).toEqual(Array.from({ length: 6 }, (_, i) => i * PLAN_SLICE));
  });
});

describe('a plan stored in parts', () => {
  /** 7 slices of 10 items, a unit per item but none in slices 2 and 3: 50 units in 7 parts, two of them empty. */
  async function storedPlan() {
    const artifacts = memoryArtifacts();
    const plan = plainPlan(
      'plan.json',
      70,
      async (from, to) =>
        from === 20 || from === 30 ? [] : Array.from({ length: to - from }, (_, i) => ({ item: from + i })),
      10,
    );
    expect(await preparePlanInSlices(artifacts, plan, new InvocationScope())).toBe(true);
    const units = [0, 1, 4, 5, 6].flatMap((s) =>
      Array.from({ length: 10 }, (_, i) => ({ item: 10 * s + i })),
    );
    return { artifacts, units };
  }
  const partReads = (reads: string[]) =>
    reads.flatMap((key) => {
      const n = /\.units-[0-9a-f]+-(\d+)$/.exec(key)?.[1];
      return n === undefined ? [] : [Number(n)];
    });

  it('stores a small index at the key: the units each part holds, and the header', async () => {
    const { artifacts } = await storedPlan();
    const index = JSON.parse(artifacts.files.get('plan.json') as string);
    expect(index).toMatchObject({
      version: 2,
      parts: [10, 10, 0, 0, 10, 10, 10],
      header: { first: { item: 0 } },
    });
    expect(index.units).toBeUndefined();
    // The empty parts are not stored; the slices' own parts stay beside the final ones.
    expect([...artifacts.files.keys()].filter((k) => k.includes('.units-'))).toHaveLength(5);
    expect([...artifacts.files.keys()].filter((k) => k.includes('.part-'))).toHaveLength(7);
  });

  it('reads the parts a window crosses, holds at most two, and never reads an empty one', async () => {
    const { artifacts, units } = await storedPlan();
    artifacts.reads.length = 0;
    const reader = await openPlan<{ item: number }, { first: unknown }>(
      artifacts,
      'plan.json',
      new InvocationScope(),
    );
    expect(reader.length).toBe(50);
    expect(reader.header).toEqual({ first: { item: 0 } });
    expect(artifacts.reads).toEqual(['plan.json']); // the index only
    // Windows of 7 units from the first to the last, as a pass's blocks: each part read once, in order.
    for (let from = 0; from < 50; from += 7)
      expect(await reader.range(from, from + 7)).toEqual(units.slice(from, from + 7));
    expect(partReads(artifacts.reads)).toEqual([0, 1, 4, 5, 6]);
    // A window across the empty parts reads the parts on both sides of them.
    expect(await reader.range(15, 25)).toEqual(units.slice(15, 25));
    expect(partReads(artifacts.reads)).toEqual([0, 1, 4, 5, 6, 1, 4]);
    // Parts 1 and 4 are held now, 6 was let go: reading it again parses it again.
    expect(await reader.at(12)).toEqual(units[12]);
    expect(await reader.at(49)).toEqual(units[49]);
    expect(partReads(artifacts.reads)).toEqual([0, 1, 4, 5, 6, 1, 4, 6]);
    expect(await reader.at(50)).toBeUndefined();
  });

  it('is read once per invocation and held by it alone: gone with it, read again by the next', async () => {
    const { artifacts } = await storedPlan();
    artifacts.reads.length = 0;
    const key = 'plan.json';
    const readInOneInvocation = async () => {
      const invocation = new InvocationScope();
      const plan = await openPlan(artifacts, key, invocation);
      const again = await openPlan(artifacts, key, invocation);
      // The phase's prepare finds it held: nothing read, nothing computed.
      const notComputed = plainPlan(key, 70, async () => {
        throw new Error('the plan is stored: not computed');
      });
      expect(await preparePlanInSlices(artifacts, notComputed, invocation)).toBe(true);
      await plan.range(0, 50);
      return { same: plan === again, units: plan.length, plan: new WeakRef(plan) };
    };
    const first = await readInOneInvocation();
    expect(first).toMatchObject({ same: true, units: 50 });
    expect(artifacts.reads.filter((k) => k === key)).toHaveLength(1);

    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    // The invocation is over: nothing of the process holds its plan (a warm container's next phase or run).
    expect(first.plan.deref()).toBeUndefined();
    expect((await openPlan(artifacts, key, new InvocationScope())).length).toBe(50);
    expect(artifacts.reads.filter((k) => k === key)).toHaveLength(2);
  });

  it('reads a plan stored whole (a run under way before plans were stored in parts) as one part', async () => {
    const artifacts = memoryArtifacts();
    const whole: LinkPlan = {
      units: [
        { kind: 'issue', type: 'Blocks', from: 1, to: 2, comment: 'why' },
        { kind: 'unmigrated', type: 'Blocks', from: 7, to: 8 },
      ],
      symmetric: ['relates'],
      warnings: ['Jira has no "Affects" link type'],
    };
    await artifacts.put('link-plan.json', JSON.stringify(whole));
    const invocation = new InvocationScope();
    const notComputed = plainPlan('link-plan.json', 10, async () => {
      throw new Error('the plan is stored: not computed');
    });
    expect(await preparePlanInSlices(artifacts, notComputed, invocation)).toBe(true);
    const reader = await openPlan<LinkUnit, { symmetric: string[]; warnings: string[] }>(
      artifacts,
      'link-plan.json',
      invocation,
    );
    expect(reader.length).toBe(2);
    expect(reader.header).toEqual({ symmetric: ['relates'], warnings: ['Jira has no "Affects" link type'] });
    expect(await reader.at(1)).toEqual(whole.units[1]);
    expect(await reader.range(0, 50)).toEqual(whole.units);
    expect(artifacts.reads).toEqual(['link-plan.json']);
  });

  /** Two slices' parts planning one link, the later one with a comment, stored as computed. */
  function linkParts() {
    const artifacts = memoryArtifacts();
    const parts: LinkPlan[] = [
      { units: [{ kind: 'issue', type: 'Blocks', from: 1, to: 2 }], symmetric: [], warnings: [] },
      {
        units: [{ kind: 'issue', type: 'Blocks', from: 1, to: 2, comment: 'late' }],
        symmetric: [],
        warnings: [],
      },
    ];
    for (const [n, p] of parts.entries()) artifacts.files.set(`lp.part-${n}`, JSON.stringify(p));
    const plan: PlanInSlices<LinkPlan, LinkUnit, unknown> = {
      key: 'lp',
      manifestLength: 2,
      sliceItems: 1,
      compute: async () => {
        throw new Error('every slice is stored');
      },
      finish: (ps, write) => dedupeLinkParts(ps, write),
    };
    const read = async (invocation: InvocationScope) => {
      const reader = await openPlan<LinkUnit, unknown>(artifacts, 'lp', invocation);
      return reader.range(0, reader.length);
    };
    return { artifacts, plan, read };
  }

  it('finishes again when a slice part is rewritten between two passes', async () => {
    const { artifacts, plan, read } = linkParts();
    // Another invocation computes slice 1 again (with another comment) between this one's two passes: read once
    // to see that it is there, once by the first pass, and rewritten after that.
    let reads = 0;
    const get = artifacts.get;
    artifacts.get = async (key) => {
      const body = await get(key);
      if (key === 'lp.part-1' && ++reads === 2)
        artifacts.files.set(
          key,
          JSON.stringify({
            units: [{ kind: 'issue', type: 'Blocks', from: 1, to: 2, comment: 'new' }],
            symmetric: [],
            warnings: [],
          }),
        );
      return body;
    };
    const invocation = new InvocationScope();
    expect(await preparePlanInSlices(artifacts, plan, invocation)).toBe(true);
    expect(await read(invocation)).toEqual([
      { kind: 'issue', type: 'Blocks', from: 1, to: 2, comment: 'new' },
    ]);
    // Finished twice, the index naming the second finish's parts.
    expect([...artifacts.files.keys()].filter((k) => k.includes('.units-'))).toHaveLength(2);
  });

  it('two invocations finishing at once end with the same plan', async () => {
    const { plan, read, artifacts } = linkParts();
    const [a, b] = [new InvocationScope(), new InvocationScope()];
    expect(
      await Promise.all([preparePlanInSlices(artifacts, plan, a), preparePlanInSlices(artifacts, plan, b)]),
    ).toEqual([true, true]);
    const expected = [{ kind: 'issue', type: 'Blocks', from: 1, to: 2, comment: 'late' }];
    expect(await read(a)).toEqual(expected);
    expect(await read(b)).toEqual(expected);
    expect(await read(new InvocationScope())).toEqual(expected);
  });
});

describe("the link plan's parts de-duplicated", () => {
  /** The final units `dedupeLinkParts` writes for these parts, each part's written in order. */
  async function deduped(parts: LinkPlan[], hash?: (key: string) => number) {
    const written: LinkUnit[][] = [];
    const copy = () => structuredClone(parts);
    async function* stream() {
      // Parsed afresh on every pass, as the parts read from their artifacts are.
      yield* copy();
    }
    const header = await dedupeLinkParts(
      stream,
      async (units) => {
        written.push(units);
      },
      hash,
    );
    expect(written).toHaveLength(parts.length);
    return { units: written.flat(), ...header };
  }

  it('keeps a link planned from both of its ends once, with its comment, and warnings once', async () => {
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
    expect(await deduped([a, b])).toEqual({
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

  it('gives what joining the parts whole gave, for random plans, whatever the hash makes collide', async () => {
    const random = seededRandom(31);
    const comments = [undefined, undefined, '', 'same root cause', 'other'];
    const unit = (): LinkUnit => {
      const [from, to] = [random.int(1, 40), random.int(1, 40)];
      const kind = random.pick(['issue', 'issue', 'remote', 'unmigrated'] as const);
      const type = random.pick(['Blocks', 'blocks', 'Relates']);
      if (kind === 'remote')
        return { kind, on: from, other: to, url: 'u', title: `t${to}`, globalId: `ado-workitem-${to}` };
      if (kind === 'unmigrated') return { kind, type, from, to };
      const comment = random.pick(comments);
      return { kind, type, from, to, ...(comment === undefined ? {} : { comment }) };
    };
    const hashes: [string, ((key: string) => number) | undefined][] = [
      ['FNV-1a', undefined],
      ['every key colliding', () => 7],
      ['keys of one length colliding', (key) => key.length],
    ];
    for (let round = 0; round < 60; round++) {
      const parts: LinkPlan[] = Array.from({ length: random.int(1, 6) }, (_, n) => ({
        units: Array.from({ length: random.int(0, 30) }, unit),
        symmetric: n === 0 ? ['relates'] : [],
        warnings: [`w${random.int(0, 3)}`],
      }));
      const expected = mergeLinkPlans(structuredClone(parts));
      for (const [name, hash] of hashes)
        expect(await deduped(parts, hash), `${name}, round ${round}`).toEqual(expected);
    }
  });

  it('holds 8 to 16 bytes a key in its hash set', () => {
    const seen = new HashSeen();
    // Distinct 32-bit hashes (an odd multiplier is a bijection modulo 2^32): none met before.
    let met = 0;
    for (let i = 1; i <= 100_000; i++) if (seen.add(i * 2654435761)) met++;
    expect(met).toBe(0);
    expect(seen.add(5 * 2654435761)).toBe(true);
    expect(seen.bytes).toBeGreaterThanOrEqual(8 * 100_000);
    expect(seen.bytes).toBeLessThanOrEqual(16 * 100_000);
  });
});
