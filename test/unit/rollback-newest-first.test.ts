/**
 * Newest first, with the id map as a project's runs leave it: an older run A, then a newer run B of the same
 * project, each rolled back in turn. The entries are written as the engine writes them: a later run never takes
 * over an entry an earlier run wrote (phases/create.ts skips an item the id map knows; an INCREMENTAL run's update
 * sets only `updatedByRun`; every phase's done marks keep the entry's `runId`); it writes an entry of its own only
 * for an item the id map does not know, `found` when its issue is in Jira already by its `src-id-{N}` label.
 */
import { describe, expect, it } from 'vitest';
import { decideUndo } from '../../functions/domain/rollback/journal.ts';
import { decide, type RollbackRules, type RolledItem } from '../../functions/domain/rollback/plan.ts';
import { type RollbackRequest, rollbackRefusal } from '../../functions/domain/rollback/request.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { newRun } from '../../functions/services/runs.ts';

/** A FULL run of the project that ended COMPLETED past its last phase (it wrote to Jira). */
const finished = (createdAt: string, finishedAt: string): Run => ({
  ...newRun('tenant-1', 'project-1', 'FULL'),
  status: 'COMPLETED',
  cursor: { phase: 9, index: 0 },
  currentPhase: 9,
  createdAt,
  startedAt: createdAt,
  finishedAt,
});

const a = finished('2026-12-01T09:00:00.000Z', '2026-12-01T10:00:00.000Z');
const b = finished('2026-12-02T09:00:00.000Z', '2026-12-02T10:00:00.000Z');
const rulesOf = (run: Run): RollbackRules => ({ runId: run.id, endedAt: run.finishedAt as string });
/** Jira's `updated` of an issue nobody touched after A made it. */
const untouched = { updated: '2026-12-01T09:30:00.000Z' };
const preview: RollbackRequest = { preview: true };
const entry = (sourceId: number, runId: string, origin: RolledItem['origin']): RolledItem => ({
  sourceId,
  targetKey: `MIG-${sourceId}`,
  origin,
  runId,
});

