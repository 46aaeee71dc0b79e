/**
 * A run's import files: every manifest item (its fields, revisions and comments, read by the engine) through
 * issueOf, into batches (batchesOf) labelled with the run's id, each serialised (serialiseImportFile), with an
 * index of what the files hold and what they leave to the REST phases (parents and links across files,
 * sub-tasks left out, people without a Jira account). Pure: the store keeps what this returns
 * (store/import-files.ts).
 */
import * as z from 'zod';
import { IssueLinkPlanner, type LinkPlanOptions } from '../mapping/links.ts';
import { batchesOf, type PlacedIssue, placeIssues } from './batches.ts';
import type { SourceRevision } from './history.ts';
import { type BuiltIssue, issueOf } from './issue.ts';
import type { ImportMapping } from './mapping.ts';
import { serialiseImportFile } from './serialise.ts';
import type { BodyHook, SourceComment, SourceItem } from './text.ts';

/** One manifest item as the engine reads it from Azure DevOps. */
export interface SourceRecord {
  item: SourceItem;
  revisions: readonly SourceRevision[];
  comments: readonly SourceComment[];
}

export interface RunFilesOptions extends LinkPlanOptions {
  runId: string;
  /** Issues per file: the project's importBatchSize. */
  size: number;
  body?: BodyHook;
}

/** What a run's files hold and leave out, as the store keeps it beside them (parsed on read). */
export const ImportIndexSchema = z.object({
  runId: z.string(),
  size: z.number().int().positive(),
  batches: z.array(
    z.object({ number: z.number().int().positive(), label: z.string(), sourceIds: z.array(z.number()) }),
  ),
  /** Parent/child pairs and issue links no one file holds: the REST phases set them after the imports. */
  parents: z.array(z.object({ child: z.number(), parent: z.number() })),
  links: z.array(
    z.object({ type: z.string(), from: z.number(), to: z.number(), comment: z.string().optional() }),
  ),
  leftOut: z.array(z.object({ sourceId: z.number(), reason: z.string() })),
  /** People named without a Jira account (e-mail, else display name): their names stay as text. */
  unmappedPeople: z.array(z.string()),
  warnings: z.array(z.string()),
});
export type ImportIndex = z.infer<typeof ImportIndexSchema>;

export interface RunFiles {
  /** Batch n's file as the importer takes it, from 1. */
  files: { number: number; text: string }[];
  index: ImportIndex;
}

/**
 * The label a batch's issues carry: the run's id makes it unique across runs of a project, so the resume can
 * find exactly one batch's issues by label (and a second import of the same file by its duplicates).
 */
export const runBatchLabel = (runId: string, n: number): string => `tms-import-${runId.toLowerCase()}-${n}`;

export function runImportFiles(
  records: readonly SourceRecord[],
  mapping: ImportMapping,
  options: RunFilesOptions,
): RunFiles {
  const built: BuiltIssue[] = records.map((r) =>
    issueOf(r.item, r.revisions, r.comments, mapping, options.body ? { body: options.body } : {}),
  );
  return runFilesOfIssues(built, mapping.projectKey, options);
}

/**
 * The files of issues already built (issueOf), all in one piece: for a run's files small enough to hold.
 */
export function runFilesOfIssues(
  built: readonly BuiltIssue[],
  projectKey: string,
  options: RunFilesOptions,
): RunFiles {
  const planned = batchesOf(
    built,
    batchOptions(projectKey, options, (n) => runBatchLabel(options.runId, n)),
  );
  return {
    files: planned.batches.map((b) => ({ number: b.number, text: serialiseImportFile(b.file) })),
    index: indexOf(built, planned, options),
  };
}

const batchOptions = (projectKey: string, options: RunFilesOptions, batchLabel: (n: number) => string) => ({
  projectKey,
  size: options.size,
  batchLabel,
  ...(options.availableTypes ? { availableTypes: options.availableTypes } : {}),
  ...(options.linkTypes ? { linkTypes: options.linkTypes } : {}),
});

function indexOf(
  built: readonly BuiltIssue[],
  planned: ReturnType<typeof batchesOf>,
  options: RunFilesOptions,
): ImportIndex {
  const unmapped = new Set(built.flatMap((b) => b.unmappedPeople));
  return {
    runId: options.runId,
    size: options.size,
    batches: planned.batches.map((b) => ({ number: b.number, label: b.label, sourceIds: b.sourceIds })),
    parents: planned.parents,
    links: planned.links,
    leftOut: planned.leftOut,
    unmappedPeople: [...unmapped].sort(),
    warnings: [...built.flatMap((b) => b.warnings), ...planned.warnings],
  };
}

