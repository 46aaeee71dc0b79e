/**
 * The heap a links plan takes at a project's size, stored whole (the plan parsed in one piece, as an invocation
 * held it before plans were stored in parts) and in parts (a reader after a pass over every unit, 50 at a time,
 * and what the de-duplication holds between its two passes: its hash set and the keys met twice). A synthetic plan shaped like the sandbox's: a
 * link back to ADO per item, an issue link for one item in five (to an item up to 300 before it, so some cross a
 * slice and are planned twice, three in ten with a comment), a remote link for one in thirty.
 *
 *   node --expose-gc --import tsx test/bench/plan-heap.ts [items]   (default 50,000)
 */
import {
  dedupeLinkParts,
  type LinkPlan,
  type LinkUnit,
  linkKey,
} from '../../functions/engine/phases/links.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import {
  HashSeen,
  hash32,
  openPlan,
  PLAN_SLICE,
  preparePlanInSlices,
} from '../../functions/phase-kit/plan-slices.ts';
import { seededRandom } from '../../local/sandbox/common/random.ts';
import { mergeLinkPlans } from '../support/link-plan-reference.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

const items = Number(process.argv[2] ?? 50_000);
const random = seededRandom(50);
const words = [
  'login',
  'page',
  'fails',
  'when',
  'the',
  'user',
  'saves',
  'report',
  'export',
  'timeout',
  'order',
];
const title = () => Array.from({ length: random.int(4, 9) }, () => random.pick(words)).join(' ');
const web = (id: number) => `https://dev.azure.com/contoso/Contoso%20Web/_workitems/edit/${id}`;

/** Each slice's part as computePlan makes it: a link between two slices is in both. */
const slices: LinkPlan[] = Array.from({ length: Math.ceil(items / PLAN_SLICE) }, () => ({
  units: [],
  symmetric: ['relates'],
  warnings: [],
}));
const sliceOf = (id: number) => slices[Math.floor((id - 1) / PLAN_SLICE)] as LinkPlan;
const links: LinkUnit[][] = Array.from({ length: items + 1 }, () => []);
for (let id = 1; id <= items; id++) {
  if (id > 1 && random.chance(0.2)) {
    const other = random.int(Math.max(1, id - 300), id - 1);
    const comment = random.chance(0.3) ? { comment: 'same root cause' } : {};
    const link: LinkUnit = { kind: 'issue', type: 'Relates', from: other, to: id, ...comment };
    links[id]?.push(link);
    if (sliceOf(other) !== sliceOf(id)) links[other]?.push({ ...link });
  }
  if (random.chance(1 / 30)) {
    const other = items + id;
    links[id]?.push({
      kind: 'remote',
      on: id,
      other,
      url: web(other),
      title: `relates to Azure DevOps #${other}: ${title()}`,
      globalId: `ado-workitem-${other}-relates`,
    });
  }
}
for (let id = 1; id <= items; id++) {
  sliceOf(id).units.push(...(links[id] ?? []), {
    kind: 'remote',
    on: id,
    other: id,
    url: web(id),
    title: `Azure DevOps #${id}: ${title()}`,
    globalId: `ado:contoso:${id}`,
    backlink: true,
  });
}
links.length = 0;

const files = new Map<string, string>();
const artifacts = {
  get: async (key: string) => files.get(key),
  put: async (key: string, body: string) => {
    files.set(key, body);
  },
};
for (const [n, part] of slices.entries()) await artifacts.put(`plan.part-${n}`, JSON.stringify(part));
const whole = JSON.stringify(mergeLinkPlans(slices));
slices.length = 0;

// Stored whole: the plan parsed and held.
let before = heap();
let held: unknown = JSON.parse(whole);
const wholeHeap = heap() - before;
held = undefined;

// The plan finished in parts (written to memory), and what its de-duplication holds between its two passes: the
// hash set of every unit's key, and the keys whose hash was met before (with a comment), built here on their own.
let planned = 0;
await preparePlanInSlices(
  artifacts,
  {
    key: 'plan',
    manifestLength: items,
    compute: async () => {
      throw new Error('every slice is stored');
    },
    finish: (parts, write) => dedupeLinkParts(parts, write),
  },
  new InvocationScope(),
);
const index = files.get('plan') as string;
const hashes = new HashSeen();
const metBefore: string[] = [];
for (let n = 0; files.has(`plan.part-${n}`); n++)
  for (const u of (JSON.parse(files.get(`plan.part-${n}`) as string) as LinkPlan).units) {
    planned++;
    if (hashes.add(hash32(linkKey(u)))) metBefore.push(linkKey(u));
  }
before = heap();
held = new Map(metBefore.map((key) => [` ${key}`.slice(1), 'same root cause']));
const againHeap = heap() - before;
held = undefined;

// In parts: a reader after a pass over every unit, 50 at a time (two parts held).
before = heap();
const invocation = new InvocationScope();
const reader = await openPlan<LinkUnit, unknown>(artifacts, 'plan', invocation);
let units = 0;
for (let from = 0; from < reader.length; from += 50) units += (await reader.range(from, from + 50)).length;
const readerHeap = heap() - before;
held = invocation;

console.log(
  [
    `${items} items, ${planned} link units planned, ${units} kept (${mb(whole.length)} of JSON whole, index ${index.length} bytes)`,
    `stored whole, parsed and held: ${mb(wholeHeap)}`,
    `in parts, a reader after a pass (two parts held): ${mb(readerHeap)}`,
    `de-duplication between its passes: hash set ${mb(hashes.bytes)}, ${metBefore.length} keys met twice ${mb(againHeap)}`,
  ].join('\n'),
);
void held;
