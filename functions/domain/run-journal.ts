/**
 * The run journal (the port; its implementation: adapters/run-journal.ts): the one way a run moves and tells the
 * world, for the run API's use cases and the engine alike. Each act is one call: a status move (one of
 * RUN_TRANSITIONS) writes the run item and, only when that conditional write held, the run's stream events and its
 * dashboard frame; a checkpoint the same for a move of the cursor. So whoever moves a run tells it, exactly once,
 * and nothing about a run is told that did not happen. Pure types.
 */

import type { RollbackReport } from './rollback/plan.ts';
import type { RunEvent, RunWait } from './run-events.ts';
import type { RunTransition } from './run-lifecycle.ts';
import type { Run, RunCursor } from './runs.ts';
import type { VerificationSummary } from './verification/audit.ts';

/** The run as the journal needs it: its ids, and its checkpoint (where the events it tells sit in the stream). */
export type JournalRun = Pick<Run, 'id' | 'tenantId' | 'projectId' | 'cursor'>;

export interface RunJournal {
  /**
   * A status move, one conditional write from the move's `from`; only when it held: `line` (why, if given), the
   * `verification` event with its summary (given when a verification ends), the `rollback` event with its counts
   * (given when a rollback's pass ends), the `status` event and, for an end status, `done` with the run's counters on the stream, and the dashboard frame
   * (`run.paused`, `run.resumed`, `run.ended`). Answers whether the run moved.
   */
  move(run: JournalRun, move: RunTransition, told?: RunMoveTold): Promise<boolean>;
  /**
   * The checkpoint moved from exactly `update.from`, with its events, in one transaction; when it held, the
   * dashboard's `run.progress` (at most one a second) and `run.phase` for a new phase. false: the run moved
   * elsewhere (another invocation checkpointed first); otherwise how the run stands (CheckpointMoved).
   */
  checkpoint(run: JournalRun, update: CheckpointUpdate): Promise<CheckpointMoved>;
  /**
   * Lines on the run's stream outside a checkpoint, at the run's checkpoint, in order: stored together (one item
   * for up to 64 KB of them), as a status move's are.
   */
  log(run: JournalRun, ...messages: string[]): Promise<void>;
  /**
   * Lines at a fixed place of the stream (`chunkEventId(phase, index, from + n)`): told again, they overwrite
   * themselves (work done again after a crash logs once).
   */
  lines(
    run: JournalRun,
    at: { phase: number; index: number; from?: number },
    messages: string[],
  ): Promise<void>;
  /** A tracker makes the whole run wait: the stream's line ("Waiting for Jira's hourly quota ...") and `run.waiting`. */
  waiting(run: JournalRun, wait: RunWait): Promise<void>;
  /** The run starts working: the dashboard's `run.started` and its first phase. */
  started(run: Run): void;
  /** Waits, boundedly, for the dashboard frames still on their way (they never hold up the run). */
  settle(): Promise<void>;
}

/**
 * A checkpoint that held, and how the run stands as it moved: `true`, it works on (one of WORKING_STATUSES, its
 * control `run`); `'stop'`, a pause or cancel was asked for, or it is in another status now (the units under way
 * end and are moved, no other starts). Told by the move's own condition: no read of the run beside it.
 */
export type CheckpointMoved = boolean | 'stop';

/** What a status move writes beside the status, and tells beside it. */
export interface RunMoveTold {
  fields?: RunMoveFields;
  line?: string;
  verification?: VerificationSummary;
  rollback?: RollbackReport;
}

/** The fields a status move (one of RUN_TRANSITIONS) may set beside the status. */
export type RunMoveFields = Partial<
  Pick<
    Run,
    | 'startedAt'
    | 'finishedAt'
    | 'failureReason'
    | 'progressPercent'
    | 'control'
    | 'pauseReason'
    | 'cursor'
    | 'currentPhase'
    | 'phaseStartedAt'
    | 'rollback'
  >
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
