/**
 * The write journal: what a run wrote to Jira on an issue it did not create (one it found there by its src-id
 * label, or one an earlier run made), one record a write, and what a rollback does with each (pure: the phases
 * journal before they write, the rollback phase reads the journal and the issue, asks here, then acts). An issue
 * the run created needs no record of its own: the id map and the create phase's pending-write journal name it,
 * and its delete takes everything on it along.
 *
 * A record is written before its write, so a crash never leaves an unjournalled change: a write whose id Jira
 * gives only in its answer (a comment, a worklog, a file, a test step in the test-management add-on) is journalled
 * as an intent (`id` null) with what finds it again (its marker, its file name, its place and texts' digest), then
 * settled with the id; a field's record holds its value before the
 * run changed it (the first record of a field wins: a later write of the same field keeps the true before). A
 * record stays small whatever the project's size: a value over `BEFORE_INLINE_MAX` is kept as a run artifact
 * and named here, a comment is found by at most `FIND_MAX` characters of its text.
 *
 * The rollback removes each comment, worklog, file, issue link, remote link and test step the run added and puts
 * each field back as it was, unless somebody changed it after the run (a comment or worklog edited, the field
 * changed in Jira's history, a test step's texts no longer the run's): kept and listed, unless the admin includes edited ones. A status move is never moved back
 * (Jira's workflow decides the way, and its history stays): listed. Once carried out, a record is forgotten, so a
 * rollback worked again after a crash does nothing twice.
 */
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { type LaterRun, laterRunAt, laterRunReason } from './later-runs.ts';

export const JOURNAL_KINDS = [
  'comment',
  'worklog',
  'testStep',
  'attachment',
  'issueLink',
  'remoteLink',
  'field',
  'status',
] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

/** A field's value as Jira answered it (JSON). */
const FieldValueSchema = z.json();
export type FieldValue = z.output<typeof FieldValueSchema>;

/** One write to an issue the run did not create, as journalled before it is made. */
export type JournalledWrite =
  /** A comment: `find` is text its body holds (its marker, or the start of an issue link's comment). */
  | { kind: 'comment'; find: string; id: string | null }
  /** A worklog, found again the same way (the plugin's marker). */
  | { kind: 'worklog'; find: string; id: string | null }
  /**
   * A test step the test-case-steps plugin added in the test-management add-on (its record, not Jira's): `index`
   * its place among the test's steps, `digest` what the run wrote (the add-on tells no time of an edit: a step
   * whose texts no longer give this digest was edited), `id` the add-on's.
   */
  | { kind: 'testStep'; index: number; digest: string; id: string | null }
  /** A file by its name; `had`: the issue's files of that name before the upload (none of them the run's). */
  | { kind: 'attachment'; name: string; id: string | null; had: string[] }
  /** "`subjectKey` <the type's outward phrase> `objectKey`": Jira answers no id; it is read off the subject. */
  | { kind: 'issueLink'; type: string; subjectKey: string; objectKey: string }
  /** A remote link, by the `globalId` Jira deletes it by. */
  | { kind: 'remoteLink'; globalId: string }
  /** A field's value before the run changed it, as Jira answered it; in `beforeFile` (a run artifact) when large. */
  | { kind: 'field'; field: string; before: FieldValue; beforeFile?: string }
  /** A status move: never moved back, listed. */
  | { kind: 'status'; from: string; to: string };

/** One journalled write: the item, the issue, the phase and when (before the write). */
export interface JournalRecord {
  sourceId: number;
  key: string;
  phase: number;
  at: string;
  write: JournalledWrite;
}

/** At most this many characters of a comment's text find it again (an issue link's comment, not a marker). */
export const FIND_MAX = 200;
/** A field's value before, as JSON, kept in the record up to this size; larger ones go to a run artifact. */
export const BEFORE_INLINE_MAX = 16 * 1024;
/** At most this many ids of same-named files are kept with a file's record. */
export const HAD_MAX = 20;

