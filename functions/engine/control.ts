/**
 * The run's control, shared by every step of the engine: reading the run, carrying out a pause or cancel request,
 * pausing for a tracker token that cannot be had, failing the run, waiting for a tracker's reset. Every status
 * change is one of RUN_TRANSITIONS (domain/run-lifecycle.ts), made through the run journal, which tells it.
 */
import type { RunJournal } from '#domain/run-journal.ts';
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import { LAST_CORE_PHASE, type Run } from '#domain/runs.ts';
import type { EngineDeps, Preflight } from '#phase-kit/context.ts';
import { nowIso } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import { countRun } from '#platform/metrics.ts';
import { ThrottleWaitDeferred } from '#trackers/http.ts';
import { CredentialsUnavailable, TokenExchangeError } from '#trackers/oauth/token-source.ts';
import { writeRunReports } from './reports.ts';

/**
 * What the engine answers the state machine. `batch`: call RunBatch again (preflight is done, the time budget ran
 * low, a phase ended: the engine's own business, told in its log and metrics); `wait`: a tracker asked for a wait
 * beyond this invocation, wait (`WaitAnswer`) then call RunBatch again; `finalize`: every phase is done, call
 * Finalize; the others end the execution.
 */
export type RunnerAnswer = 'wait' | 'batch' | 'finalize' | 'paused' | 'cancelled' | 'done' | 'failed';

/**
 * A transaction holds 100 writes: the checkpoint, the progress event and at most 98 more: the lines, and the
 * markers of items failing for the first time in the run (the lines give way to them).
 */
export const MAX_LOG_EVENTS = 98;

/** The run's last phase: the core phases, then one per plugin the run took at preflight. */
export const lastPhaseOf = (preflight: Pick<Preflight, 'plugins'>) =>
  LAST_CORE_PHASE + (preflight.plugins?.length ?? 0);

/**
 * Marks the run FAILED with its reason, only from one of `from` (a run that already ended keeps its end), and
 * tells the stream: a log line saying why, then the status. Answers whether the run moved.
 */
export async function failRun(
  journal: RunJournal,
  run: Run,
  move: typeof RUN_TRANSITIONS.fail | typeof RUN_TRANSITIONS.failPreflight,
  reason: string,
  line: string,
): Promise<boolean> {
  const moved = await journal.move(run, move, {
    fields: { finishedAt: nowIso(), failureReason: reason },
    line,
  });
  if (moved) countRun('FAILED');
  return moved;
}

/**
 * A tracker connection's OAuth token could not be had (the grant refused: "Token exchange failed"; or the
 * provider unreachable): the run pauses with the reason instead of failing item after item; the chunk under
 * way is not checkpointed (chunks are safe to work again), so a resume (after a reconnect, for a refusal)
 * carries on where it stood. Answers 'paused'.
 */
export async function pauseForCredentials(
  journal: RunJournal,
  run: Run,
  refusal: CredentialsUnavailable,
): Promise<RunnerAnswer> {
  const moved = await journal.move(run, RUN_TRANSITIONS.pause, {
    fields: { control: 'pause', pauseReason: refusal.message },
    // A refused grant needs a reconnect first; an unreachable provider only time.
    line: `Run paused: ${refusal.message}${refusal instanceof TokenExchangeError ? ', then resume the run' : ''}`,
  });
  logger.warn('run paused: no tracker token', {
    tenantId: run.tenantId,
    runId: run.id,
    kind: refusal.kind,
    providerError: refusal.providerError,
    moved,
  });
  return 'paused';
}

/** The refusal behind `err`, or one a token source recorded though a phase swallowed the error. */
export function credentialsRefusal(deps: EngineDeps, err?: unknown): CredentialsUnavailable | undefined {
  if (err instanceof CredentialsUnavailable) return err;
  return deps.credentialsRefused?.();
}

