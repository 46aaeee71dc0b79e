/**
 * What a rollback does with each item of the run it takes back (pure: the engine's rollback phase reads the
 * issues, asks here, then acts). Only what the run made goes: an issue it created and nobody changed since the
 * run ended. An issue the run found stays, and what the run wrote to it is taken back (its write journal,
 * journal.ts: what it added removed, the fields it changed restored); one somebody edited in Jira after the run is
 * kept and listed, unless the admin asked to delete those too, and so is one last changed while a later run of the
 * project was at work or being rolled back (later-runs.ts), listed as that run's; an issue with a sub-task that
 * stays cannot go without it. The same answers in a preview (nothing written) and in the real rollback, so the
 * preview is what happens.
 */
import * as z from 'zod';
import { csvLine } from '#domain/csv.ts';
import { exactSchema } from '#domain/exact-schema.ts';
import {
  emptyJournalSummary,
  type JournalSummary,
  journalCountsText,
  tallyUndo,
  type UndoDecision,
} from './journal.ts';
import { type LaterRun, laterRunAt, laterRunReason } from './later-runs.ts';
import { emptyMadeSummary, type MadeDecision, type MadeSummary, madeLabel } from './made.ts';

/** The run's record of one item (its id map entry). */
export interface RolledItem {
  sourceId: number;
  targetKey: string;
  origin: 'created' | 'found';
  /** The run that created or found it. */
  runId: string;
}

/** The issue as Jira answers it now; undefined: no such issue any more. */
export interface IssueNow {
  /** Jira's `updated`: its last change, by anyone. */
  updated: string;
}

export type RollbackAction =
  | 'delete'
  | 'keep-edited'
  | 'keep-later-run'
  | 'keep-found'
  | 'keep-other-run'
  | 'gone';

export interface RollbackDecision {
  sourceId: number;
  key: string;
  action: RollbackAction;
  /** Why an item stays, for the list. */
  reason?: string;
  /** The things the run made that the issue is in (a preview's delete): they empty as it goes. */
  holds?: string[];
  /** On an issue the run did not create: what the rollback does with each write the run journalled on it. */
  changes?: UndoDecision[];
}

export interface RollbackRules {
  /** The run taken back. */
  runId: string;
  /** When the run ended: a change after it is somebody else's. */
  endedAt: string;
  /** Delete issues edited after the run too (the admin said so after seeing them listed). */
  includeEdited?: boolean;
  /** The project's later runs that wrote to Jira (rolled back before this one): a change they made is theirs. */
  laterRuns?: readonly LaterRun[];
}

const REASONS: Record<Exclude<RollbackAction, 'delete' | 'keep-later-run'>, string> = {
  'keep-edited': 'edited in Jira after the run: kept (delete it with includeEdited)',
  'keep-found': 'found by the run, not created: kept, and what the run wrote to it taken back',
  'keep-other-run': 'created or found by another run: roll that run back',
  gone: 'no longer in Jira',
};

const decision = (
  item: RolledItem,
  action: Exclude<RollbackAction, 'keep-later-run'>,
  reason?: string,
): RollbackDecision => ({
  sourceId: item.sourceId,
  key: item.targetKey,
  action,
  ...(action === 'delete' ? {} : { reason: reason ?? REASONS[action] }),
});

/** What the rollback does with one item, its issue as Jira answers it now. */
export function decide(
  item: RolledItem,
  issue: IssueNow | undefined,
  rules: RollbackRules,
): RollbackDecision {
  if (item.runId !== rules.runId) return decision(item, 'keep-other-run');
  if (item.origin === 'found') return decision(item, 'keep-found');
  if (!issue) return decision(item, 'gone');
  const edited = Date.parse(issue.updated) > Date.parse(rules.endedAt);
  if (!edited || rules.includeEdited) return decision(item, 'delete');
  const later = laterRunAt(issue.updated, rules.laterRuns);
  if (!later) return decision(item, 'keep-edited');
  return {
    sourceId: item.sourceId,
    key: item.targetKey,
    action: 'keep-later-run',
    reason: laterRunReason(later, 'delete it'),
  };
}

/** An issue Jira would not delete because a sub-task of it stays: kept, with the sub-task named. */
export function keptForSubtask(d: RollbackDecision, subtask: string): RollbackDecision {
  return { ...d, action: 'keep-edited', reason: `has a sub-task that stays (${subtask}): kept` };
}

/**
 * A pass's counts: the run's items per action, what the run wrote to issues it did not create, then the sprints
 * and components it made.
 */
export interface RollbackSummary extends JournalSummary, MadeSummary {
  items: number;
  deleted: number;
  keptEdited: number;
  /** Changed after the run, last while a later run of the project was at work or being rolled back: kept. */
  keptLaterRun: number;
  keptFound: number;
  keptOtherRun: number;
  gone: number;
}

/** A pass's counts as its artifact and its stream event keep them: `preview` says which pass. */
export interface RollbackReport extends RollbackSummary {
  preview: boolean;
}

