/**
 * What a run's moves carry (pure types): the fields a status move sets beside the status, and a checkpoint's move
 * with the events and failures written in its own transaction (store `runs.checkpoint`).
 */
import type { RunEvent } from './run-events.ts';
import type { Run, RunCursor } from './runs.ts';

/** The fields a status move (one of RUN_TRANSITIONS) may set beside the status. */
export type RunMoveFields = Partial<
  Pick<Run, 'startedAt' | 'finishedAt' | 'failureReason' | 'progressPercent' | 'control' | 'pauseReason'>
>;

export interface CheckpointUpdate {
  from: RunCursor;
  to: RunCursor;
  success?: number;
  failure?: number;
  skipped?: number;
  progressPercent: number;
  totalItems?: number;
  /** The chunk's events, written in the same transaction as the checkpoint. */
  events?: { id: string; event: RunEvent }[];
  /**
   * Items that failed for the first time in this run: marked counted in the same transaction (`failure` is
   * their number), so an item counts once and a chunk worked again after a crash cannot count it twice.
   */
  newlyFailedItems?: number[];
  /**
   * The move's warnings (`#12: ...`), kept in one item in the same transaction (so a move worked again after a
   * crash cannot keep them twice), keyed by `warningsId`; no TTL: the dry run's preview reads them at the end.
   */
  warnings?: { id: string; messages: string[] };
  /**
   * The run's project, when the caller holds the run: spares the read of the run before the transaction (the
   * engine's moves come every 10 units, and no unit starts while one is under way). A run gone since fails the
   * transaction's condition all the same.
   */
  projectId?: string;
}
