/**
 * How a run moves between its statuses, in one table (as PROJECT_TRANSITIONS does for projects): every status
 * change of a run is one of these moves, each one conditional write from `from` (store `runs.transition`). Pure.
 *
 *   RUNNING -pause-> PAUSED -resume-> RUNNING
 *   PENDING | RUNNING | PAUSED -cancel-> CANCELLED
 *   RUNNING -complete-> COMPLETED | PARTIAL      PENDING | RUNNING (| PAUSED) -fail-> FAILED
 *   COMPLETED | PARTIAL -verify-> VERIFYING -verified-> COMPLETED | PARTIAL (as it ended: failureCount)
 *   COMPLETED | PARTIAL | FAILED | CANCELLED -rollBack-> ROLLING_BACK -pauseRollback-> ROLLBACK_PAUSED
 *     -resumeRollback-> ROLLING_BACK -rolledBack-> ROLLED_BACK (the rollback done)
 *   ROLLING_BACK | ROLLBACK_PAUSED -rollbackEnd-> as the run ended (`rollback.endedAs`: a preview done, or a
 *     rollback cancelled or failed)
 *
 * A move to an end status also releases the project's lock and moves the project (store `afterEnd`); the move back
 * from VERIFYING or a rollback's statuses does neither (the run had ended: its lock and project were settled then).
 */
import type { RollbackFrom, RunRollback, RunStatus } from './runs.ts';

export interface RunTransition {
  from: readonly RunStatus[];
  to: RunStatus;
}

export const RUN_TRANSITIONS = {
  /** A pause request carried out, a resume whose dispatch failed, or a tracker token that could not be had. */
  pause: { from: ['RUNNING'], to: 'PAUSED' },
  /** A paused run resumes. */
  resume: { from: ['PAUSED'], to: 'RUNNING' },
  /** A user's cancel (the API at once, or the engine carrying out the request). */
  cancel: { from: ['PENDING', 'RUNNING', 'PAUSED'], to: 'CANCELLED' },
  /** Every phase done, nothing failed. */
  complete: { from: ['RUNNING'], to: 'COMPLETED' },
  /** Every phase done, some items failed. */
  completePartial: { from: ['RUNNING'], to: 'PARTIAL' },
  /** The run could not be prepared, or its worker not started. */
  failToStart: { from: ['RUNNING', 'PENDING'], to: 'FAILED' },
  /** Preflight refused the run (the project cannot be migrated as it stands). */
  failPreflight: { from: ['RUNNING'], to: 'FAILED' },
  /** The engine's execution failed for good (a step's retries spent): whatever the run's status, unless ended. */
  fail: { from: ['RUNNING', 'PAUSED', 'PENDING'], to: 'FAILED' },
  /** A finished run's verification starts (the run API), at the phase after the run's last. */
  verify: { from: ['COMPLETED', 'PARTIAL'], to: 'VERIFYING' },
  /** The verification ended (done, cancelled or failed): the run is back as it ended, with no failures. */
  verified: { from: ['VERIFYING'], to: 'COMPLETED' },
  /** The same, for a run that ended with failures. */
  verifiedPartial: { from: ['VERIFYING'], to: 'PARTIAL' },
  /** A finished run's rollback (or its preview) starts (the run API), at the phase after the run's last. */
  rollBack: { from: ['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED'], to: 'ROLLING_BACK' },
  /** A pause request carried out at the rollback's checkpoint, or a resume whose dispatch failed. */
  pauseRollback: { from: ['ROLLING_BACK'], to: 'ROLLBACK_PAUSED' },
  /** A paused rollback resumes. */
  resumeRollback: { from: ['ROLLBACK_PAUSED'], to: 'ROLLING_BACK' },
  /** The rollback done: what the run created is deleted, as its preview said. */
  rolledBack: { from: ['ROLLING_BACK'], to: 'ROLLED_BACK' },
  /** A preview done, or a rollback cancelled or failed: the run back as it ended (one move per end status). */
  rollbackEndCompleted: { from: ['ROLLING_BACK', 'ROLLBACK_PAUSED'], to: 'COMPLETED' },
  rollbackEndPartial: { from: ['ROLLING_BACK', 'ROLLBACK_PAUSED'], to: 'PARTIAL' },
  rollbackEndFailed: { from: ['ROLLING_BACK', 'ROLLBACK_PAUSED'], to: 'FAILED' },
  rollbackEndCancelled: { from: ['ROLLING_BACK', 'ROLLBACK_PAUSED'], to: 'CANCELLED' },
} as const satisfies Record<string, RunTransition>;

/** The move that ends a run's verification: back to how the run ended (PARTIAL when items failed). */
export const verificationEnd = (run: { failureCount: number }) =>
  run.failureCount > 0 ? RUN_TRANSITIONS.verifiedPartial : RUN_TRANSITIONS.verified;

const ROLLBACK_ENDS: Record<RollbackFrom, RunTransition> = {
  COMPLETED: RUN_TRANSITIONS.rollbackEndCompleted,
  PARTIAL: RUN_TRANSITIONS.rollbackEndPartial,
  FAILED: RUN_TRANSITIONS.rollbackEndFailed,
  CANCELLED: RUN_TRANSITIONS.rollbackEndCancelled,
};

/** The move that ends a rollback's pass without a rollback done (a preview, a cancel, a failure): as it ended. */
export const rollbackEnd = (run: { rollback?: Pick<RunRollback, 'endedAs'> }) =>
  ROLLBACK_ENDS[run.rollback?.endedAs ?? 'COMPLETED'];

/** A rollback (or its preview) under way or paused: the run's own statuses while it is taken back. */
export const isRollingBack = (status: RunStatus) => status === 'ROLLING_BACK' || status === 'ROLLBACK_PAUSED';

/**
 * The statuses the engine works a run's units in: its own run, its verification, its rollback. A checkpoint's move
 * answers whether the run still stands in one of them with nothing asked of it (control `run`).
 */
export const WORKING_STATUSES = [
  'RUNNING',
  'VERIFYING',
  'ROLLING_BACK',
] as const satisfies readonly RunStatus[];