/**
 * Reads the run's control flag and status before any step: a cancel or pause request is carried out here (the
 * run moves, the stream is told); a run that is not RUNNING answers how it stands. `undefined`: go on.
 */
export async function obeyControl(deps: EngineDeps, run: Run): Promise<RunnerAnswer | undefined> {
  if (run.control === 'cancel') {
    // The run API cancels a run at once (services/migrations.ts), through the same journal move: whichever
    // move holds tells it, once. What a cancelled run did is reported too: its failures and the id map.
    if (['RUNNING', 'PAUSED', 'PENDING'].includes(run.status)) await writeRunReports(deps, run);
    if (await deps.journal.move(run, RUN_TRANSITIONS.cancel, { fields: { finishedAt: nowIso() } }))
      countRun('CANCELLED');
    return 'cancelled';
  }
  if (run.control === 'pause') {
    await deps.journal.move(run, RUN_TRANSITIONS.pause);
    return 'paused';
  }
  if (run.status === 'RUNNING') return undefined;
  if (run.status === 'PAUSED') return 'paused';
  if (run.status === 'CANCELLED') return 'cancelled';
  if (run.status === 'FAILED') return 'failed';
  return 'done';
}

export async function readRun(deps: EngineDeps, ref: { tenantId: string; runId: string }): Promise<Run> {
  const run = await deps.store.runs.get(ref.tenantId, ref.runId);
  if (!run) throw new Error(`run ${ref.runId} not found`);
  return run;
}

/**
 * The state machine's Wait between two engine calls: `waitSeconds` (what its Wait state's SecondsPath reads) is at
 * most this, so a pause asked for during a long wait is carried out within a minute (the engine's `wait` action
 * reads the run's control flag after each slice); a cancel also stops the execution itself.
 */
export const WAIT_SLICE_SECONDS = 60;

/** `wait` with the reset time and the next slice; `batch` once the reset is reached. */
export type WaitAnswer = { answer: 'wait'; waitUntil: string; waitSeconds: number } | { answer: 'batch' };

/** What to answer while waiting until `until` (ISO 8601): pure, for the `wait` action and the first deferral. */
export function waitSlice(until: string, now = Date.now()): WaitAnswer {
  const left = Date.parse(until) - now;
  if (!(left > 0)) return { answer: 'batch' };
  return {
    answer: 'wait',
    waitUntil: until,
    waitSeconds: Math.min(WAIT_SLICE_SECONDS, Math.ceil(left / 1000)),
  };
}

/** A whole-client wait a tracker client handed back during this invocation (`err`, or one a phase swallowed). */
export function deferredWait(
  deps: Pick<EngineDeps, 'waitDeferred'>,
  err?: unknown,
): ThrottleWaitDeferred | undefined {
  if (err instanceof ThrottleWaitDeferred) return err;
  return deps.waitDeferred?.();
}

/** Throws the wait a client handed back, if any: the chunk under way is not checkpointed (it is worked again). */
export function throwIfWaitDeferred(deps: Pick<EngineDeps, 'waitDeferred'>): void {
  const wait = deps.waitDeferred?.();
  if (wait) throw wait;
}

/**
 * The run waits outside the engine for a tracker's reset (Jira's hourly quota beyond this invocation's time): the
 * stream is told ("Waiting for Jira's hourly quota until 14:00 UTC"), the run stays RUNNING at its checkpoint,
 * and the state machine waits, then calls RunBatch again.
 */
export async function waitForReset(
  deps: Pick<EngineDeps, 'journal'>,
  run: Run,
  deferral: ThrottleWaitDeferred,
): Promise<WaitAnswer> {
  const until = deferral.notice.until.toISOString();
  logger.info('run waits for a tracker outside the engine', {
    tenantId: run.tenantId,
    runId: run.id,
    tracker: deferral.notice.tracker,
    reason: deferral.notice.reason,
    until,
  });
  await deps.journal.waiting(run, deferral.notice);
  return waitSlice(until);
}