/**
 * An issue without its text, comments and history: what deciding the files needs (its type's level, its parent,
 * its relations, its people), a small part of what the file holds. The engine keeps these for the whole run and
 * the built issues a batch at a time.
 */
export function planningStandIn(built: BuiltIssue): BuiltIssue {
  const { description: _description, comments: _comments, history: _history, ...issue } = built.issue;
  return { ...built, issue };
}

/**
 * The index of a run's files, from every issue's stand-in (planningStandIn) in the manifest's order: which issues
 * each batch holds, and what no file holds. The same as runFilesOfIssues' index.
 */
export function planRunFiles(
  standIns: readonly BuiltIssue[],
  projectKey: string,
  options: RunFilesOptions,
): ImportIndex {
  const planned = batchesOf(
    standIns,
    batchOptions(projectKey, options, (n) => runBatchLabel(options.runId, n)),
  );
  return indexOf(standIns, planned, options);
}

/** A run's built issues, a block at a time (the engine's blocks of the manifest), in the manifest's order. */
export interface BuiltBlocks {
  count: number;
  read(n: number): Promise<readonly BuiltIssue[]>;
}

/**
 * planRunFiles' index, from the built issues read a block at a time, holding none of them past its block: a first
 * pass keeps each issue's id, level and parent (where it goes: placeIssues), a second its links, people and
 * warnings. Each block is read twice, one at a time; what is kept for the whole run is what the index holds, and
 * three numbers an issue.
 */
export async function planRunFilesByBlock(
  blocks: BuiltBlocks,
  options: RunFilesOptions,
): Promise<ImportIndex> {
  const placing: PlacedIssue[] = [];
  for (let n = 0; n < blocks.count; n++)
    for (const issue of await blocks.read(n))
      placing.push({
        sourceId: issue.sourceId,
        level: issue.level,
        ...(issue.parentId === undefined ? {} : { parentId: issue.parentId }),
      });
  const placement = placeIssues(placing, options.size);
  const linkPlanner = new IssueLinkPlanner(options);
  const unmapped = new Set<string>();
  const warnings: string[] = [];
  for (let n = 0; n < blocks.count; n++)
    for (const issue of await blocks.read(n)) {
      if (placement.batchOf.has(issue.sourceId))
        linkPlanner.add({ id: issue.sourceId, relations: [...issue.relations] });
      for (const person of issue.unmappedPeople) unmapped.add(person);
      warnings.push(...issue.warnings);
    }
  const planned = linkPlanner.planned();
  const { batchOf } = placement;
  return {
    runId: options.runId,
    size: options.size,
    batches: placement.packed.map((sourceIds, i) => ({
      number: i + 1,
      label: runBatchLabel(options.runId, i + 1),
      sourceIds,
    })),
    parents: placement.parents,
    // The links no one file holds (those inside one go in its file: runFileOf).
    links: planned.links.filter(
      (l) => batchOf.get(l.from) === undefined || batchOf.get(l.from) !== batchOf.get(l.to),
    ),
    leftOut: placement.leftOut,
    unmappedPeople: [...unmapped].sort(),
    warnings: [...warnings, ...placement.warnings, ...planned.warnings],
  };
}

/**
 * Batch `n`'s file, from its issues built whole, in the plan's order (`index.batches[n - 1].sourceIds`): the same
 * text runFilesOfIssues writes for it, as a file's content and links depend on its own issues only.
 */
export function runFileOf(
  issues: readonly BuiltIssue[],
  n: number,
  projectKey: string,
  options: RunFilesOptions,
): string {
  const planned = batchesOf(issues, {
    ...batchOptions(projectKey, options, () => runBatchLabel(options.runId, n)),
    // One file, whatever its size: the plan made it one.
    size: Math.max(issues.length, 1),
  });
  const [batch] = planned.batches;
  if (!batch || planned.batches.length !== 1)
    throw new Error(`batch ${n}'s issues do not make one file (${planned.batches.length})`);
  return serialiseImportFile(batch.file);
}
