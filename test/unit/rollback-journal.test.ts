/** The write journal: what a run wrote to issues it did not create, and what a rollback does with each write. */
import { describe, expect, it } from 'vitest';
import {
  BEFORE_INLINE_MAX,
  decideUndo,
  editValueOf,
  emptyJournalSummary,
  FIND_MAX,
  fieldChangedAt,
  finds,
  findText,
  firstRecordWins,
  goneWithIssue,
  inlineBefore,
  type JournalledWrite,
  type JournalRecord,
  JournalRecordSchema,
  journalCountsText,
  journalRef,
  refusedUndo,
  settled,
  tallyUndo,
  undoneBefore,
  unreachableUndo,
} from '../../functions/domain/rollback/journal.ts';
import {
  emptyRollbackSummary,
  type RollbackDecision,
  rollbackCsv,
  tallyRollback,
} from '../../functions/domain/rollback/plan.ts';

const record = (write: JournalledWrite): JournalRecord => ({
  sourceId: 25,
  key: 'MIG-7',
  phase: 4,
  at: '2026-12-07T09:00:00.000Z',
  write,
});
const rules = { endedAt: '2026-12-07T10:00:00.000Z' };
const before = '2026-12-07T09:30:00.000Z';
const later = '2026-12-07T10:00:01.000Z';
const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

const collect = async (lines: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const l of lines) out.push(l.trimEnd());
  return out;
};

describe('the write journal records', () => {
  it('tells an item’s writes apart, and keeps the first record of a field and of a status', () => {
    // Prepare
    const writes: JournalledWrite[] = [
      { kind: 'comment', find: '(Azure DevOps comment 7)', id: null },
      { kind: 'comment', find: '(Azure DevOps comment 8)', id: null },
      { kind: 'worklog', find: '(7pace work log a, work item 25)', id: null },
      { kind: 'attachment', name: 'spec.pdf', id: null, had: [] },
      { kind: 'issueLink', type: 'Relates', subjectKey: 'MIG-7', objectKey: 'MIG-8' },
      { kind: 'remoteLink', globalId: 'ado:org:25' },
      { kind: 'field', field: 'description', before: null },
      { kind: 'field', field: 'parent', before: null },
      { kind: 'status', from: 'To Do', to: 'Done' },
    ];

    // Act + Assess: one ref each; an intent settled later (its id) is the same write
    expect(new Set(writes.map(journalRef)).size).toBe(writes.length);
    expect(journalRef({ kind: 'comment', find: '(Azure DevOps comment 7)', id: '10001' })).toBe(
      journalRef(writes[0] as JournalledWrite),
    );
    expect(writes.filter(firstRecordWins).map((w) => w.kind)).toEqual(['field', 'field', 'status']);
  });

  it('reads back each kind as stored, and refuses one of no known kind', () => {
    for (const write of [
      { kind: 'comment', find: 'x', id: '1' },
      { kind: 'attachment', name: 'a.png', id: null, had: ['10'] },
      { kind: 'testStep', index: 2, digest: 'Xy-_0', id: null },
      { kind: 'field', field: 'description', before: doc('was') },
      {
        kind: 'field',
        field: 'summary',
        before: null,
        beforeFile: 'tenants/t/runs/r/journal/25-summary-1.json',
      },
      { kind: 'status', from: 'To Do', to: 'Done' },
    ] as JournalledWrite[])
      expect(JournalRecordSchema.parse(record(write))).toEqual(record(write));
    expect(JournalRecordSchema.safeParse(record({ kind: 'sprint' } as never)).success).toBe(false);
  });

  it('stays small whatever the issue holds: a large value before goes to a file, a comment is found by its start', () => {
    // Prepare: a description near Jira's 32,767-character limit, as ADF
    const long = doc('x'.repeat(32_767));
    const small = doc('was');

    // Act + Assess
    expect(inlineBefore(small)).toEqual(small);
    expect(inlineBefore(long)).toBeUndefined();
    expect(inlineBefore(undefined)).toBeNull();
    expect(findText(doc('y'.repeat(5_000)))).toHaveLength(FIND_MAX);
    // The largest record the journal writes: a field with its value before kept inline, a 255-character key
    const largest = record({
      kind: 'field',
      field: 'customfield_10099',
      before: 'z'.repeat(BEFORE_INLINE_MAX - 2),
    });
    expect(JSON.stringify({ pk: 'p'.repeat(120), sk: 's'.repeat(120), ...largest }).length).toBeLessThan(
      20_000,
    );
  });

  it('finds a comment again by the text its document holds', () => {
    const body = {
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'Originally posted by Ava (Azure DevOps comment 7)' }],
        },
        { type: 'paragraph', content: [{ type: 'text', text: 'Hello' }] },
      ],
    };
    expect(finds('(Azure DevOps comment 7)', body)).toBe(true);
    expect(finds('(Azure DevOps comment 70)', body)).toBe(false);
    expect(finds(findText(doc('same root cause')), doc('same root cause'))).toBe(true);
    expect(finds('', body)).toBe(false);
  });
});

