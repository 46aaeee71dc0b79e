/**
 * One pass over ids 1..N in creation order: each item gets its type, hierarchy, links (written on both ends),
 * planning fields, people, dates and the metadata of its attachments and comments. Everything bulky is left to
 * the lazy generators, which is what keeps 12,000 items at a few MB and a fraction of a second.
 */
import { type SandboxPerson, sandboxPeople } from '../common/people.ts';
import type { Random } from '../common/random.ts';
import { buildAreas, buildIterations, type ClassificationNode, flatten } from './classification.ts';
import { guidFrom, hashString, mix, Purpose, rngFor } from './hash.ts';
import { ADO_STRING_MAX, type AdoTypeName, type StateCategory, typeDef } from './process.ts';
import { ATTACHMENT_NAMES, contentTypeFor, TAGS, titleFor } from './text.ts';
import type { AdoAttachment, AdoLink, AdoWorkItem, AdoWorld, CustomValue } from './types.ts';

export interface GenerateOptions {
  items: number;
  seed: number;
  org: string;
  project: string;
  /**
   * The day the world is laid out around (default: today, UTC). Sprints before it are past, the one containing
   * it current, three after it future; every created/changed date lies before it. Same (items, seed, day) →
   * same world.
   */
  referenceDay?: Date | number;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MB = 1024 * 1024;

/** The first ids cover every type in dependency order, so even a tiny world has one of each. */
const OPENING: AdoTypeName[] = [
  'Epic',
  'Feature',
  'User Story',
  'Task',
  'Bug',
  'Shared Steps',
  'Test Case',
  'Issue',
];

const WEIGHTS: [AdoTypeName, number][] = [
  ['Epic', 2],
  ['Feature', 6],
  ['User Story', 27],
  ['Task', 34],
  ['Bug', 16],
  ['Issue', 4],
  ['Test Case', 8],
  ['Shared Steps', 3],
];
const WEIGHT_TOTAL = WEIGHTS.reduce((s, [, w]) => s + w, 0);

function pickType(rnd: Random): AdoTypeName {
  let x = rnd.next() * WEIGHT_TOTAL;
  for (const [t, w] of WEIGHTS) {
    x -= w;
    if (x < 0) return t;
  }
  return 'Task';
}

export function startOfUtcDay(at: Date | number): number {
  const ms = typeof at === 'number' ? at : at.getTime();
  return Math.floor(ms / DAY) * DAY;
}

/** Recent items are likelier parents: people break down what they are working on now. */
function recent(rnd: Random, pool: number[]): number | null {
  if (pool.length === 0) return null;
  return pool[pool.length - 1 - rnd.int(0, Math.min(pool.length, 8) - 1)] ?? null;
}

function pickCategory(rnd: Random, age: number): StateCategory {
  const x = rnd.next();
  if (age > 0.25) {
    if (x < 0.66) return 'Completed';
    if (x < 0.72) return 'Removed';
    if (x < 0.8) return 'Resolved';
    if (x < 0.9) return 'InProgress';
    return 'Proposed';
  }
  if (x < 0.38) return 'Proposed';
  if (x < 0.72) return 'InProgress';
  if (x < 0.82) return 'Resolved';
  if (x < 0.96) return 'Completed';
  return 'Removed';
}

function chooseState(
  type: AdoTypeName,
  category: StateCategory,
  rnd: Random,
): { state: string; reason: string } {
  const def = typeDef(type);
  const fallback: Record<StateCategory, StateCategory[]> = {
    Proposed: ['Proposed', 'InProgress'],
    InProgress: ['InProgress', 'Proposed'],
    Resolved: ['Resolved', 'Completed'],
    Completed: ['Completed'],
    Removed: ['Removed', 'Completed'],
  };
  for (const c of fallback[category]) {
    const st = def.states.find((x) => x.category === c);
    if (st) {
      // A removed-like item of a type without Removed is closed as obsolete, as teams do.
      const reason =
        category === 'Removed' && c !== 'Removed'
          ? (st.reasons.find((r) => r === 'Obsolete') ?? st.reasons[0]!)
          : rnd.chance(0.8)
            ? st.reasons[0]!
            : rnd.pick(st.reasons);
      return { state: st.name, reason };
    }
  }
  const first = def.states[0]!;
  return { state: first.name, reason: first.reasons[0]! };
}

function makeLink(
  rel: string,
  targetId: number | null,
  createdDate: number,
  extra: Partial<AdoLink> = {},
): AdoLink {
  return { rel, targetId, url: null, name: null, comment: null, createdDate, ...extra };
}

function attachmentSize(rnd: Random): number {
  const x = rnd.next();
  if (x < 0.08) return rnd.int(1, 16);
  if (x < 0.3) return rnd.int(17, 2048);
  if (x < 0.7) return rnd.int(2049, 200 * 1024);
  if (x < 0.95) return rnd.int(200 * 1024, 3 * MB);
  return rnd.int(3 * MB, 9 * MB);
}

export function generateAdoWorld(opts: GenerateOptions): AdoWorld {
  const { items: n, seed, org, project } = opts;
  const referenceDay = startOfUtcDay(opts.referenceDay ?? Date.now());
  const people: SandboxPerson[] = sandboxPeople(seed).filter((p) => p.on !== 'jira');
  const areas = buildAreas(project, seed);
  const areaNodes = flatten(areas);
  const iterations = buildIterations(project, seed, referenceDay);
  const { sprints, releases } = iterations;
  const backlog = iterations.undated[0]!;
  const undatedLeaves = iterations.undated.filter((x) => x.children.length === 0 && x !== backlog);
  const rnd = rngFor(seed, 0, Purpose.world);
  const projectId = guidFrom(seed, 0x9a0e, hashString(project));

  const startMs = iterations.startMs + 3 * HOUR;
  const endMs = referenceDay - 2 * HOUR;
  const span = endMs - startMs;
  const slot = span / Math.max(n, 1);
  const sprintAt = (t: number) =>
    sprints[Math.max(0, Math.min(sprints.length - 1, Math.floor((t - iterations.startMs) / (14 * DAY))))]!;
  const currentSprint = sprintAt(referenceDay);
  const currentIdx = sprints.indexOf(currentSprint);
  const releaseOf = (sprint: ClassificationNode) =>
    releases.find((r) => sprint.path.startsWith(`${r.path}\\`)) ?? releases[0]!;

  const workItems: AdoWorkItem[] = new Array(n);
  const attachments = new Map<string, AdoAttachment>();
  const pools: Record<AdoTypeName, number[]> = {
    Epic: [],
    Feature: [],
    'User Story': [],
    Task: [],
    Bug: [],
    Issue: [],
    'Test Case': [],
    'Shared Steps': [],
  };
  let commentIdBase = 1000 + (mix(seed, 3) % 1000) * 10;
  let fileId = 60_000 + (mix(seed, 4) % 10_000);

  // Fixed positions for the cases paging and limits tests need, whatever the seed.
  const heavyComments = n >= 10 ? Math.ceil(n * 0.4) : -1;
  const exactly200 = n >= 50 ? Math.ceil(n * 0.5) : -1;
  const exactly201 = n >= 50 ? Math.ceil(n * 0.6) : -1;
  const bigCount = n >= 1000 ? Math.max(1, Math.floor(n / 4000)) : 0;
  const bigAt = new Set(
    Array.from({ length: bigCount }, (_, j) => Math.max(1, Math.floor((n * (j + 0.5)) / bigCount))),
  );
  const longTitleAt = n >= 7 ? 7 : -1;

  const person = () => rnd.int(0, people.length - 1);

  for (let id = 1; id <= n; id++) {
    const type: AdoTypeName = id <= OPENING.length ? OPENING[id - 1]! : pickType(rnd);
    const createdDate = Math.floor(startMs + (id - 1 + rnd.next() * 0.9) * slot);
    const age = (endMs - createdDate) / span;
    const links: AdoLink[] = [];
    const item: AdoWorkItem = {
      id,
      type,
      // One title exactly at ADO's cap, a few just under it.
      title: titleFor(
        type,
        rnd,
        id,
        id === longTitleAt ? ADO_STRING_MAX : rnd.chance(0.004) ? ADO_STRING_MAX - 1 - (id % 15) : undefined,
      ),
      state: '',
      reason: '',
      areaPath: project,
      iterationPath: project,
      createdDate,
      changedDate: createdDate,
      createdBy: person(),
      changedBy: 0,
      assignedTo: rnd.chance(0.85) ? person() : -1,
      priority: type === 'Shared Steps' ? null : rnd.pick([1, 2, 2, 2, 3, 3, 3, 4]),
      severity: null,
      valueArea: null,
      risk: null,
      activity: null,
      storyPoints: null,
      effort: null,
      businessValue: null,
      timeCriticality: null,
      originalEstimate: null,
      remainingWork: null,
      completedWork: null,
      startDate: null,
      targetDate: null,
      dueDate: null,
      automationStatus: null,
      tags: null,
      parentId: null,
      links,
      attachments: [],
      inlineImages: [],
      commentCount: 0,
      commentTotal: 0,
      commentIdBase: 0,
      custom: null,
      rev: 1,
      sharedStepRefs: null,
      updates: null,
    };
    workItems[id - 1] = item;

    // Hierarchy: parents always have smaller ids.
    let parent: number | null = null;
    if (type === 'Feature' && rnd.chance(0.9)) parent = recent(rnd, pools.Epic);
    else if (type === 'User Story' && rnd.chance(0.85)) parent = recent(rnd, pools.Feature);
    else if (type === 'Task')
      parent = rnd.chance(0.8)
        ? recent(rnd, pools['User Story'])
        : rnd.chance(0.6)
          ? recent(rnd, pools.Bug)
          : null;
    else if (type === 'Bug' && rnd.chance(0.35))
      parent = rnd.chance(0.5) ? recent(rnd, pools['User Story']) : recent(rnd, pools.Feature);
    if (parent !== null) {
      item.parentId = parent;
      links.push(makeLink('System.LinkTypes.Hierarchy-Reverse', parent, createdDate));
      workItems[parent - 1]!.links.push(makeLink('System.LinkTypes.Hierarchy-Forward', id, createdDate));
    }

    // State, weighted by age; an item is created in its type's first state.
    const { state, reason } = chooseState(type, pickCategory(rnd, age), rnd);
    item.state = state;
    item.reason = reason;
    const initial = typeDef(type).states[0]!.name;

    // Area: children mostly stay in their parent's area.
    const parentItem = parent !== null ? workItems[parent - 1]! : null;
    item.areaPath =
      parentItem && rnd.chance(0.7)
        ? parentItem.areaPath
        : rnd.chance(0.1)
          ? project
          : rnd.pick(areaNodes).path;

    // Iteration: sprint work follows the calendar; portfolio items sit at release or project level.
    const x = rnd.next();
    if (type === 'Epic' || type === 'Feature') {
      item.iterationPath =
        x < 0.5 ? project : x < 0.9 ? releaseOf(sprintAt(createdDate + 7 * DAY)).path : backlog.path;
    } else if (type === 'User Story' || type === 'Task' || type === 'Bug') {
      if (state === initial && age < 0.05 && rnd.chance(0.5)) {
        item.iterationPath = sprints[Math.min(sprints.length - 1, currentIdx + rnd.int(1, 3))]!.path;
      } else if (x < 0.85) item.iterationPath = sprintAt(createdDate + rnd.int(0, 21) * DAY).path;
      else if (x < 0.92) item.iterationPath = backlog.path;
      else if (x < 0.96) item.iterationPath = project;
      else item.iterationPath = rnd.pick(undatedLeaves).path;
    } else {
      item.iterationPath = x < 0.6 ? project : sprintAt(createdDate).path;
    }

    // Comments: most items have a few; fixed items have exactly 200, 201, or several hundred.
    let total: number;
    const fixedComments = id === heavyComments || id === exactly200 || id === exactly201;
    if (id === heavyComments) total = 250 + rnd.int(0, 200);
    else if (id === exactly200) total = 200;
    else if (id === exactly201) total = 201;
    else if (rnd.chance(0.003)) total = rnd.int(201, 420);
    else {
      const c = rnd.next();
      total = c < 0.45 ? 0 : c < 0.8 ? rnd.int(1, 3) : c < 0.95 ? rnd.int(4, 15) : rnd.int(16, 60);
    }
    if (type === 'Shared Steps' && !fixedComments) total = Math.min(total, 2);
    let visible = total;
    // About one comment in fifty on ordinary items has been deleted (kept for includeDeleted=true).
    if (total < 150) for (let k = 0; k < total; k++) if (isDeletedComment(seed, id, k)) visible--;
    item.commentTotal = total;
    item.commentCount = visible;
    item.commentIdBase = commentIdBase;
    commentIdBase += total;

    // Revisions and the last change: a non-initial state or any comment means the item was edited later.
    const minRev = state !== initial || total > 0 ? 2 : 1;
    item.rev = minRev + rnd.int(0, 6 - minRev);
    if (item.rev > 1) {
      const u = rnd.next();
      item.changedDate = Math.floor(createdDate + Math.max(HOUR, (endMs - createdDate) * u ** 1.5));
    }
    item.changedBy = rnd.chance(0.6) && item.assignedTo >= 0 ? item.assignedTo : person();

    planningFields(item, rnd, state, createdDate);

    if (rnd.chance(0.35)) {
      const count = rnd.int(1, 3);
      const chosen = new Set<string>();
      while (chosen.size < count) chosen.add(rnd.pick(TAGS));
      item.tags = [...chosen].join('; ');
    }

    item.custom = customFields(type, rnd, createdDate, people.length);

    // Other links, each written on both ends.
    const earlier = (): number | null => (id > 1 ? rnd.int(Math.max(1, id - 300), id - 1) : null);
    if (rnd.chance(0.06)) {
      const other = earlier();
      if (other !== null && other !== parent) {
        const comment = rnd.chance(0.3) ? 'same root cause' : null;
        links.push(makeLink('System.LinkTypes.Related', other, createdDate, { comment }));
        workItems[other - 1]!.links.push(makeLink('System.LinkTypes.Related', id, createdDate, { comment }));
      }
    }
    if ((type === 'User Story' || type === 'Task' || type === 'Feature') && rnd.chance(0.05)) {
      const pool = pools[type];
      const other = pool.length ? recent(rnd, pool) : null;
      if (other !== null && other !== parent) {
        // The earlier item comes first: it is this one's predecessor.
        links.push(makeLink('System.LinkTypes.Dependency-Reverse', other, createdDate));
        workItems[other - 1]!.links.push(makeLink('System.LinkTypes.Dependency-Forward', id, createdDate));
      }
    }
    if (type === 'Bug' && pools.Bug.length && rnd.chance(0.06)) {
      const original = recent(rnd, pools.Bug)!;
      links.push(makeLink('System.LinkTypes.Duplicate-Reverse', original, createdDate));
      workItems[original - 1]!.links.push(makeLink('System.LinkTypes.Duplicate-Forward', id, createdDate));
      const dup = typeDef('Bug').states.find((st) => st.name === 'Resolved')!;
      if (item.state !== 'Closed') item.state = dup.name;
      item.reason = 'Duplicate';
      item.rev = Math.max(item.rev, 2);
      if (item.changedDate === createdDate) item.changedDate = createdDate + HOUR;
    }
    if (type === 'Test Case') {
      const story = rnd.chance(0.8) ? recent(rnd, pools['User Story']) : null;
      if (story !== null) {
        links.push(makeLink('Microsoft.VSTS.Common.TestedBy-Reverse', story, createdDate));
        workItems[story - 1]!.links.push(makeLink('Microsoft.VSTS.Common.TestedBy-Forward', id, createdDate));
      }
      if (pools['Shared Steps'].length && (id === 7 || rnd.chance(0.45))) {
        const refs = new Set<number>();
        const want = rnd.int(1, 2);
        for (let i = 0; i < want; i++) refs.add(recent(rnd, pools['Shared Steps'])!);
        item.sharedStepRefs = [...refs];
        for (const ref of refs) {
          links.push(makeLink('Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse', ref, createdDate));
          workItems[ref - 1]!.links.push(
            makeLink('Microsoft.VSTS.TestCase.SharedStepReferencedBy-Forward', id, createdDate),
          );
        }
      }
    }
    if (rnd.chance(0.04)) {
      links.push(
        makeLink('Hyperlink', null, createdDate, {
          url: `https://wiki.contoso.example.com/pages/${mix(seed, id) % 100_000}?section=design&lang=en`,
          comment: rnd.chance(0.5) ? 'Design notes' : null,
        }),
      );
    }
    if ((type === 'Task' || type === 'Bug') && rnd.chance(0.08)) {
      const repo = guidFrom(seed, 0x5e90);
      const commit = rnd.chance(0.6);
      const ref = commit
        ? (
            mix(seed, id, 1).toString(16) +
            mix(seed, id, 2).toString(16) +
            mix(seed, id, 3).toString(16)
          ).padEnd(40, '0')
        : String(100 + (mix(seed, id) % 5000));
      links.push(
        makeLink('ArtifactLink', null, createdDate, {
          url: `vstfs:///Git/${commit ? 'Commit' : 'PullRequestId'}/${projectId}%2F${repo}%2F${ref}`,
          name: commit ? 'Fixed in Commit' : 'Pull Request',
        }),
      );
    }

    // Attachments (AttachedFile relations).
    const attachmentCount = id === 5 || bigAt.has(id) ? rnd.int(1, 3) : rnd.chance(0.12) ? rnd.int(1, 4) : 0;
    for (let a = 0; a < attachmentCount; a++) {
      const big = bigAt.has(id) && a === 0;
      const name = big ? rnd.pick(['database-dump.zip', 'screen recording.mp4']) : rnd.pick(ATTACHMENT_NAMES);
      const att: AdoAttachment = {
        id: guidFrom(seed, id, 0xa77, a),
        fileId: fileId++,
        name,
        size: big ? rnd.int(10 * MB + 1, 15 * MB) : attachmentSize(rnd),
        contentType: contentTypeFor(name),
        workItemId: id,
        createdDate: createdDate + rnd.int(0, Math.max(0, item.changedDate - createdDate)),
        comment: rnd.chance(0.3)
          ? rnd.pick(['Customer screenshot', 'logs from prod', 'v2 – reviewed'])
          : null,
        inline: false,
      };
      item.attachments.push(att);
      attachments.set(att.id, att);
    }

    // Inline images live in an HTML field of the item; bugs always have repro steps to carry them.
    const inlineCount = id === 5 ? 2 : rnd.chance(0.08) ? rnd.int(1, 2) : 0;
    for (let a = 0; a < inlineCount; a++) {
      const name = rnd.pick(['image.png', 'image.png', 'Screenshot 2024-05-01 101500.png', 'pasted.jpg']);
      const att: AdoAttachment = {
        id: guidFrom(seed, id, 0x1a6, a),
        fileId: fileId++,
        name,
        size: rnd.int(1024, 700 * 1024),
        contentType: contentTypeFor(name),
        workItemId: id,
        createdDate,
        comment: null,
        inline: true,
      };
      item.inlineImages.push(att);
      attachments.set(att.id, att);
    }

    pools[type].push(id);
  }

  return {
    org,
    project,
    projectId,
    seed,
    items: n,
    referenceDay,
    people,
    areas,
    iterations,
    workItems,
    attachments,
  };
}

export function isDeletedComment(seed: number, id: number, k: number): boolean {
  return mix(seed, id, k, 0xde1) % 50 === 0;
}

function planningFields(item: AdoWorkItem, rnd: Random, state: string, createdDate: number): void {
  const done = state === 'Closed' || state === 'Resolved';
  switch (item.type) {
    case 'Epic':
    case 'Feature':
      item.valueArea = rnd.chance(0.8) ? 'Business' : 'Architectural';
      if (rnd.chance(0.6)) item.effort = rnd.pick([5, 8, 13, 20, 40, 100]);
      if (rnd.chance(0.3)) item.businessValue = rnd.int(1, 500);
      if (rnd.chance(0.2)) item.timeCriticality = rnd.int(1, 40) / 2;
      if (rnd.chance(0.3)) item.risk = rnd.pick(['1 - High', '2 - Medium', '3 - Low']);
      if (rnd.chance(0.3)) {
        item.startDate = Math.floor(createdDate / DAY) * DAY + 7 * DAY;
        item.targetDate = item.startDate + rnd.int(4, 20) * 7 * DAY;
      }
      break;
    case 'User Story':
      item.valueArea = rnd.chance(0.9) ? 'Business' : 'Architectural';
      if (rnd.chance(0.75)) item.storyPoints = rnd.pick([1, 2, 3, 5, 8, 13, 21, 0.5]);
      if (rnd.chance(0.2)) item.risk = rnd.pick(['1 - High', '2 - Medium', '3 - Low']);
      break;
    case 'Task':
      item.activity = rnd.chance(0.7)
        ? rnd.pick(['Development', 'Development', 'Testing', 'Design', 'Documentation', 'Deployment'])
        : null;
      estimates(item, rnd, done, state);
      break;
    case 'Bug':
      item.severity = rnd.pick(['1 - Critical', '2 - High', '3 - Medium', '3 - Medium', '4 - Low']);
      if (rnd.chance(0.25)) item.storyPoints = rnd.pick([1, 2, 3, 5]);
      if (rnd.chance(0.3)) estimates(item, rnd, done, state);
      break;
    case 'Issue':
      if (rnd.chance(0.5)) item.dueDate = Math.floor(createdDate / DAY) * DAY + rnd.int(3, 30) * DAY;
      break;
    case 'Test Case':
      item.automationStatus = rnd.pick([
        'Not Automated',
        'Not Automated',
        'Not Automated',
        'Planned',
        'Automated',
      ]);
      break;
    case 'Shared Steps':
      break;
  }
}

function estimates(item: AdoWorkItem, rnd: Random, done: boolean, state: string): void {
  if (!rnd.chance(0.75)) return;
  const original = rnd.pick([1, 2, 3, 4, 6, 8, 12, 16, 0.5]);
  item.originalEstimate = original;
  if (done) {
    item.remainingWork = 0;
    item.completedWork = Math.max(0.25, original + rnd.int(-2, 4));
  } else if (state === 'Active') {
    const completed = Math.min(original, rnd.int(0, Math.ceil(original)));
    item.completedWork = completed;
    item.remainingWork = Math.max(0, original - completed);
  } else {
    item.remainingWork = original;
  }
}

const CUSTOM_PLAN: Record<string, { ref: string; p: number }[]> = {
  Epic: [
    { ref: 'Custom.ContractValue', p: 0.3 },
    { ref: 'Custom.GoLiveDate', p: 0.3 },
    { ref: 'Custom.CustomerTier', p: 0.2 },
  ],
  Feature: [
    { ref: 'Custom.ContractValue', p: 0.1 },
    { ref: 'Custom.GoLiveDate', p: 0.25 },
    { ref: 'Custom.CustomerTier', p: 0.2 },
  ],
  'User Story': [
    { ref: 'Custom.CustomerTier', p: 0.2 },
    { ref: 'Custom.Complexity', p: 0.25 },
    { ref: 'Custom.ReleaseNotes', p: 0.1 },
    { ref: 'Custom.ReviewedBy', p: 0.1 },
  ],
  Task: [{ ref: 'Custom.Complexity', p: 0.15 }],
  Bug: [
    { ref: 'Custom.CustomerTier', p: 0.25 },
    { ref: 'Custom.SlaBreached', p: 0.3 },
    { ref: 'Custom.ExternalTicketId', p: 0.2 },
    { ref: 'Custom.ReleaseNotes', p: 0.1 },
    { ref: 'Custom.ReviewedBy', p: 0.1 },
  ],
  Issue: [{ ref: 'Custom.ExternalTicketId', p: 0.3 }],
};

function customFields(
  type: AdoTypeName,
  rnd: Random,
  createdDate: number,
  peopleCount: number,
): Record<string, CustomValue> | null {
  const plan = CUSTOM_PLAN[type];
  if (!plan) return null;
  let out: Record<string, CustomValue> | null = null;
  for (const { ref, p } of plan) {
    if (!rnd.chance(p)) continue;
    out ??= {};
    switch (ref) {
      case 'Custom.CustomerTier':
        out[ref] = rnd.pick(['Platinum', 'Gold', 'Silver', 'Bronze']);
        break;
      case 'Custom.ContractValue':
        out[ref] = rnd.int(1000, 2_000_000) + rnd.int(0, 99) / 100;
        break;
      case 'Custom.SlaBreached':
        out[ref] = rnd.chance(0.3);
        break;
      case 'Custom.GoLiveDate':
        out[ref] = new Date(Math.floor(createdDate / DAY) * DAY + rnd.int(30, 200) * DAY).toISOString();
        break;
      case 'Custom.ReleaseNotes':
        out[ref] =
          `<div>${rnd.pick(['Fixed', 'Improved', 'Added'])} <b>${rnd.pick(['export', 'login', 'search'])}</b> behaviour.</div><ul><li>See KB-${rnd.int(100, 999)}</li></ul>`;
        break;
      case 'Custom.ExternalTicketId':
        out[ref] = `ZD-${rnd.int(10_000, 99_999)}`;
        break;
      case 'Custom.ReviewedBy':
        // Stored as a person index; serialised as an IdentityRef like any identity field.
        out[ref] = rnd.int(0, peopleCount - 1);
        break;
      case 'Custom.Complexity':
        out[ref] = rnd.int(1, 5);
        break;
    }
  }
  return out;
}
