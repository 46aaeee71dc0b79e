/**
 * An item's generated history: revision 1 is the creation (in the type's first state), later revisions walk the
 * state towards the current one and otherwise edit the title, the assignee, the iteration or the priority.
 * The last generated revision equals the item as generated. Derived from the seed on demand.
 */
import { Purpose, rngFor } from './hash.ts';
import { ADO_STRING_MAX, type StateCategory, typeDef } from './process.ts';
import { clipUtf16 } from './text.ts';
import type { AdoWorkItem, AdoWorld } from './types.ts';

export interface RevisionState {
  rev: number;
  changedDate: number;
  changedBy: number;
  state: string;
  reason: string;
  title: string;
  assignedTo: number;
  iterationPath: string;
  priority: number | null;
  /** When the state in force at this revision was entered. */
  stateChangeDate: number;
}

const ORDER: Record<StateCategory, number> = {
  Proposed: 0,
  InProgress: 1,
  Resolved: 2,
  Completed: 3,
  Removed: 4,
};

/** The states an item passed through, from its type's first state to `final`. */
function statePath(type: AdoWorkItem['type'], final: string, wantsDetour: boolean): string[] {
  const states = typeDef(type).states;
  const first = states[0]!;
  const target = states.find((s) => s.name === final) ?? first;
  if (target === first) return [first.name];
  const path = [first.name];
  for (const s of states.slice(1)) {
    if (s === target) break;
    if (s.category === 'Removed') continue;
    // Removed items are usually dropped early; others pass through each stage before theirs.
    if (
      target.category === 'Removed'
        ? wantsDetour && ORDER[s.category] === 1
        : ORDER[s.category] < ORDER[target.category]
    )
      path.push(s.name);
  }
  path.push(target.name);
  return path;
}

function defaultReason(type: AdoWorkItem['type'], state: string): string {
  return typeDef(type).states.find((s) => s.name === state)?.reasons[0] ?? '';
}

export function revisionPlan(world: AdoWorld, item: AdoWorkItem): RevisionState[] {
  if (item.rev === 1) {
    // A single revision is the item as it is (what the walk below yields too, for any state it was created in).
    const { createdDate, changedDate, createdBy, state, reason, title, assignedTo, iterationPath, priority } =
      item;
    return [
      {
        rev: 1,
        changedDate,
        changedBy: createdBy,
        state,
        reason,
        title,
        assignedTo,
        iterationPath,
        priority,
        stateChangeDate: createdDate,
      },
    ];
  }
  const rnd = rngFor(world.seed, item.id, Purpose.revisions);
  const count = item.rev;
  const dates = [item.createdDate];
  if (count > 1) {
    const inner = Array.from({ length: count - 2 }, () =>
      Math.floor(item.createdDate + rnd.next() * (item.changedDate - item.createdDate)),
    ).sort((a, b) => a - b);
    dates.push(...inner, item.changedDate);
  }
  let path = statePath(item.type, item.state, rnd.chance(0.5));
  const changes = count - 1;
  if (path.length - 1 > changes) {
    // Fewer revisions than stages: the item skipped some (ADO allows any transition).
    path = [path[0]!, ...path.slice(1, -1).slice(0, Math.max(0, changes - 1)), path.at(-1)!];
  }
  // Revisions (2..count) at which each transition happened, in order.
  const transitionRevs: number[] = [];
  const available = Array.from({ length: changes }, (_, i) => i + 2);
  for (let t = 0; t < path.length - 1; t++) {
    const idx = rnd.int(0, available.length - (path.length - 1 - t));
    transitionRevs.push(available[idx]!);
    available.splice(0, idx + 1);
  }
  // Work back from the current values: an edit at revision r means earlier revisions had an older value.
  const people = world.people.length;
  let title = item.title;
  let assignedTo = item.assignedTo;
  let iterationPath = item.iterationPath;
  let priority = item.priority;
  const values: { title: string; assignedTo: number; iterationPath: string; priority: number | null }[] = [];
  for (let r = count; r >= 1; r--) {
    values[r] = { title, assignedTo, iterationPath, priority };
    if (r === 1 || transitionRevs.includes(r)) {
      // State changes often come with a reassignment.
      if (r > 1 && rnd.chance(0.3)) assignedTo = rnd.chance(0.3) ? -1 : rnd.int(0, people - 1);
      continue;
    }
    const kind = rnd.int(0, 3);
    if (kind === 0)
      // An earlier title was never longer than ADO allows: no prefix on a title at the cap.
      title =
        rnd.chance(0.5) && title.length + 5 <= ADO_STRING_MAX
          ? `WIP: ${title}`
          : clipUtf16(title, Math.max(8, Math.floor(title.length * 0.6))).trimEnd();
    else if (kind === 1) assignedTo = assignedTo === -1 || rnd.chance(0.3) ? rnd.int(0, people - 1) : -1;
    else if (kind === 2)
      iterationPath = iterationPath === world.project ? `${world.project}\\Backlog` : world.project;
    else if (priority !== null) priority = priority === 2 ? 3 : 2;
  }
  const plan: RevisionState[] = [];
  let stateIdx = 0;
  let stateChangeDate = item.createdDate;
  for (let r = 1; r <= count; r++) {
    if (transitionRevs[stateIdx] === r) {
      stateIdx++;
      stateChangeDate = dates[r - 1]!;
    }
    const state = path[stateIdx]!;
    const v = values[r]!;
    plan.push({
      rev: r,
      changedDate: dates[r - 1]!,
      changedBy: r === 1 ? item.createdBy : r === count ? item.changedBy : rnd.int(0, people - 1),
      state,
      reason: state === item.state ? item.reason : defaultReason(item.type, state),
      ...v,
      stateChangeDate,
    });
  }
  return plan;
}

/** When the item first entered a state of each category, as of revision `upTo` (for Activated/Resolved/Closed). */
export function categoryDates(
  item: AdoWorkItem,
  plan: RevisionState[],
  upTo: number,
): Partial<Record<StateCategory, { date: number; by: number }>> {
  const def = typeDef(item.type);
  const out: Partial<Record<StateCategory, { date: number; by: number }>> = {};
  let previous = '';
  for (const r of plan.slice(0, upTo)) {
    if (r.state !== previous) {
      const cat = def.states.find((s) => s.name === r.state)?.category;
      if (cat) out[cat] = { date: r.changedDate, by: r.changedBy };
      previous = r.state;
    }
  }
  return out;
}
