/**
 * One engine invocation's interrupt: the one way "stop now" travels. Whatever learns that the invocation cannot go
 * on aborts it with a reason (the OAuth token source: no token can be had; the HTTP layer: a whole-client wait
 * handed back; the runner: its time budget spent); the unit pool and the HTTP layer's queued requests read its
 * signal, and the runner turns the reason into the state machine's answer in one place (engine/control.ts).
 * Made once per invocation and dropped with it, so nothing of one invocation stops the next.
 */
import type { ConnectionKind } from '#domain/connectors.ts';
import type { ThrottleWaitNotice, TrackerFault } from './tracker-errors.ts';

/** Why an invocation stops. Plain data: it reaches the run's stream and logs, never a credential. */
export type InterruptReason =
  /** A tracker connection's OAuth token cannot be had: `code` the provider's error or `unreachable`. */
  | {
      kind: 'credentials-refused';
      tracker: ConnectionKind;
      code: string;
      /** The reason the run pauses with (the spec's "Token exchange failed ..."). */
      message: string;
      /** The grant was refused: only a reconnect helps (otherwise the provider was unreachable: time helps). */
      reconnect: boolean;
    }
  /** A tracker asked the whole client to wait beyond this invocation (Jira's hourly quota). */
  | { kind: 'wait-deferred'; wait: ThrottleWaitNotice }
  /**
   * A tracker did not answer after the client's retries (passingFault), the `count`-th engine call in a row:
   * call again at `until`, or, without one (too many in a row), the run fails.
   */
  | ({ kind: 'tracker-unavailable'; count: number; until?: Date } & TrackerFault)
  /** Too little of the invocation's time is left to start more work. */
  | { kind: 'time-budget' }
  /**
   * The project's connection of `trackers` names another site than the run is bound to (domain/run-sites.ts):
   * nothing is read or written with it; the run pauses with `message` (a verification ends) until it names them
   * again.
   */
  | { kind: 'sites-moved'; trackers: ConnectionKind[]; message: string }
  /**
   * A run delivered by Jira's importer waits for a Jira administrator to import batch `batch` (or the rest of
   * it): the run pauses with `message` as its reason, and a resume looks for the batch again.
   */
  | { kind: 'import-awaited'; batch: number; message: string };

/** A tracker connection's refused (or unreachable) token, as the interrupt tells it. */
export type CredentialsRefused = Extract<InterruptReason, { kind: 'credentials-refused' }>;

/**
 * A reason that voids the work under way: what the units did since the last checkpoint is not checkpointed (it
 * met a refused token or a deferred client) and is worked again by a later invocation. A spent time budget only
 * starts nothing new: the units under way end and are checkpointed.
 */
export const voidsWork = (reason: InterruptReason | undefined): boolean =>
  reason !== undefined && reason.kind !== 'time-budget';

/** Whether `next` replaces `current`: a reason that voids work outranks one that does not; a later reset wins. */
function outranks(next: InterruptReason, current: InterruptReason | undefined): boolean {
  if (!current) return true;
  if (!voidsWork(current)) return voidsWork(next);
  return (
    current.kind === 'wait-deferred' &&
    next.kind === 'wait-deferred' &&
    next.wait.until.getTime() > current.wait.until.getTime()
  );
}

export class Interrupt {
  private readonly controller = new AbortController();
  private current: InterruptReason | undefined;
  private readonly voidListeners = new Set<(reason: InterruptReason) => void>();

  /** Aborted at the first reason: no new work starts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The reason that stands (the weightiest told so far), if any. */
  get reason(): InterruptReason | undefined {
    return this.current;
  }

  /** Whether the work under way is void (voidsWork): nothing more is checkpointed in this invocation. */
  get voided(): boolean {
    return voidsWork(this.current);
  }

  /**
   * Stops the invocation with `reason`. The first reason holds unless a weightier one comes (a refused token or a
   * deferred wait after the time budget; a later reset after an earlier one).
   */
  abort(reason: InterruptReason): void {
    if (!outranks(reason, this.current)) return;
    const wasVoided = this.voided;
    this.current = reason;
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    if (!wasVoided && this.voided) for (const listener of this.voidListeners) listener(reason);
  }

  /** Ends the step under way once its work is void: the runner answers the reason (engine/control.ts). */
  throwIfVoided(): void {
    if (this.current && this.voided) throw new InvocationInterrupted(this.current);
  }

  /** Tells `listener` once the work under way turns void (at once if it is); answers the unsubscribe. */
  onVoided(listener: (reason: InterruptReason) => void): () => void {
    if (this.current && this.voided) {
      listener(this.current);
      return () => {};
    }
    this.voidListeners.add(listener);
    return () => this.voidListeners.delete(listener);
  }
}

/** A request not sent because its invocation was interrupted (a refused token, another client's deferred wait). */
export class InvocationInterrupted extends Error {
  override name = 'InvocationInterrupted';
  constructor(readonly reason: InterruptReason) {
    super(`invocation interrupted: ${reason.kind}`);
  }
}
