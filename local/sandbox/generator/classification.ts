/**
 * Area and iteration trees. Paths here are work-item style (`Contoso\Web\Frontend`, what System.AreaPath
 * holds); the classification-nodes API adds the structure segment (`\Contoso\Area\Web\Frontend`) itself.
 *
 * Iterations are two-week sprints grouped in releases, laid out around the world's reference day so there are
 * past, current and future sprints; some nodes have no dates at all (Backlog, an unscheduled sprint, some
 * releases), as in real projects.
 */
import { guidFrom, mix } from './hash.ts';

export interface ClassificationNode {
  id: number;
  identifier: string;
  name: string;
  structureType: 'area' | 'iteration';
  /** Work-item style path, project name first. */
  path: string;
  /** The project root is depth 0. */
  depth: number;
  /** ISO dates (midnight UTC) for dated iterations. */
  startDate?: string;
  finishDate?: string;
  children: ClassificationNode[];
}

const DAY = 86_400_000;

interface Spec {
  name: string;
  children?: Spec[];
}

const AREAS: Spec[] = [
  {
    name: 'Web',
    children: [{ name: 'Frontend' }, { name: 'Backend', children: [{ name: 'API' }, { name: 'Workers' }] }],
  },
  { name: 'Mobile', children: [{ name: 'iOS' }, { name: 'Android' }] },
  {
    name: 'Platform',
    children: [
      { name: 'Infrastructure' },
      { name: 'Security' },
      { name: 'Data', children: [{ name: 'Warehouse', children: [{ name: 'ETL' }] }] },
    ],
  },
  { name: 'Customer Success' },
  { name: 'R&D – Ünïcode Lab' },
];

function build(
  spec: Spec,
  parentPath: string,
  depth: number,
  type: ClassificationNode['structureType'],
  next: () => number,
  seed: number,
): ClassificationNode {
  const path = parentPath ? `${parentPath}\\${spec.name}` : spec.name;
  const id = next();
  return {
    id,
    identifier: guidFrom(seed, id, 0xc1a5),
    name: spec.name,
    structureType: type,
    path,
    depth,
    children: (spec.children ?? []).map((c) => build(c, path, depth + 1, type, next, seed)),
  };
}

export function flatten(node: ClassificationNode): ClassificationNode[] {
  const out: ClassificationNode[] = [];
  const walk = (n: ClassificationNode) => {
    out.push(n);
    for (const c of n.children) walk(c);
  };
  walk(node);
  return out;
}

export function buildAreas(project: string, seed: number): ClassificationNode {
  let nextId = 1000 + (mix(seed, 1) % 500);
  const next = () => nextId++;
  return build({ name: project, children: AREAS }, '', 0, 'area', next, seed);
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

export interface IterationLayout {
  root: ClassificationNode;
  /** Dated sprints in time order. */
  sprints: ClassificationNode[];
  /** Release nodes in time order. */
  releases: ClassificationNode[];
  /** Iterations without dates (besides the root). */
  undated: ClassificationNode[];
  /** Start of the project (first sprint's start). */
  startMs: number;
}

/**
 * 52 past sprints, the current one and 3 future ones, six per release. Every third release node has no dates
 * of its own; the last release also holds an unscheduled sprint.
 */
export function buildIterations(project: string, seed: number, referenceDayMs: number): IterationLayout {
  let nextId = 2000 + (mix(seed, 2) % 500);
  const next = () => nextId++;
  // Sprints are fortnights starting on Mondays (1970-01-05, day 4, was one); the reference day falls in sprint 53.
  const day = Math.floor(referenceDayMs / DAY);
  const currentStart = (4 + Math.floor((day - 4) / 14) * 14) * DAY;
  const firstStart = currentStart - 52 * 14 * DAY;
  const sprintCount = 56;
  const node = (name: string, path: string, depth: number): ClassificationNode => {
    const id = next();
    return {
      id,
      identifier: guidFrom(seed, id, 0x17e4),
      name,
      structureType: 'iteration',
      path,
      depth,
      children: [],
    };
  };
  const root = node(project, project, 0);
  const sprints: ClassificationNode[] = [];
  const releases: ClassificationNode[] = [];
  const undated: ClassificationNode[] = [];
  const backlog = node('Backlog', `${project}\\Backlog`, 1);
  root.children.push(backlog);
  undated.push(backlog);
  for (let r = 0; r * 6 < sprintCount; r++) {
    const name = `Release ${r + 1}`;
    const release = node(name, `${project}\\${name}`, 1);
    const first = r * 6;
    const last = Math.min(sprintCount, first + 6) - 1;
    if (r % 3 !== 2) {
      release.startDate = iso(firstStart + first * 14 * DAY);
      release.finishDate = iso(firstStart + last * 14 * DAY + 11 * DAY);
    } else {
      undated.push(release);
    }
    for (let i = first; i <= last; i++) {
      const sprintName = i === 40 ? `Sprint ${i + 1} – Hardening` : `Sprint ${i + 1}`;
      const sprint = node(sprintName, `${release.path}\\${sprintName}`, 2);
      sprint.startDate = iso(firstStart + i * 14 * DAY);
      sprint.finishDate = iso(firstStart + i * 14 * DAY + 11 * DAY);
      release.children.push(sprint);
      sprints.push(sprint);
    }
    root.children.push(release);
    releases.push(release);
  }
  const lastRelease = releases.at(-1)!;
  const unscheduled = node('Unscheduled', `${lastRelease.path}\\Unscheduled`, 2);
  lastRelease.children.push(unscheduled);
  undated.push(unscheduled);
  const ideas = node('Ideas – Ünïcode', `${project}\\Ideas – Ünïcode`, 1);
  root.children.push(ideas);
  undated.push(ideas);
  return { root, sprints, releases, undated, startMs: firstStart };
}
