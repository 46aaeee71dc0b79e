/** What a rollback does with each item of the run it takes back, and its list and counts. */
import { describe, expect, it } from 'vitest';
import { shapeOf } from '../../functions/domain/mapping/custom-fields.ts';
import {
  decideMade,
  emptyMadeSummary,
  MADE_KINDS,
  type MadeInJira,
  madeByRun,
  refusedMade,
  tallyMade,
  withIntents,
  withMade,
} from '../../functions/domain/rollback/made.ts';
import {
  decide,
  deletionOrder,
  emptyRollbackSummary,
  keptForSubtask,
  madeCountsText,
  RollbackReportSchema,
  type RolledItem,
  rollbackCsv,
  tallyRollback,
} from '../../functions/domain/rollback/plan.ts';

const rules = { runId: 'run-1', endedAt: '2026-12-07T10:00:00.000Z' };
const item = (over: Partial<RolledItem> = {}): RolledItem => ({
  sourceId: 12,
  targetKey: 'MIG-12',
  origin: 'created',
  runId: 'run-1',
  ...over,
});
const before = { updated: '2026-12-07T09:59:59.000Z' };
const after = { updated: '2026-12-07T10:00:01.000Z' };

describe('a rollback decides per item', () => {
  it('deletes an issue the run created that nobody changed since the run ended', () => {
    expect(decide(item(), before, rules)).toEqual({ sourceId: 12, key: 'MIG-12', action: 'delete' });
  });

  it('keeps an issue edited after the run, unless the admin includes those', () => {
    expect(decide(item(), after, rules)).toMatchObject({
      action: 'keep-edited',
      reason: expect.stringContaining('edited'),
    });
    expect(decide(item(), after, { ...rules, includeEdited: true }).action).toBe('delete');
  });

  it('keeps what the run found, and what another run made; an issue no longer there is gone', () => {
    expect(decide(item({ origin: 'found' }), before, rules).action).toBe('keep-found');
    expect(decide(item({ runId: 'run-2' }), before, rules).action).toBe('keep-other-run');
    expect(decide(item(), undefined, rules).action).toBe('gone');
    // Another run's issue stays even when it is gone from Jira: it is that run's to account for.
    expect(decide(item({ runId: 'run-2' }), undefined, rules).action).toBe('keep-other-run');
  });

  it('keeps a parent whose sub-task stays, naming the sub-task', () => {
    expect(keptForSubtask(decide(item(), before, rules), 'MIG-99')).toMatchObject({
      action: 'keep-edited',
      reason: 'has a sub-task that stays (MIG-99): kept',
    });
  });
});

describe('the order of deletes, the counts and the list', () => {
  it('deletes the lowest hierarchy level first, in the run order within a level', () => {
    const order = deletionOrder([
      { id: 1, level: 1 },
      { id: 2, level: 0 },
      { id: 3, level: -1 },
      { id: 4, level: 0 },
      { id: 5, level: -1 },
    ]);
    expect(order.map((o) => o.id)).toEqual([3, 5, 2, 4, 1]);
  });

  it('counts each action and writes one CSV line per item, reasons included, formulas guarded', async () => {
    const decisions = [
      decide(item(), before, rules),
      decide(item({ sourceId: 13, targetKey: 'MIG-13' }), after, rules),
      decide(item({ sourceId: 14, targetKey: '=HYPERLINK("x")', origin: 'found' }), before, rules),
    ];
    const summary = emptyRollbackSummary();
    for (const d of decisions) tallyRollback(summary, d);
    expect(summary).toEqual({
      items: 3,
      deleted: 1,
      keptEdited: 1,
      keptLaterRun: 0,
      keptFound: 1,
      keptOtherRun: 0,
      gone: 0,
      // The found issue's decision carries no changes here (the run wrote nothing to it)
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
      removedSprints: 0,
      removedComponents: 0,
      keptMade: 0,
    });
    async function* all() {
      yield* decisions;
    }
    let csv = '';
    for await (const line of rollbackCsv(all(), true)) csv += line;
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe('source_id,jira_key,would,reason');
    expect(lines[1]).toBe('12,MIG-12,delete,');
    expect(lines[2]).toContain('13,MIG-13,keep-edited,edited in Jira after the run');
    expect(lines[3]).not.toMatch(/^14,=/);
  });
});