const idOrNull = z.string().nullable();
const WriteSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('comment'), find: z.string(), id: idOrNull }),
  z.object({ kind: z.literal('worklog'), find: z.string(), id: idOrNull }),
  z.object({ kind: z.literal('testStep'), index: z.number(), digest: z.string(), id: idOrNull }),
  z.object({ kind: z.literal('attachment'), name: z.string(), id: idOrNull, had: z.array(z.string()) }),
  z.object({
    kind: z.literal('issueLink'),
    type: z.string(),
    subjectKey: z.string(),
    objectKey: z.string(),
  }),
  z.object({ kind: z.literal('remoteLink'), globalId: z.string() }),
  z.object({
    kind: z.literal('field'),
    field: z.string(),
    before: FieldValueSchema,
    beforeFile: z.string().optional(),
  }),
  z.object({ kind: z.literal('status'), from: z.string(), to: z.string() }),
]);

export const JournalRecordSchema = exactSchema<JournalRecord>()(
  z.object({
    sourceId: z.number(),
    key: z.string(),
    phase: z.number(),
    at: z.string(),
    write: WriteSchema,
  }),
);

/**
 * What tells a write apart from the item's other writes (its key in the journal): a second record of the same
 * write replaces the first (an intent written again), but for a field and a status, whose first record wins.
 */
export function journalRef(write: JournalledWrite): string {
  switch (write.kind) {
    case 'comment':
    case 'worklog':
      return `${write.kind} ${write.find}`;
    case 'testStep':
      return `testStep ${write.index}`;
    case 'attachment':
      return `attachment ${write.name}`;
    case 'issueLink':
      return `issueLink ${write.type}|${write.subjectKey}|${write.objectKey}`;
    case 'remoteLink':
      return `remoteLink ${write.globalId}`;
    case 'field':
      return `field ${write.field}`;
    case 'status':
      return 'status';
  }
}

/**
 * The plugin whose add-on holds a kind's writes (not Jira): the rollback reads and removes them through that
 * plugin's client, built from the tenant's stored configuration.
 */
export const PLUGIN_OF_KIND: Partial<Record<JournalKind, string>> = { testStep: 'test-case-steps' };

/** A field's and a status's first record is the one that counts: the value before the run, not before its last write. */
export const firstRecordWins = (write: JournalledWrite) => write.kind === 'field' || write.kind === 'status';

/** A document's (ADF) text: its text nodes in order, nothing between them (what `finds` looks in). */
export function plainTextOf(body: unknown): string {
  if (!body || typeof body !== 'object') return '';
  const node = body as { text?: unknown; content?: unknown };
  const own = typeof node.text === 'string' ? node.text : '';
  return own + (Array.isArray(node.content) ? node.content.map(plainTextOf).join('') : '');
}

/** What finds a comment again by its document (an issue link's comment): the start of its text. */
export const findText = (body: unknown) => plainTextOf(body).slice(0, FIND_MAX);

/** Whether a comment's or worklog's body is the one a record finds. */
export const finds = (find: string, body: unknown) => find !== '' && plainTextOf(body).includes(find);

/** A field's value before, kept in the record or (undefined) too large for it: then a run artifact holds it. */
export function inlineBefore(value: FieldValue | undefined): FieldValue | undefined {
  const json = JSON.stringify(value ?? null);
  return new TextEncoder().encode(json).length <= BEFORE_INLINE_MAX ? (value ?? null) : undefined;
}

/**
 * The value to send back to Jira for a field as Jira answered it (`before`): an edit takes the identity of an
 * object (a person by accountId, an issue by key, a priority, option, component or version by id), not the whole
 * answer. A document (ADF), text, numbers and labels go back as they are.
 */