describe('a field goes back as an edit takes it', () => {
  it('sends the identity of what Jira answered, and a document, text or labels as they are', () => {
    expect(editValueOf('assignee', { accountId: 'a-1', displayName: 'Ava' })).toEqual({ accountId: 'a-1' });
    expect(editValueOf('parent', { id: '10001', key: 'MIG-1', fields: {} })).toEqual({ key: 'MIG-1' });
    expect(editValueOf('priority', { id: '3', name: 'Medium', iconUrl: 'x' })).toEqual({ id: '3' });
    expect(editValueOf('components', [{ id: '10', name: 'Web' }])).toEqual([{ id: '10' }]);
    expect(editValueOf('description', doc('was'))).toEqual(doc('was'));
    expect(editValueOf('labels', ['a', 'src-id-25'])).toEqual(['a', 'src-id-25']);
    expect(editValueOf('customfield_10016', 5)).toBe(5);
    expect(editValueOf('timetracking', { originalEstimate: '1d', originalEstimateSeconds: 28800 })).toEqual({
      originalEstimate: '1d',
    });
    expect(editValueOf('assignee', null)).toBeNull();
  });

  it('knows when the field last changed from Jira’s history, by its id or its history name', () => {
    const histories = [
      { created: '2026-12-07T09:10:00.000Z', items: [{ field: 'description', fieldId: 'description' }] },
      { created: '2026-12-07T11:00:00.000Z', items: [{ field: 'IssueParentAssociation' }] },
      { created: '2026-12-07T12:00:00.000Z', items: [{ field: 'status', fieldId: 'status' }] },
    ];
    expect(fieldChangedAt('description', histories)).toBe('2026-12-07T09:10:00.000Z');
    expect(fieldChangedAt('parent', histories)).toBe('2026-12-07T11:00:00.000Z');
    expect(fieldChangedAt('summary', histories)).toBeUndefined();
  });
});

describe('a rollback decides per journalled write', () => {
  it('removes what the run added and restores the fields it changed', () => {
    const comment = record({ kind: 'comment', find: '(Azure DevOps comment 7)', id: null });
    expect(decideUndo(comment, { id: '10001', changed: before }, rules)).toEqual({
      kind: 'comment',
      ref: 'comment (Azure DevOps comment 7)',
      label: 'MIG-7 comment 10001',
      id: '10001',
      action: 'remove',
    });
    const field = record({ kind: 'field', field: 'description', before: doc('was') });
    expect(decideUndo(field, { changed: before }, rules)).toMatchObject({
      label: 'MIG-7 field description',
      action: 'restore',
    });
    const remote = record({ kind: 'remoteLink', globalId: 'ado:org:25' });
    expect(decideUndo(remote, { id: 'ado:org:25' }, rules)).toMatchObject({
      id: 'ado:org:25',
      action: 'remove',
    });
  });

  it('keeps what somebody changed after the run, unless the admin includes edited ones', () => {
    const field = record({ kind: 'field', field: 'description', before: null });
    expect(decideUndo(field, { changed: later }, rules)).toMatchObject({
      action: 'keep-edited',
      reason: expect.stringContaining('changed in Jira after the run'),
    });
    expect(decideUndo(field, { changed: later }, { ...rules, includeEdited: true }).action).toBe('restore');
    const worklog = record({ kind: 'worklog', find: 'm', id: '5' });
    expect(decideUndo(worklog, { id: '5', changed: later }, rules).action).toBe('keep-edited');
  });

  it('counts what is no longer there as gone, and never moves a status back', () => {
    const file = record({ kind: 'attachment', name: 'a.png', id: '10', had: [] });
    expect(decideUndo(file, undefined, rules)).toMatchObject({ action: 'gone', reason: 'no longer in Jira' });
    expect(decideUndo(record({ kind: 'status', from: 'To Do', to: 'Done' }), {}, rules)).toMatchObject({
      label: 'MIG-7 status "To Do" -> "Done"',
      action: 'not-undone',
    });
    expect(goneWithIssue(file)).toMatchObject({ action: 'gone', reason: 'its issue is no longer in Jira' });
    // A move that never happened (the way unreachable), or one made back since: nothing to tell
    const move = record({ kind: 'status', from: 'To Do', to: 'Done' });
    expect(decideUndo(move, { status: 'Done' }, rules).action).toBe('not-undone');
    expect(decideUndo(move, { status: 'to do' }, rules).action).toBe('gone');
  });

  it('removes a test step the run added in the add-on, but one whose texts changed since, unless edited ones are included', () => {
    // Prepare: the add-on tells no time of an edit: its texts no longer the run's are what tells
    const step = record({ kind: 'testStep', index: 2, digest: 'd', id: '41' });

    // Act / Assess
    expect(decideUndo(step, { id: '41' }, rules)).toEqual({
      kind: 'testStep',
      ref: 'testStep 2',
      label: 'MIG-7 test step 41',
      id: '41',
      action: 'remove',
    });
    expect(decideUndo(step, { id: '41', edited: true }, rules)).toMatchObject({
      action: 'keep-edited',
      reason: 'changed in the test-management add-on after the run: kept (take it back with includeEdited)',
    });
    expect(decideUndo(step, { id: '41', edited: true }, { ...rules, includeEdited: true }).action).toBe(
      'remove',
    );
    expect(decideUndo(step, undefined, rules).action).toBe('gone');
    // An intent whose id never came is named by its place; the plugin disabled keeps it, with why
    const intent = record({ kind: 'testStep', index: 3, digest: 'e', id: null });
    expect(unreachableUndo(intent, 'plugin test-case-steps is not enabled')).toMatchObject({
      label: 'MIG-7 test step #3',
      action: 'keep-refused',
      reason: 'plugin test-case-steps is not enabled: kept',
    });
    const summary = emptyJournalSummary();
    tallyUndo(summary, decideUndo(step, { id: '41' }, rules));
    expect(summary.removedTestSteps).toBe(1);
    expect(journalCountsText(summary, false)).toBe(
      '; on issues it did not create, 0 comments, 0 issue links, 0 remote links, 0 files, 0 worklogs, 1 test step removed and 0 fields restored, 0 kept, 0 status moves not undone',
    );
  });

  it('keeps a write Jira refuses to take back, and one taken back before a crash is gone', () => {
    const d = decideUndo(record({ kind: 'remoteLink', globalId: 'g' }), { id: 'g' }, rules);
    expect(refusedUndo(d, '403 no permission')).toMatchObject({
      action: 'keep-refused',
      reason: 'Jira refused to take it back (403 no permission): kept',
    });
    expect(undoneBefore(d)).toMatchObject({ action: 'gone', reason: 'taken back before an interruption' });
    expect([d, undoneBefore(d), refusedUndo(d, 'x')].map(settled)).toEqual([true, true, false]);
  });
});

