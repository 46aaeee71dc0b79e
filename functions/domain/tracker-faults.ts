/**
 * A tracker that does not answer (5xx, timeouts, resets, unreachable) beyond the HTTP client's retries is a
 * passing fault, not the run's failure: the engine answers the state machine "call again after a wait", the wait
 * growing with each such answer in a row, and fails the run only once too many came in a row. "In a row": with
 * no checkpoint moved between them (the run's cursor is where the streak began), so any progress starts a new
 * count. Pure.
 */
import type { ConnectionKind } from './connectors.ts';
import type { RunCursor, TrackerFaultStreak } from './runs.ts';

export interface TrackerFaultPolicy {
  /** The wait after the first fault in a row; each further one doubles it. */
  firstWaitMs: number;
  /** The longest wait between two calls. */
  maxWaitMs: number;
  /** This many waits in a row at most: the next fault fails the run. */
  maxAnswers: number;
}

/**
 * 30 s doubling to 15 min, 8 waits: about an hour and a quarter of an outage is waited out (30 s + 1 + 2 + 4 + 8
 * + 3 x 15 min), longer than Atlassian's and Azure DevOps' incidents of degraded API usually last, short enough
 * that a tracker gone for good fails the run the same afternoon.
 */
export const TRACKER_FAULT_POLICY: TrackerFaultPolicy = {
  firstWaitMs: 30_000,
  maxWaitMs: 15 * 60_000,
  maxAnswers: 8,
};

/** The streak after one more fault with the checkpoint at `cursor`: one longer if it has not moved, else a new one. */
export function nextFaultStreak(
  previous: TrackerFaultStreak | null | undefined,
  cursor: RunCursor,
): TrackerFaultStreak {
  const same = previous?.phase === cursor.phase && previous.index === cursor.index;
  return { phase: cursor.phase, index: cursor.index, count: same ? previous.count + 1 : 1 };
}

/** How long to wait after the `count`-th fault in a row; undefined: too many, the run fails. */
export function faultWaitMs(count: number, policy: TrackerFaultPolicy): number | undefined {
  if (count > policy.maxAnswers) return undefined;
  return Math.min(policy.firstWaitMs * 2 ** (count - 1), policy.maxWaitMs);
}

const trackerName = (tracker: ConnectionKind) => (tracker === 'target' ? 'Jira' : 'Azure DevOps');

/** What the tracker did: `HTTP 503`, or `no answer` (timeout, reset, unreachable). */
export const faultDetail = (status: number | null) => (status === null ? 'no answer' : `HTTP ${status}`);

/** The run's failure reason once the streak is too long: "Jira did not answer for 9 engine calls in a row ...". */
export function faultFailureReason(tracker: ConnectionKind, count: number, status: number | null): string {
  return `${trackerName(tracker)} did not answer for ${count} engine calls in a row (last: ${faultDetail(status)})`;
}
