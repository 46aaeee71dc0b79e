/** What a rollback does with each item of the run it takes back, and its list and counts. */
import { describe, expect, it } from 'vitest';
import {
  decide,
  deletionOrder,
  emptyRollbackSummary,
  keptForSubtask,
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
    expect(summary).toEqual({ items: 3, deleted: 1, keptEdited: 1, keptFound: 1, keptOtherRun: 0, gone: 0 });
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