describe('newest first, with the id map as the runs leave it', () => {
  it("the newer run keeps the older run's issue, and the older run's rollback then deletes it", () => {
    // Prepare: A created #1; B skipped #1 (its entry stays A's) and created #2
    const one = entry(1, a.id, 'created');
    const two = entry(2, b.id, 'created');

    // Act + Assess: A waits for B
    expect(rollbackRefusal(a, [b], preview)).toEqual({ kind: 'newer-run', runId: b.id });

    // Act + Assess: B's rollback deletes its own issue and keeps A's
    expect(decide(two, { updated: '2026-12-02T09:30:00.000Z' }, rulesOf(b)).action).toBe('delete');
    expect(decide(one, untouched, rulesOf(b))).toEqual({
      sourceId: 1,
      key: 'MIG-1',
      action: 'keep-other-run',
      reason: 'created or found by another run: roll that run back',
    });

    // Act + Assess: B rolled back, A's rollback starts and deletes #1 (its entry is still A's)
    const rolledBack: Run = { ...b, status: 'ROLLED_BACK' };
    expect(rollbackRefusal(a, [rolledBack], preview)).toBeUndefined();
    expect(decide(one, untouched, rulesOf(a))).toEqual({ sourceId: 1, key: 'MIG-1', action: 'delete' });
  });

  it("an issue the newer run found by its label is not the newer run's to delete, nor, once it is the newer run's entry, the older run's", () => {
    // Prepare: A created MIG-1 in Jira but its id map entry was never written (the execution failed between
    // Jira's create and the id map's write, and the run was never resumed); B found MIG-1 by its label.
    const taken = entry(1, b.id, 'found');

    // Act + Assess: B's rollback keeps what it found
    expect(decide(taken, untouched, rulesOf(b)).action).toBe('keep-found');

    // Act + Assess: B rolled back, A's rollback reads the entry as B's: kept, not deleted. The issue A created
    // stays in Jira: the id map no longer says A made it (docs/architecture.md, what a rollback does not know).
    const rolledBack: Run = { ...b, status: 'ROLLED_BACK' };
    expect(rollbackRefusal(a, [rolledBack], preview)).toBeUndefined();
    expect(decide(taken, untouched, rulesOf(a)).action).toBe('keep-other-run');
  });

  it('a preview the older run finished before the newer run wrote to Jira is not carried out: it is previewed again', () => {
    // Prepare: A previewed before B started; B then wrote to Jira and was rolled back
    const previewed: Run = {
      ...a,
      rollback: {
        preview: true,
        includeEdited: false,
        endedAs: 'COMPLETED',
        previewed: { includeEdited: false, at: '2026-12-01T12:00:00.000Z' },
      },
    };
    const rolledBack: Run = { ...b, status: 'ROLLED_BACK' };
    const confirmed: RollbackRequest = { preview: false, confirm: true };

    // Act + Assess: the confirmed rollback needs a preview from after B
    expect(rollbackRefusal(previewed, [rolledBack], confirmed)).toEqual({
      kind: 'preview-required',
      why: `run ${b.id}, a later run of the same project, wrote to Jira after its preview: preview it again first`,
    });
    // A later run that wrote nothing to Jira (a dry run) leaves the preview as good as it was
    const dry: Run = { ...b, options: { ...b.options, dryRun: true } };
    expect(rollbackRefusal(previewed, [dry], confirmed)).toBeUndefined();
    // A preview from after B is carried out
    const fresh: Run = {
      ...previewed,
      rollback: {
        ...(previewed.rollback as NonNullable<Run['rollback']>),
        previewed: { includeEdited: false, at: '2026-12-03T12:00:00.000Z' },
      },
    };
    expect(rollbackRefusal(fresh, [rolledBack], confirmed)).toBeUndefined();
  });

  it("what the newer run changed on the older run's issues is listed as that run's change, not as a person's edit", () => {
    // Prepare: A created #1 and #2 and found #3; B (INCREMENTAL) updated #1 and #3's description, then was rolled
    // back (its rollback, which put them back, ended at 11:00); somebody edited #2 the day after
    const rolledBack: Run = { ...b, status: 'ROLLED_BACK', updatedAt: '2026-12-02T11:00:00.000Z' };
    const laterRuns = [{ id: b.id, from: b.startedAt as string, to: rolledBack.updatedAt as string }];
    const rules: RollbackRules = { ...rulesOf(a), laterRuns };
    const byB = '2026-12-02T10:59:00.000Z';
    const byPerson = '2026-12-03T09:00:00.000Z';
    const description = {
      sourceId: 3,
      key: 'MIG-3',
      phase: 2,
      at: '2026-12-01T09:40:00.000Z',
      write: { kind: 'field' as const, field: 'description', before: null },
    };

    // Act + Assess: #1 and #3's description kept, naming B; #2 kept as edited
    expect(decide(entry(1, a.id, 'created'), { updated: byB }, rules)).toEqual({
      sourceId: 1,
      key: 'MIG-1',
      action: 'keep-later-run',
      reason: `changed after the run, last while run ${b.id} (a later run of this project) was at work or being rolled back, and not since: kept (delete it with includeEdited)`,
    });
    expect(decideUndo(description, { changed: byB }, rules)).toMatchObject({
      action: 'keep-later-run',
      reason: `changed after the run, last while run ${b.id} (a later run of this project) was at work or being rolled back, and not since: kept (take it back with includeEdited)`,
    });
    expect(decide(entry(2, a.id, 'created'), { updated: byPerson }, rules).action).toBe('keep-edited');
    expect(decideUndo(description, { changed: byPerson }, rules).action).toBe('keep-edited');
    // A change before B started is nobody's run's either
    expect(decide(entry(2, a.id, 'created'), { updated: '2026-12-01T12:00:00.000Z' }, rules).action).toBe(
      'keep-edited',
    );

    // Act + Assess: with edited ones included, both go as edited ones do
    const all = { ...rules, includeEdited: true };
    expect(decide(entry(1, a.id, 'created'), { updated: byB }, all).action).toBe('delete');
    expect(decideUndo(description, { changed: byB }, all).action).toBe('restore');
  });
});
