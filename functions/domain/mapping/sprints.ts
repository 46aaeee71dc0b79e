/**
 * ADO iterations -> Jira sprints.
 *
 * Rules:
 * - Only iterations that in-scope items use become sprints, and only dated ones: the root iteration means
 *   "no sprint" in ADO, and a sprint without dates could never be started (Jira needs both to start one), so
 *   an undated iteration (Backlog, an unscheduled bucket) leaves its items in the backlog.
 * - A sprint is named after its node; when another dated iteration has the same node name, the path below the
 *   root is used instead (`Release 2 / Sprint 1`), so the name depends on the tree alone and a re-run finds
 *   the same sprint by name.
 * - ADO dates are calendar days (midnight UTC): the sprint runs from the start of the first day to the end of
 *   the last. Its state is what ADO showed on the reference day: ended -> closed, under way -> active,
 *   otherwise future.
 */
import * as z from 'zod';
import { exactSchema } from '../exact-schema.ts';
import { componentNameForArea } from './components.ts';
import { clip, JIRA_NAME_MAX } from './text.ts';

const DAY = 86_400_000;

export const SPRINT_STATES = ['future', 'active', 'closed'] as const;
export type SprintState = (typeof SPRINT_STATES)[number];

/** An iteration classification node as the ADO API answers it (children with `$depth`). */
export interface IterationNode {
  name: string;
  attributes?: { startDate?: string; finishDate?: string } | null;
  children?: IterationNode[] | null;
}

export interface PlannedSprint {
  /** The iteration's work-item path (`Contoso\Release 1\Sprint 3`), as the tree spells it. */
  iterationPath: string;
  name: string;
  startDate: string;
  endDate: string;
  /** The state the iteration's dates give on the reference day. */
  state: SprintState;
}

/** As a run's preflight artifact keeps it. */
export const PlannedSprintSchema = exactSchema<PlannedSprint>()(
  z.object({
    iterationPath: z.string(),
    name: z.string(),
    startDate: z.string(),
    endDate: z.string(),
    state: z.enum(SPRINT_STATES),
  }),
);

export type UnplannedReason = 'root' | 'undated' | 'unknown';

export interface SprintPlan {
  /** In date order (start, then end, then path). */
  sprints: PlannedSprint[];
  /** Iterations in-scope items use that get no sprint, and why. */
  unplanned: { iterationPath: string; reason: UnplannedReason }[];
}

interface Flat {
  path: string;
  name: string;
  depth: number;
  startMs?: number;
  endMs?: number;
}

const dayOf = (iso: string | undefined): number | undefined => {
  const ms = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? undefined : Math.floor(ms / DAY) * DAY;
};

function flatten(root: IterationNode): Flat[] {
  const out: Flat[] = [];
  const walk = (node: IterationNode, path: string, depth: number) => {
    const start = dayOf(node.attributes?.startDate);
    const finish = dayOf(node.attributes?.finishDate);
    // A finish before the start is as good as no dates: Jira would refuse the sprint.
    const dated = start !== undefined && finish !== undefined && finish >= start;
    out.push({
      path,
      name: node.name,
      depth,
      ...(dated ? { startMs: start, endMs: finish + DAY } : {}),
    });
    for (const child of node.children ?? []) walk(child, `${path}\\${child.name}`, depth + 1);
  };
  walk(root, root.name, 0);
  return out;
}

/** The state of a sprint running [startMs, endMs) on the reference instant. */
export function sprintStateOn(startMs: number, endMs: number, referenceMs: number): SprintState {
  if (referenceMs >= endMs) return 'closed';
  return referenceMs >= startMs ? 'active' : 'future';
}

/** The sprints the in-scope items' iterations need, with their target states on the reference day. */
export function planSprints(
  root: IterationNode,
  usedPaths: Iterable<string>,
  referenceMs: number,
): SprintPlan {
  const nodes = flatten(root);
  const byPath = new Map(nodes.map((n) => [n.path.toLowerCase(), n]));
  const leafCount = new Map<string, number>();
  for (const n of nodes) {
    if (n.depth > 0 && n.startMs !== undefined)
      leafCount.set(n.name.toLowerCase(), (leafCount.get(n.name.toLowerCase()) ?? 0) + 1);
  }
  const nameOf = (n: Flat) =>
    (leafCount.get(n.name.toLowerCase()) ?? 0) > 1
      ? (componentNameForArea(n.path, root.name) ?? n.name)
      : clip(n.name.trim(), JIRA_NAME_MAX); // Jira trims sprint names: so must the name looked up

  const sprints = new Map<string, PlannedSprint>();
  const unplanned = new Map<string, { iterationPath: string; reason: UnplannedReason }>();
  for (const used of usedPaths) {
    const key = used.trim().toLowerCase();
    if (key === '' || sprints.has(key) || unplanned.has(key)) continue;
    const node = byPath.get(key);
    if (!node) unplanned.set(key, { iterationPath: used, reason: 'unknown' });
    else if (node.depth === 0) unplanned.set(key, { iterationPath: node.path, reason: 'root' });
    else if (node.startMs === undefined || node.endMs === undefined)
      unplanned.set(key, { iterationPath: node.path, reason: 'undated' });
    else {
      sprints.set(key, {
        iterationPath: node.path,
        name: nameOf(node),
        startDate: new Date(node.startMs).toISOString(),
        // The last millisecond of the finish day: Jira shows the sprint ending on that day.
        endDate: new Date(node.endMs - 1000).toISOString(),
        state: sprintStateOn(node.startMs, node.endMs, referenceMs),
      });
    }
  }
  return {
    sprints: [...sprints.values()].sort(
      (a, b) =>
        a.startDate.localeCompare(b.startDate) ||
        a.endDate.localeCompare(b.endDate) ||
        a.iterationPath.localeCompare(b.iterationPath),
    ),
    unplanned: [...unplanned.values()],
  };
}

export interface SprintInJira {
  id: number;
  name: string;
  startDate: string;
  endDate: string;
  /** Where the dates put it. */
  state: SprintState;
  /** Where it is in Jira now. */
  jiraState: SprintState;
}

export interface SprintStep {
  id: number;
  name: string;
  action: 'start' | 'close';
}

/**
 * The start/close calls that bring Jira's sprints to their target states within Jira's rules: a sprint is
 * started (dates set) before it is closed, and a board has one active sprint unless parallel sprints are on.
 * So past sprints go first, in date order, each started and closed before the next; then the current ones
 * start, the most specific (shortest) first, so that without parallel sprints the sprint wins over a dated
 * release around it. Nothing ever moves back: a closed sprint cannot be reopened, an active one not unstarted.
 */
export function sprintSteps(sprints: readonly SprintInJira[]): SprintStep[] {
  const steps: SprintStep[] = [];
  const past = sprints
    .filter((s) => s.state === 'closed' && s.jiraState !== 'closed')
    .sort((a, b) => a.endDate.localeCompare(b.endDate) || a.startDate.localeCompare(b.startDate));
  for (const s of past) {
    if (s.jiraState === 'future') steps.push({ id: s.id, name: s.name, action: 'start' });
    steps.push({ id: s.id, name: s.name, action: 'close' });
  }
  const span = (s: SprintInJira) => Date.parse(s.endDate) - Date.parse(s.startDate);
  const current = sprints
    .filter((s) => s.state === 'active' && s.jiraState === 'future')
    .sort((a, b) => span(a) - span(b) || b.startDate.localeCompare(a.startDate));
  for (const s of current) steps.push({ id: s.id, name: s.name, action: 'start' });
  return steps;
}