describe('the sprints and components a run made', () => {
  it("an intent recorded before a create makes the thing found after a crash the run's own; another is found", () => {
    // Prepare: intents before the creates, then one create answered
    const intents = withIntents([], 'component', ['Backend', 'Web', 'Backend']);
    const record = withMade(intents, [{ kind: 'component', id: '10001', name: 'Backend' }]);

    // Assess: one line per name, the id in place of its intent; component names ignore case, sprints' do not
    expect(record).toEqual([
      { kind: 'component', id: '10001', name: 'Backend' },
      { kind: 'component', id: null, name: 'Web' },
    ]);
    expect(madeByRun(record, 'component', 'web')).toBe(true);
    expect(madeByRun(record, 'component', 'Docs')).toBe(false);
    expect(madeByRun(withIntents([], 'sprint', ['Sprint 1']), 'sprint', 'sprint 1')).toBe(false);
    expect(madeByRun(record, 'sprint', 'Web')).toBe(false);
    // Intents again (a preflight worked again) add nothing twice
    expect(withIntents(record, 'component', ['Web'])).toEqual(record);
  });

  it('removes what no issue is left in, keeps what holds one (saying how many) or Jira refuses, knows what is gone', () => {
    const sprint: MadeInJira & { id: string } = { kind: 'sprint', id: '12', name: 'Sprint 3' };
    const component: MadeInJira & { id: string } = { kind: 'component', id: '10001', name: 'Backend' };

    const decisions = [
      // A preview: 4 issues in it, all 4 deleted by the rollback
      decideMade(sprint, 4, 4),
      // 3 issues in it, 2 of them deleted: one stays
      decideMade(component, 3, 2),
      // The rollback after its deletes: empty
      decideMade({ ...component, id: '10002', name: 'Web' }, 0, 0),
      decideMade({ ...component, id: '10003', name: 'Docs' }, undefined, 0),
      refusedMade(decideMade({ ...sprint, id: '13', name: 'Sprint 4' }, 0, 0), 'no permission'),
    ];

    expect(decisions).toEqual([
      { kind: 'sprint', id: '12', name: 'Sprint 3', action: 'remove' },
      {
        kind: 'component',
        id: '10001',
        name: 'Backend',
        action: 'keep-not-empty',
        reason: 'holds 1 issue the rollback does not delete: kept',
      },
      { kind: 'component', id: '10002', name: 'Web', action: 'remove' },
      { kind: 'component', id: '10003', name: 'Docs', action: 'gone', reason: 'no longer in Jira' },
      {
        kind: 'sprint',
        id: '13',
        name: 'Sprint 4',
        action: 'keep-refused',
        reason: 'Jira refused to delete it (no permission): kept',
      },
    ]);
    const summary = emptyMadeSummary();
    for (const d of decisions) tallyMade(summary, d);
    expect(summary).toEqual({ removedSprints: 1, removedComponents: 1, keptMade: 2 });
  });

  it('knows sprints and components only: a run makes no version, no field it writes takes one', () => {
    expect(MADE_KINDS).toEqual(['sprint', 'component']);
    // Fix and affects versions, and a version picker custom field: not a shape a run writes
    expect(shapeOf({ schema: { type: 'array', items: 'version', system: 'fixVersions' } })).toBeUndefined();
    expect(shapeOf({ schema: { type: 'array', items: 'version', system: 'versions' } })).toBeUndefined();
    expect(
      shapeOf({
        schema: { type: 'version', custom: 'com.atlassian.jira.plugin.system.customfieldtypes:version' },
      }),
    ).toBeUndefined();
    // A pass told before, with the versions' count (always 0), reads without it
    const told = RollbackReportSchema.parse({ ...emptyRollbackSummary(), preview: true, removedVersions: 0 });
    expect(told).toEqual({ ...emptyRollbackSummary(), preview: true });
    expect(madeCountsText({ removedSprints: 1, removedComponents: 2, keptMade: 1 }, true)).toBe(
      '; 1 sprint and 2 components the run made would be removed, 1 kept',
    );
  });

  it('lists each after the items, its kind, id and name for its key', async () => {
    async function* none() {}
    let csv = '';
    for await (const line of rollbackCsv(none(), false, [
      { kind: 'sprint', id: '12', name: 'Sprint 3', action: 'remove' },
    ]))
      csv += line;
    expect(csv.trim().split('\r\n')).toEqual([
      'source_id,jira_key,did,reason',
      ',"sprint 12 ""Sprint 3""",remove,',
    ]);
  });
});