export function editValueOf(field: string, before: unknown): unknown {
  if (before === undefined || before === null) return null;
  if (Array.isArray(before)) return before.map((v) => editValueOf(field, v));
  if (typeof before !== 'object') return before;
  const o = before as Record<string, unknown>;
  if (o.type === 'doc') return o;
  if (field === 'timetracking') {
    const { originalEstimate, remainingEstimate } = o;
    return {
      ...(typeof originalEstimate === 'string' ? { originalEstimate } : {}),
      ...(typeof remainingEstimate === 'string' ? { remainingEstimate } : {}),
    };
  }
  if (typeof o.accountId === 'string') return { accountId: o.accountId };
  if (typeof o.key === 'string') return { key: o.key };
  if (o.id !== undefined) return { id: String(o.id) };
  if (typeof o.value === 'string') return { value: o.value };
  if (typeof o.name === 'string') return { name: o.name };
  return o;
}

export type UndoAction =
  | 'remove'
  | 'restore'
  | 'keep-edited'
  | 'keep-later-run'
  | 'keep-refused'
  | 'not-undone'
  | 'gone';

/** What a rollback does with one journalled write: the list's line under its item. */
export interface UndoDecision {
  kind: JournalKind;
  /** The record it undoes (journalRef): the rollback finds its record again by it. */
  ref: string;
  /** The list's name for it: `MIG-5 comment 10023`, `MIG-5 field description`. */
  label: string;
  /** Jira's id of what is removed (a comment, worklog, file or issue link; a remote link's globalId). */
  id?: string;
  action: UndoAction;
  /** Why it stays, for the list. */
  reason?: string;
}

/**
 * What Jira holds now of a journalled write: the thing's id, and when it (or the field) last changed; for a status
 * move, the issue's status now.
 */
export interface WriteNow {
  id?: string;
  changed?: string;
  /** Changed after the run, where the add-on tells no time (a test step whose texts differ from the run's). */
  edited?: boolean;
  status?: string;
}

export interface UndoRules {
  /** When the run ended: a change after it is somebody else's. */
  endedAt: string;
  /** Take back what somebody changed after the run too. */
  includeEdited?: boolean;
  /** The project's later runs that wrote to Jira (later-runs.ts): a change made while one was at work is its. */
  laterRuns?: readonly LaterRun[];
}

/** The list's name of a journalled write on its issue; `id` Jira's, when known. */
export function undoLabel(record: Pick<JournalRecord, 'key' | 'write'>, id?: string): string {
  const { key, write } = record;
  switch (write.kind) {
    case 'comment':
    case 'worklog': {
      const known = id ?? write.id;
      return `${key} ${write.kind} ${known ?? `"${write.find.slice(0, 60)}"`}`;
    }
    case 'testStep':
      return `${key} test step ${id ?? write.id ?? `#${write.index}`}`;
    case 'attachment':
      return [`${key} attachment`, id ?? write.id, `"${write.name}"`].filter(Boolean).join(' ');
    case 'issueLink':
      // On the link's object (its subject one the run created): named from its subject.
      return key === write.objectKey && key !== write.subjectKey
        ? `${key} link from ${write.subjectKey} ${write.type}`
        : `${key} link ${write.type} ${write.objectKey}`;
    case 'remoteLink':
      return `${key} remote link ${write.globalId}`;
    case 'field':
      return `${key} field ${write.field}`;
    case 'status':
      return `${key} status "${write.from}" -> "${write.to}"`;
  }
}

const REASONS: Record<
  Exclude<UndoAction, 'remove' | 'restore' | 'keep-refused' | 'keep-later-run'>,
  string
> = {
  'keep-edited': 'changed in Jira after the run: kept (take it back with includeEdited)',
  'not-undone': "a status move is not moved back: Jira's workflow decides the way, and its history stays",
  gone: 'no longer in Jira',
};

/**
 * The names Jira's change history gives a field besides its id: a parent change reads `IssueParentAssociation` (or
 * the older `Parent Link` and `Epic Link`), a component change `Component`.
 */
