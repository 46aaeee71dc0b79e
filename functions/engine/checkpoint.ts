/**
 * The checkpoint of a phase's work, moved over what was worked: the units' events (one log line per unit, then
 * progress) and the items they failed on are written in the checkpoint's own transaction (the failure records
 * just before): a unit worked again cannot log twice, a crash cannot lose them. The units' done marks (id map
 * entries) are written beside it.
 */
import { chunkEventId, type RunEvent } from '#domain/run-events.ts';
import type { CheckpointMoved } from '#domain/run-journal.ts';
import { coveredUnits, PHASES, progressPercent, type Run, type RunCursor } from '#domain/runs.ts';
import type { EngineDeps, UnitOutcome } from '#phase-kit/context.ts';
import { nowIso } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import { countItems } from '#platform/metrics.ts';
import { MAX_LOG_EVENTS } from './control.ts';

/** The chunk's events: one log line per unit (any overflow folded into the last), then progress. */
function chunkEvents(
  phase: number,
  index: number,
  lines: string[],
  progress: RunEvent,
  maxLines = MAX_LOG_EVENTS,
): { id: string; event: RunEvent }[] {
  const kept =
    lines.length > maxLines ? [...lines.slice(0, maxLines - 1), lines.slice(maxLines - 1).join('\n')] : lines;
  const events: { id: string; event: RunEvent }[] = kept.map((message, n) => ({
    id: chunkEventId(phase, index, n),
    event: { type: 'log', message },
  }));
  events.push({ id: chunkEventId(phase, index, kept.length), event: progress });
  return events;
}

/**
 * The checkpoint's moves within one phase: each records the failures the units carried, counts each item once,
 * and writes the new cursor, the counters and the units' events in one transaction.
 */
export class CheckpointMoves {
  private cursor: RunCursor;
  private percent: number;
  /** Units moved over so far. */
  worked = 0;

  constructor(
    private readonly deps: EngineDeps,
    private readonly run: Run,
    private readonly total: number,
    private readonly lastPhase: number,
    private readonly speed: () => number,
  ) {
    this.cursor = run.cursor;
    this.percent = run.progressPercent;
  }

  /**
   * Moves the checkpoint over `count` units and their outcome, to `to` (a chunk: the next `count` units, by
   * default; a pool: its first unworked unit and those worked past it); false: the run moved elsewhere; else
   * whether the run works on (true) or was asked to stop ('stop'), as the move's condition told (CheckpointMoved).
   */
  async move(
    count: number,
    outcome: UnitOutcome & { success: number; skipped: number },
    to: { index: number; done?: number[] } = { index: this.cursor.index + count },
  ): Promise<CheckpointMoved> {
    const { deps, run, total } = this;
    const { phase } = this.cursor;
    // The move's events sit at the units it covered before: in order, and never two moves at one place.
    const index = coveredUnits(this.cursor);
    deps.crash?.('before-checkpoint');
    for (const f of outcome.failures)
      await deps.store.runFailures.record(run.tenantId, run.projectId, run.id, {
        sourceId: f.sourceId,
        phase,
        reason: f.reason,
        at: nowIso(),
      });
    const failedItems = [...new Set(outcome.failures.map((f) => f.sourceId))];
    // The run counts items: one whose work failed in any phase counts once, whatever else of it failed.
    const counted = failedItems.length
      ? await deps.store.runFailures.counted(run.tenantId, run.projectId, run.id, failedItems)
      : new Set<number>();
    const newlyFailed = failedItems.filter((id) => !counted.has(id)).sort((a, b) => a - b);
    if (newlyFailed.length > MAX_LOG_EVENTS - 1)
      throw new Error(`phase ${phase} failed ${newlyFailed.length} items in one move`);
    const next: RunCursor = { phase, index: to.index, ...(to.done?.length ? { done: to.done } : {}) };
    this.worked += count;
    const current = coveredUnits(next);
    const percent = progressPercent(this.percent, phase, current, total, this.lastPhase);
    const progress: RunEvent = { type: 'progress', current, total, percent, speed: this.speed() };
    // The units' done marks go beside the move (their items are done whether or not the move lands).
    const marking = outcome.marks?.length
      ? deps.store.idMap.putMany(run.tenantId, run.projectId, outcome.marks)
      : undefined;
    marking?.catch(() => undefined);
    const moved = await deps.journal.checkpoint(run, {
      from: this.cursor,
      to: next,
      // The run's counters count items: created or skipped once, in the create phase; any later phase adds
      // only failures (an item whose attachment failed makes the run PARTIAL).
      success: phase === PHASES.create ? outcome.success : 0,
      skipped: phase === PHASES.create ? outcome.skipped : 0,
      failure: newlyFailed.length,
      newlyFailedItems: newlyFailed,
      progressPercent: percent,
      // A transaction holds 100 writes: the run, the newly failed items, the warnings' item and the events.
      events: chunkEvents(
        phase,
        index,
        outcome.log,
        progress,
        MAX_LOG_EVENTS - newlyFailed.length - (outcome.warnings.length ? 1 : 0),
      ),
      warnings: { id: chunkEventId(phase, index, 0), messages: outcome.warnings },
    });
    await marking;
    logger.debug('checkpoint', { tenantId: run.tenantId, runId: run.id, phase, index, processed: count });
    if (!moved) return false;
    this.cursor = next;
    this.percent = percent;
    countItems({
      created: phase === PHASES.create ? outcome.success : 0,
      skipped: phase === PHASES.create ? outcome.skipped : 0,
      failed: newlyFailed.length,
    });
    return moved;
  }
}
