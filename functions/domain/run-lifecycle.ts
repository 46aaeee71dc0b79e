/**
 * How a run moves between its statuses, in one table (as PROJECT_TRANSITIONS does for projects): every status
 * change of a run is one of these moves, each one conditional write from `from` (store `runs.transition`). Pure.
 *
 *   RUNNING -pause-> PAUSED -resume-> RUNNING
 *   PENDING | RUNNING | PAUSED -cancel-> CANCELLED
 *   RUNNING -complete-> COMPLETED | PARTIAL      PENDING | RUNNING (| PAUSED) -fail-> FAILED
 *   COMPLETED | PARTIAL -verify-> VERIFYING -verified-> COMPLETED | PARTIAL (as it ended: failureCount)
 *
 * A move to an end status also releases the project's lock and moves the project (store `afterEnd`); the move back
 * from VERIFYING does neither (the run had ended: its lock and project were settled then).
 */
import type { RunStatus } from './runs.ts';

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
} as const satisfies Record<string, RunTransition>;

/** The move that ends a run's verification: back to how the run ended (PARTIAL when items failed). */
export const verificationEnd = (run: { failureCount: number }) =>
  run.failureCount > 0 ? RUN_TRANSITIONS.verifiedPartial : RUN_TRANSITIONS.verified;