const HISTORY_NAMES: Record<string, readonly string[]> = {
  parent: ['IssueParentAssociation', 'Parent', 'Parent Link', 'Epic Link'],
  components: ['Component'],
  timetracking: ['timeoriginalestimate', 'timeestimate'],
};

/** When the field last changed, by Jira's change history (`histories`, any order); undefined: never there. */
export function fieldChangedAt(
  field: string,
  histories: Iterable<{ created?: string; items?: { field?: string; fieldId?: string }[] }>,
): string | undefined {
  const names = [field, ...(HISTORY_NAMES[field] ?? [])].map((n) => n.toLowerCase());
  let last: string | undefined;
  for (const h of histories) {
    const touched = (h.items ?? []).some(
      (i) =>
        (i.fieldId !== undefined && i.fieldId === field) || names.includes(String(i.field).toLowerCase()),
    );
    if (touched && h.created && (last === undefined || Date.parse(h.created) > Date.parse(last)))
      last = h.created;
  }
  return last;
}

const EDITED_IN_ADDON =
  'changed in the test-management add-on after the run: kept (take it back with includeEdited)';

const after = (changed: string | undefined, endedAt: string) =>
  changed !== undefined && Date.parse(changed) > Date.parse(endedAt);

/**
 * What the rollback does with one journalled write, given what Jira holds of it now (`now` undefined: not there;
 * for a field, always given). A field goes back to its value before, a thing the run added is removed, unless it
 * (or the field) changed after the run and edited ones are not included; a status move stays, listed, while the
 * issue is not in its status before the run.
 */
export function decideUndo(record: JournalRecord, now: WriteNow | undefined, rules: UndoRules): UndoDecision {
  const { write } = record;
  const ref = journalRef(write);
  const id = now?.id ?? (write.kind === 'remoteLink' ? write.globalId : undefined);
  const out = (action: UndoAction, reason?: string): UndoDecision => ({
    kind: write.kind,
    ref,
    label: undoLabel(record, now?.id),
    ...(id !== undefined ? { id } : {}),
    action,
    ...(action === 'remove' || action === 'restore'
      ? {}
      : { reason: reason ?? REASONS[action as keyof typeof REASONS] }),
  });
  // A status move listed while the issue is not in its status before the run (a move that never happened, or one
  // somebody made back since, leaves nothing to tell).
  if (write.kind === 'status')
    return now?.status !== undefined && now.status.toLowerCase() === write.from.toLowerCase()
      ? out('gone')
      : out('not-undone');
  if (write.kind !== 'field' && !now) return out('gone');
  if (now?.edited && !rules.includeEdited) return out('keep-edited', EDITED_IN_ADDON);
  if (now?.changed !== undefined && after(now.changed, rules.endedAt) && !rules.includeEdited) {
    const later = laterRunAt(now.changed, rules.laterRuns);
    return later ? out('keep-later-run', laterRunReason(later, 'take it back')) : out('keep-edited');
  }
  return out(write.kind === 'field' ? 'restore' : 'remove');
}

/** A write on an issue no longer in Jira: gone with it. */
export function goneWithIssue(record: JournalRecord): UndoDecision {
  const write = record.write;
  return {
    kind: write.kind,
    ref: journalRef(write),
    label: undoLabel(record),
    action: 'gone',
    reason: 'its issue is no longer in Jira',
  };
}

/** An issue link whose other end (`key`) this rollback deletes: it goes with that issue, nothing to take back. */
export function goesWithIssue(d: UndoDecision, key: string): UndoDecision {
  return { ...d, action: 'gone', reason: `goes with ${key}, which this rollback deletes` };
}

/** A write the rollback asked Jira to undo and Jira refused (no permission, a field off the edit screen): kept. */
export function refusedUndo(d: UndoDecision, words: string): UndoDecision {
  return { ...d, action: 'keep-refused', reason: `Jira refused to take it back (${words}): kept` };
}

