/**
 * Built issues -> import files of at most `size` issues each (1,500 by default: Atlassian's recommended number
 * per file, about an hour's import), in the order given (the manifest's), each issue labelled with its batch's
 * label beside `src-id-{N}`, so the run can find a batch's issues in Jira after its import.
 *
 * Parents. The importer's documented parent is the `sub-task-link` (source: the child, destination: the
 * parent), which makes the child a sub-task; Atlassian's page documents no other. Epic > standard parents
 * are Jira Cloud's `parent` field, which replaced "Epic Link" (deprecated in 2024), and no importer field is
 * documented for it. So:
 * - a sub-task (level -1) whose parent is a standard issue (level 0) among the issues is placed in its parent's
 *   batch (a parent and its sub-tasks are never split; a group larger than `size` is a batch of its own, with a
 *   warning) and linked by a `sub-task-link`;
 * - a sub-task whose parent is not among the issues is left out of the files (the importer cannot create a
 *   sub-task without its parent): `leftOut`, for the REST phases to create as today;
 * - every other parent/child pair is returned in `parents`, for the REST hierarchy phase to set (`parent` a
 *   level up, else a Relates link, as it does today).
 *
 * Issue links (planIssueLinks: each once, the confirmed link types) go in a file when both ends are in it, as
 * `{name: type, sourceId: the outward phrase's subject, destinationId}`; the others are returned in `links` for
 * the REST links phase, which creates those whose other end was migrated. The ADO link comment has no place in
 * the file (the REST phase's links keep it).
 *
 * `users[]` lists the accounts a file's issues name. Nothing else goes in a file: no site URL, no credential.
 */
import { toLabels } from '../mapping/labels.ts';
import { type LinkPlanOptions, type PlannedLink, planIssueLinks } from '../mapping/links.ts';
import { type ImportFile, type ImportLink, SUB_TASK_LINK } from './format.ts';
import type { BuiltIssue } from './issue.ts';

/** Atlassian's recommended number of issues per file. */
export const DEFAULT_BATCH_SIZE = 1500;

export interface BatchOptions extends LinkPlanOptions {
  projectKey: string;
  /** Issues per file; DEFAULT_BATCH_SIZE when not given. */
  size?: number;
  /** The label of batch n (from 1): one the run can search by; `import-batch-{n}` when not given. */
  batchLabel?: (n: number) => string;
}

export interface ImportBatch {
  /** From 1. */
  number: number;
  label: string;
  /** Its issues' ADO ids, in the file's order. */
  sourceIds: number[];
  file: ImportFile;
}

export interface Batches {
  batches: ImportBatch[];
  /** Issue links not inside one file (ends in two batches, or an end not among the issues). */
  links: PlannedLink[];
  /** Parent/child pairs no file holds. */
  parents: { child: number; parent: number }[];
  /** Sub-tasks in no file, and why. */
  leftOut: { sourceId: number; reason: string }[];
  warnings: string[];
}

const byNumber = (a: ImportLink, b: ImportLink) =>
  Number(a.sourceId) - Number(b.sourceId) ||
  Number(a.destinationId) - Number(b.destinationId) ||
  a.name.localeCompare(b.name);

/** What placing an issue in a file reads of it: its id, its type's level and its parent. */
export type PlacedIssue = Pick<BuiltIssue, 'sourceId' | 'level' | 'parentId'>;

/** Which file each issue goes in, and the parents and sub-tasks no file holds (placeIssues). */
export interface Placement {
  /** Each file's issues' ADO ids, in order. */
  packed: number[][];
  /** ADO id -> its file, from 0. */
  batchOf: Map<number, number>;
  /** Each file's sub-task links (a sub-task and its parent in that file). */
  subTaskLinks: ImportLink[][];
  parents: Batches['parents'];
  leftOut: Batches['leftOut'];
  warnings: string[];
}