describe('a rollback tells what it does on issues the run did not create', () => {
  const changes = [
    decideUndo(record({ kind: 'comment', find: 'c', id: '1' }), { id: '1' }, rules),
    decideUndo(
      record({ kind: 'issueLink', type: 'Relates', subjectKey: 'MIG-7', objectKey: 'MIG-8' }),
      { id: '9' },
      rules,
    ),
    decideUndo(record({ kind: 'field', field: 'parent', before: null }), {}, rules),
    decideUndo(record({ kind: 'status', from: 'To Do', to: 'Done' }), {}, rules),
  ];
  const found: RollbackDecision = {
    sourceId: 25,
    key: 'MIG-7',
    action: 'keep-found',
    reason: 'found by the run, not created: kept, and what the run wrote to it taken back',
    changes,
  };

  it('counts each write by kind, with the items', () => {
    const summary = emptyRollbackSummary();
    tallyRollback(summary, found);
    expect(summary).toMatchObject({
      items: 1,
      keptFound: 1,
      removedComments: 1,
      removedIssueLinks: 1,
      restoredFields: 1,
      statusesNotUndone: 1,
      keptChanges: 0,
      changesGone: 0,
    });
    const none = emptyJournalSummary();
    expect(journalCountsText(none, true)).toBe('');
    for (const c of changes) tallyUndo(none, c);
    expect(journalCountsText(none, true)).toBe(
      '; on issues it did not create, 1 comment, 1 issue link, 0 remote links, 0 files, 0 worklogs would be removed and 1 field would be restored, 0 kept, 1 status move not undone',
    );
  });

  it('lists each write under its item', async () => {
    async function* decisions() {
      yield found;
    }
    expect(await collect(rollbackCsv(decisions(), true))).toEqual([
      'source_id,jira_key,would,reason',
      '25,MIG-7,keep-found,"found by the run, not created: kept, and what the run wrote to it taken back"',
      '25,MIG-7 comment 1,remove,',
      '25,MIG-7 link Relates MIG-8,remove,',
      '25,MIG-7 field parent,restore,',
      `25,"MIG-7 status ""To Do"" -> ""Done""",not-undone,"a status move is not moved back: Jira's workflow decides the way, and its history stays"`,
    ]);
  });
});