export const RollbackReportSchema = exactSchema<RollbackReport>()(
  z.object({
    preview: z.boolean(),
    items: z.number(),
    deleted: z.number(),
    keptEdited: z.number(),
    // Absent from a pass told before a later run's changes were told apart from edits: counted as edited.
    keptLaterRun: z.number().default(0),
    keptFound: z.number(),
    keptOtherRun: z.number(),
    gone: z.number(),
    // Absent from a pass told before the write journal was taken back: nothing of it was.
    removedComments: z.number().default(0),
    removedIssueLinks: z.number().default(0),
    removedRemoteLinks: z.number().default(0),
    removedAttachments: z.number().default(0),
    removedWorklogs: z.number().default(0),
    // Absent from a pass told before the test steps a run added were taken back: none were.
    removedTestSteps: z.number().default(0),
    restoredFields: z.number().default(0),
    keptChanges: z.number().default(0),
    changesGone: z.number().default(0),
    statusesNotUndone: z.number().default(0),
    // Absent from a pass told before the run's sprints and components were taken back: none were. (A pass told
    // with `removedVersions`, always 0, reads without it: the engine makes no version.)
    removedSprints: z.number().default(0),
    removedComponents: z.number().default(0),
    keptMade: z.number().default(0),
  }),
);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The stream's line for a pass done: its counts in words. */
/** What a pass does with the sprints and components the run made, after its issues' counts; '' for none. */
export function madeCountsText(r: MadeSummary, preview: boolean): string {
  const removed = r.removedSprints + r.removedComponents;
  return removed + r.keptMade === 0
    ? ''
    : `; ${plural(r.removedSprints, 'sprint')} and ${plural(r.removedComponents, 'component')} the run made ${preview ? 'would be ' : ''}removed, ${r.keptMade} kept`;
}

export function rollbackDoneLine(r: RollbackReport): string {
  const kept = r.keptEdited + r.keptLaterRun + r.keptFound + r.keptOtherRun;
  const made = journalCountsText(r, r.preview) + madeCountsText(r, r.preview);
  return r.preview
    ? `Rollback preview done: ${r.deleted} of ${r.items} issues would be deleted, ${kept} kept, ${r.gone} gone already${made}`
    : `Rollback done: ${r.deleted} of ${r.items} issues deleted, ${kept} kept, ${r.gone} gone already${made}`;
}

export const emptyRollbackSummary = (): RollbackSummary => ({
  ...emptyJournalSummary(),
  ...emptyMadeSummary(),
  items: 0,
  deleted: 0,
  keptEdited: 0,
  keptLaterRun: 0,
  keptFound: 0,
  keptOtherRun: 0,
  gone: 0,
});

const FIELD: Record<RollbackAction, keyof RollbackSummary> = {
  delete: 'deleted',
  'keep-edited': 'keptEdited',
  'keep-later-run': 'keptLaterRun',
  'keep-found': 'keptFound',
  'keep-other-run': 'keptOtherRun',
  gone: 'gone',
};

export function tallyRollback(summary: RollbackSummary, d: RollbackDecision): void {
  summary.items++;
  summary[FIELD[d.action]]++;
  for (const c of d.changes ?? []) tallyUndo(summary, c);
}

/**
 * Items in the order a rollback deletes them: the lowest hierarchy level first (sub-tasks before their parents,
 * which Jira will not delete while they have any), the run's order within a level.
 */
export function deletionOrder<T extends { level: number }>(items: readonly T[]): T[] {
  return items
    .map((item, at) => ({ item, at }))
    .sort((a, b) => a.item.level - b.item.level || a.at - b.at)
    .map(({ item }) => item);
}

/** What the preview and the rollback say they cannot take back (never hidden). */
export const NOT_UNDONE = [
  "the status moves the run made on issues it found (listed: Jira's workflow decides the way back, and the issue's history stays)",
  'the change history of the fields a rollback restores on issues the run found, and an older revision-history file a run replaced there',
  'sprints and components the run created that still hold an issue after its deletes (kept, and listed with why)',
  "the run's entries in the Jira audit log and the issue numbers it used (Jira does not reuse keys)",
] as const;

/**
 * The rollback's list as CSV, a decision at a time (a 50,000-item run's list never sits in memory), each item's
 * line followed by one per write the run journalled on its issue (`MIG-5 comment 10023` for its key; `remove`,
 * `restore`, `keep-edited`, `keep-later-run`, `keep-refused`, `not-undone` or `gone`), then a line per sprint,
 * component and version the run made (no source id; `sprint 12 "Sprint 3"` for its key).
 */
export async function* rollbackCsv(
  decisions: AsyncIterable<RollbackDecision>,
  preview: boolean,
  made: readonly MadeDecision[] = [],
): AsyncGenerator<string> {
  yield csvLine(['source_id', 'jira_key', preview ? 'would' : 'did', 'reason']);
  for await (const d of decisions) {
    yield csvLine([d.sourceId, d.key, d.action, d.reason ?? '']);
    for (const c of d.changes ?? []) yield csvLine([d.sourceId, c.label, c.action, c.reason ?? '']);
  }
  for (const m of made) yield csvLine(['', madeLabel(m), m.action, m.reason ?? '']);
}
