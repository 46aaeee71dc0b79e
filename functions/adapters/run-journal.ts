/**
 * The run journal (port: domain/run-journal.ts) over the table and the tenant dashboard: the run item moves by
 * one conditional write (store `runs.transition`, `runs.checkpoint`), and only when it held are the run's stream
 * events written and its dashboard frame queued (adapters/run-events.ts: best effort, off the run's path).
 * One per invocation of the engine or request of the run API; the frames' queue may be shared (per process).
 */
import { isTerminalRun } from '#domain/migrations.ts';
import { chunkEventId, type RunEvent, type RunWait, statusEventId, waitLine } from '#domain/run-events.ts';
import type {
  CheckpointMoved,
  CheckpointUpdate,
  JournalRun,
  RunJournal,
  RunMoveTold,
} from '#domain/run-journal.ts';
import type { RunTransition } from '#domain/run-lifecycle.ts';
import { coveredUnits, type Run, type RunCursor } from '#domain/runs.ts';
import type { Store } from '#store/index.ts';
import type { RunEventsNotifier } from './run-events.ts';

/** The later of two places of a run (phase, then units covered). */
const later = (a: RunCursor, b: RunCursor | undefined): RunCursor =>
  !b || a.phase > b.phase || (a.phase === b.phase && coveredUnits(a) >= coveredUnits(b)) ? a : b;

export class StoreRunJournal implements RunJournal {
  /**
   * Where each run's last checkpoint told here moved it: what is told outside a checkpoint sits there, not at the
   * place the caller read the run at (a live stream has sent every place before the run's, services/run-stream.ts).
   */
  private readonly places = new Map<string, RunCursor>();
  private lastAt = 0;

  /** `frames`: the dashboard's queue; none: nothing is told to the dashboard (a CLI, a test). */
  constructor(
    private readonly store: Store,
    private readonly frames?: RunEventsNotifier,
  ) {}

  async move(
    run: JournalRun,
    move: RunTransition,
    { fields = {}, line, verification, rollback }: RunMoveTold = {},
  ): Promise<boolean> {
    if (!(await this.store.runs.transition(run.tenantId, run.id, move, fields))) return false;
    // An end tells the run's counters as they stand after it (read once: an end is rare, a checkpoint is not).
    const ended = isTerminalRun(move.to) ? await this.store.runs.get(run.tenantId, run.id) : undefined;
    const events: RunEvent[] = [
      ...(line ? [{ type: 'log', message: line } as const] : []),
      ...(verification ? [{ type: 'verification', summary: verification } as const] : []),
      ...(rollback ? [{ type: 'rollback', summary: rollback } as const] : []),
      { type: 'status', status: move.to.toLowerCase() },
      ...(ended ? [{ type: 'done', stats: statsOf(ended) } as const] : []),
    ];
    const ids = this.idsAt(ended ?? run, events.length);
    await this.store.runs.appendEvents(
      run.tenantId,
      run.projectId,
      run.id,
      events.map((event, n) => ({ id: ids[n] as string, event })),
    );
    if (ended) this.frames?.ended(run.tenantId, ended);
    else if (move.to === 'PAUSED' || move.to === 'ROLLBACK_PAUSED')
      this.frames?.paused(run.tenantId, run, fields.pauseReason ?? 'requested');
    else if (move.to === 'RUNNING') this.frames?.resumed(run.tenantId, run);
    else if (move.to === 'ROLLING_BACK') this.frames?.rollingBack(run.tenantId, run);
    return true;
  }

  async checkpoint(run: JournalRun, update: CheckpointUpdate): Promise<CheckpointMoved> {
    const moved = await this.store.runs.checkpoint(run.tenantId, run.id, {
      ...update,
      projectId: run.projectId,
    });
    if (moved) this.places.set(run.id, later(update.to, this.places.get(run.id)));
    if (!moved || !this.frames) return moved;
    const progress = update.events?.findLast((e) => e.event.type === 'progress')?.event;
    if (progress?.type === 'progress') this.frames.progress(run.tenantId, run, update.from.phase, progress);
    if (update.to.phase !== update.from.phase) this.frames.phase(run.tenantId, run, update.to.phase);
    return moved;
  }

  async log(run: JournalRun, ...messages: string[]): Promise<void> {
    if (messages.length === 0) return;
    const ids = this.idsAt(run, messages.length);
    await this.store.runs.appendEvents(
      run.tenantId,
      run.projectId,
      run.id,
      messages.map((message, n) => ({ id: ids[n] as string, event: { type: 'log', message } })),
    );
  }

  async lines(
    run: JournalRun,
    at: { phase: number; index: number; from?: number },
    messages: string[],
  ): Promise<void> {
    // One item a line: a second pass with other lines overwrites each of them, never leaves a bundle beside.
    for (const [n, message] of messages.entries())
      await this.store.runs.appendEvent(
        run.tenantId,
        run.projectId,
        run.id,
        chunkEventId(at.phase, at.index, (at.from ?? 0) + n),
        { type: 'log', message },
      );
  }

  async waiting(run: JournalRun, wait: RunWait): Promise<void> {
    this.frames?.waiting(run.tenantId, run, wait);
    await this.log(run, waitLine(wait));
  }

  started(run: Run): void {
    this.frames?.started(run.tenantId, run);
    this.frames?.phase(run.tenantId, run, run.cursor.phase);
  }

  /** Ids for events told together at the run's place, in order, after its chunk events there. */
  private idsAt(run: JournalRun, count: number): string[] {
    // Milliseconds, never the same twice here: two lines told in one millisecond would share an id (overwrite).
    const at = Math.max(Date.now(), this.lastAt + 1);
    this.lastAt = at + count - 1;
    const place = later(run.cursor, this.places.get(run.id));
    const units = coveredUnits(place);
    return Array.from({ length: count }, (_, n) => statusEventId(place.phase, units, at + n));
  }

  async settle(): Promise<void> {
    await this.frames?.settle();
  }
}

const statsOf = (run: Run) => ({
  created: run.successCount,
  skipped: run.skippedCount,
  failed: run.failureCount,
});
