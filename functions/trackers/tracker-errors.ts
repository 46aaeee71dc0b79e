/** How a call to a tracker ends when it does not end with an answer: the tracker HTTP layer's outcomes as errors. */
import type { ConnectionKind } from '#domain/connectors.ts';

/** A tracker answered with an error status (after retries, for retryable ones). */
export class TrackerHttpError extends Error {
  override name = 'TrackerHttpError';
  constructor(
    readonly tracker: ConnectionKind,
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: unknown,
  ) {
    super(`${tracker} tracker answered ${status} to ${method} ${path}`);
  }
}

/** The tracker could not be reached at all (DNS, refused, reset, timeout), after retries. */
export class TrackerUnreachableError extends Error {
  override name = 'TrackerUnreachableError';
  constructor(
    readonly tracker: ConnectionKind,
    readonly host: string,
    readonly reason: string,
  ) {
    super(`${tracker} tracker unreachable at ${host}: ${reason}`);
  }
}

/** A tracker not answering, as the engine tells it: which one, and its status (null: no answer at all). */
export interface TrackerFault {
  tracker: ConnectionKind;
  status: number | null;
}

/**
 * The passing fault behind `err`, if it is one: a tracker that did not answer after the client's retries (a 5xx,
 * or unreachable: timeout, reset, refused connection). Not a 4xx: that answer stands (the tenant's to mend).
 */
export function passingFault(err: unknown): TrackerFault | undefined {
  if (err instanceof TrackerUnreachableError) return { tracker: err.tracker, status: null };
  if (err instanceof TrackerHttpError && err.status >= 500)
    return { tracker: err.tracker, status: err.status };
  return undefined;
}

/** A long wait the whole client is in (Jira's hourly quota, Azure DevOps blocking), for the run's stream. */
export interface ThrottleWaitNotice {
  tracker: ConnectionKind;
  /** Jira's RateLimit-Reason, when it gave one. */
  reason: string | null;
  until: Date;
}

/**
 * A whole-client wait longer than the client may sit out (`waitBudgetMs`): the request was not sent again, and no
 * other request of this client will be. Not a failure of the item at hand: the caller stops and waits elsewhere.
 */
export class ThrottleWaitDeferred extends Error {
  override name = 'ThrottleWaitDeferred';
  constructor(readonly notice: ThrottleWaitNotice) {
    super(`${notice.tracker} tracker asked for a wait until ${notice.until.toISOString()}`);
  }
}