/** A write in a plugin's add-on the rollback cannot reach (`why`: the plugin disabled, its configuration unusable): kept. */
export function unreachableUndo(record: JournalRecord, why: string): UndoDecision {
  const write = record.write;
  return {
    kind: write.kind,
    ref: journalRef(write),
    label: undoLabel(record),
    action: 'keep-refused',
    reason: `${why}: kept`,
  };
}

/** A write the rollback found undone already (its record forgotten before a crash): gone. */
export function undoneBefore(d: UndoDecision): UndoDecision {
  return { ...d, action: 'gone', reason: 'taken back before an interruption' };
}

/** Whether a decision leaves nothing to keep a record for: carried out, or gone. */
export const settled = (d: UndoDecision) =>
  d.action === 'remove' || d.action === 'restore' || d.action === 'gone';

/** A pass's counts of what the run wrote to issues it did not create. */
export interface JournalSummary {
  removedComments: number;
  removedIssueLinks: number;
  removedRemoteLinks: number;
  removedAttachments: number;
  removedWorklogs: number;
  /** Test steps the test-case-steps plugin added in the test-management add-on. */
  removedTestSteps: number;
  restoredFields: number;
  /**
   * Changed in Jira after the run (by a person, or while a later run was at work), or Jira refused to take it back:
   * kept, listed.
   */
  keptChanges: number;
  changesGone: number;
  /** Status moves the run made: never moved back, listed. */
  statusesNotUndone: number;
}

export const emptyJournalSummary = (): JournalSummary => ({
  removedComments: 0,
  removedIssueLinks: 0,
  removedRemoteLinks: 0,
  removedAttachments: 0,
  removedWorklogs: 0,
  removedTestSteps: 0,
  restoredFields: 0,
  keptChanges: 0,
  changesGone: 0,
  statusesNotUndone: 0,
});

const REMOVED: Record<Exclude<JournalKind, 'field' | 'status'>, keyof JournalSummary> = {
  comment: 'removedComments',
  worklog: 'removedWorklogs',
  testStep: 'removedTestSteps',
  attachment: 'removedAttachments',
  issueLink: 'removedIssueLinks',
  remoteLink: 'removedRemoteLinks',
};

export function tallyUndo(summary: JournalSummary, d: UndoDecision): void {
  if (d.action === 'remove' && d.kind !== 'field' && d.kind !== 'status') summary[REMOVED[d.kind]]++;
  else if (d.action === 'restore') summary.restoredFields++;
  else if (d.action === 'keep-edited' || d.action === 'keep-later-run' || d.action === 'keep-refused')
    summary.keptChanges++;
  else if (d.action === 'gone') summary.changesGone++;
  else if (d.action === 'not-undone') summary.statusesNotUndone++;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a pass does on the issues the run did not create (`where`: an item's line says "on it"), after its
 * issues' counts; '' when the run wrote to none.
 */
export function journalCountsText(
  s: JournalSummary,
  preview: boolean,
  where = 'on issues it did not create',
): string {
  const removed = [
    plural(s.removedComments, 'comment'),
    plural(s.removedIssueLinks, 'issue link'),
    plural(s.removedRemoteLinks, 'remote link'),
    plural(s.removedAttachments, 'file'),
    plural(s.removedWorklogs, 'worklog'),
    ...(s.removedTestSteps ? [plural(s.removedTestSteps, 'test step')] : []),
  ];
  const any =
    s.removedComments +
    s.removedIssueLinks +
    s.removedRemoteLinks +
    s.removedAttachments +
    s.removedWorklogs +
    s.removedTestSteps +
    s.restoredFields +
    s.keptChanges +
    s.statusesNotUndone;
  if (any === 0) return '';
  const would = preview ? 'would be ' : '';
  return (
    `; ${where}, ${removed.join(', ')} ${would}removed and ${plural(s.restoredFields, 'field')} ` +
    `${would}restored, ${s.keptChanges} kept, ${plural(s.statusesNotUndone, 'status move')} not undone`
  );
}