/** Groups in the issues' order: each issue that is no sub-task, then the sub-tasks a file can hold under it. */
function groupsOf(issues: readonly PlacedIssue[], leftOut: Batches['leftOut']): PlacedIssue[][] {
  const byId = new Map(issues.map((i) => [i.sourceId, i]));
  const children = new Map<number, PlacedIssue[]>();
  for (const issue of issues) {
    if (issue.level !== -1) continue;
    const parent = issue.parentId === undefined ? undefined : byId.get(issue.parentId);
    if (parent && parent.level === 0)
      children.set(parent.sourceId, [...(children.get(parent.sourceId) ?? []), issue]);
    else
      leftOut.push({
        sourceId: issue.sourceId,
        reason: parent
          ? `its parent #${parent.sourceId} is not a standard issue, as a sub-task's parent must be`
          : `its parent ${issue.parentId === undefined ? 'is missing' : `#${issue.parentId} is not in the import`}: the importer creates no sub-task without one`,
      });
  }
  return issues.filter((i) => i.level !== -1).map((i) => [i, ...(children.get(i.sourceId) ?? [])]);
}

/**
 * The files the issues go in, from their ids, levels and parents alone (a planner that holds no more of them
 * than that: run-files.ts `planRunFilesByBlock`): groups packed in order into files of at most `size`.
 */
export function placeIssues(issues: readonly PlacedIssue[], size: number): Placement {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`not a batch size: ${size}`);
  const out: Placement = {
    packed: [],
    batchOf: new Map(),
    subTaskLinks: [],
    parents: [],
    leftOut: [],
    warnings: [],
  };
  for (const group of groupsOf(issues, out.leftOut)) {
    const last = out.packed.at(-1);
    if (group.length > size)
      out.warnings.push(
        `#${group[0]!.sourceId} and its ${group.length - 1} sub-tasks are more than ${size} issues: one file of ${group.length}`,
      );
    if (last && last.length + group.length <= size) last.push(...group.map((g) => g.sourceId));
    else out.packed.push(group.map((g) => g.sourceId));
  }
  out.packed.forEach((members, i) => {
    for (const m of members) out.batchOf.set(m, i);
  });
  out.subTaskLinks = out.packed.map(() => []);
  for (const issue of issues) {
    const at = out.batchOf.get(issue.sourceId);
    if (issue.parentId === undefined || at === undefined) continue;
    if (issue.level === -1 && out.batchOf.get(issue.parentId) === at)
      out.subTaskLinks[at]!.push({
        name: SUB_TASK_LINK,
        sourceId: String(issue.sourceId),
        destinationId: String(issue.parentId),
      });
    else out.parents.push({ child: issue.sourceId, parent: issue.parentId });
  }
  return out;
}

export function batchesOf(issues: readonly BuiltIssue[], options: BatchOptions): Batches {
  const size = options.size ?? DEFAULT_BATCH_SIZE;
  const labelOf = options.batchLabel ?? ((n: number) => `import-batch-${n}`);
  const placement = placeIssues(issues, size);
  const { batchOf } = placement;
  const out: Batches = {
    batches: [],
    links: [],
    parents: placement.parents,
    leftOut: placement.leftOut,
    warnings: [...placement.warnings],
  };
  const byId = new Map(issues.map((i) => [i.sourceId, i]));
  const packed = placement.packed.map((ids) => ids.map((id) => byId.get(id) as BuiltIssue));
  const fileLinks: ImportLink[][] = placement.subTaskLinks.map((l) => [...l]);

  const placed = issues.filter((i) => batchOf.has(i.sourceId));
  const planned = planIssueLinks(
    placed.map((i) => ({ id: i.sourceId, relations: i.relations })),
    options,
  );
  out.warnings.push(...planned.warnings);
  for (const link of planned.links) {
    const at = batchOf.get(link.from);
    if (at !== undefined && batchOf.get(link.to) === at)
      fileLinks[at]!.push({ name: link.type, sourceId: String(link.from), destinationId: String(link.to) });
    else out.links.push(link);
  }

  out.batches = packed.map((members, i) => {
    const label = labelOf(i + 1);
    const accounts = [...new Set(members.flatMap((m) => m.accountIds))].sort();
    const subTasks = fileLinks[i]!.filter((l) => l.name === SUB_TASK_LINK).sort(byNumber);
    const others = fileLinks[i]!.filter((l) => l.name !== SUB_TASK_LINK).sort(byNumber);
    return {
      number: i + 1,
      label,
      sourceIds: members.map((m) => m.sourceId),
      file: {
        users: accounts.map((name) => ({ name })),
        links: [...subTasks, ...others],
        projects: [
          {
            key: options.projectKey,
            issues: members.map((m) => ({
              ...m.issue,
              labels: toLabels([...(m.issue.labels ?? []), label]),
            })),
          },
        ],
      },
    };
  });
  return out;
}
