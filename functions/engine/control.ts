/**
 * The run's control, shared by every step of the engine: reading the run, carrying out a pause or cancel request,
 * failing the run, and answering an interrupted invocation (trackers/interrupt.ts): pausing for a tracker token
 * that cannot be had or a connection moved to another site, waiting for a tracker's reset or for it to answer
 * again. Every status change is one of RUN_TRANSITIONS (domain/run-lifecycle.ts), made through the run journal,
 * which tells it.
 */

import type { RollbackReport } from '#domain/rollback/plan.ts';
import type { RunWait } from '#domain/run-events.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import { RUN_TRANSITIONS, rollbackEnd, verificationEnd } from '#domain/run-lifecycle.ts';
import { LAST_CORE_PHASE, type Run, type RunRollback } from '#domain/runs.ts';
import {
  faultFailureReason,
  faultWaitMs,
  nextFaultStreak,
  TRACKER_FAULT_POLICY,
} from '#domain/tracker-faults.ts';
import type { VerificationSummary } from '#domain/verification/audit.ts';
import type { EngineDeps, Preflight } from '#phase-kit/context.ts';
import { nowIso } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import { countRun } from '#platform/metrics.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { CredentialsRefused, Interrupt, InterruptReason } from '#trackers/interrupt.ts';
import { passingFault, type TrackerFault } from '#trackers/tracker-errors.ts';
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
 * Whether the run verifies itself at its end, as the phase after its last (the `verify` option): never a dry run,
 * which writes nothing. A run delivered by Jira's importer is verified as a REST one, against what its files
 * carried (docs/jira-import.md).
 */
export const verifiesAtEnd = (run: Pick<Run, 'options'>) =>
  run.options.verify === true && !run.options.dryRun;

/**
 * Where a run's verification or rollback works: a phase after the run's last that no verification or rollback
 * of it has used (each ends with the cursor on to the next), so a run verified or previewed again tells its
 * stream at places after the last one's.
 */
export const afterRunPhaseOf = (preflight: Pick<Preflight, 'plugins'>, run: Pick<Run, 'cursor'>) =>
  Math.max(lastPhaseOf(preflight) + 1, run.cursor.phase);

/**
 * Ends a run's verification, however it ends (done, cancelled, failed): the run goes back to how it ended, with
 * `line` (and the summary, when done) on its stream, its cursor on to a phase no verification has used. Answers
 * whether it moved.
 */
export function endVerification(
  journal: RunJournal,
  run: Run,
  told: { line: string; verification?: VerificationSummary },
): Promise<boolean> {
  const next = run.cursor.phase + 1;
  return journal.move(run, verificationEnd(run), {
    ...told,
    fields: { cursor: { phase: next, index: 0 }, currentPhase: next },
  });
}

/**
 * Ends a rollback's pass other than by a rollback done (a preview done, a cancel, a failure): the run goes back
 * to how it ended, with `line` (and the counts, for a pass done) on its stream, its cursor on to a phase no pass
 * has used, and `previewed` (a preview done) recorded for the rollback to carry out. Answers whether it moved.
 */
export function endRollback(
  journal: RunJournal,
  run: Run,
  told: { line: string; report?: RollbackReport; previewed?: RunRollback['previewed'] },
): Promise<boolean> {
  const next = run.cursor.phase + 1;
  const rollback =
    run.rollback && told.previewed !== undefined ? { ...run.rollback, previewed: told.previewed } : undefined;
  return journal.move(run, rollbackEnd(run), {
    line: told.line,
    ...(told.report ? { rollback: told.report } : {}),
    fields: {
      control: 'run',
      pauseReason: null,
      cursor: { phase: next, index: 0 },
      currentPhase: next,
      ...(rollback ? { rollback } : {}),
    },
  });
}

/**
 * Marks the run FAILED with its reason, only from one of `from` (a run that already ended keeps its end), and
 * tells the stream: a log line saying why, then the status. Answers whether the run moved to FAILED; a VERIFYING
 * run is moved back to how it ended instead (its line "Verification failed: ..."): only the verification failed.
 */
export async function failRun(
  journal: RunJournal,
  run: Run,
  move: typeof RUN_TRANSITIONS.fail | typeof RUN_TRANSITIONS.failPreflight,
  reason: string,
  line: string,
): Promise<boolean> {
  // Only a verification failed: the run goes back to how it ended.
  if (run.status === 'VERIFYING') {
    await endVerification(journal, run, { line: `Verification failed: ${reason}` });
    return false;
  }
  // Only a rollback (or its preview) failed: the run goes back to how it ended; what was deleted stays deleted.
  if (run.status === 'ROLLING_BACK' || run.status === 'ROLLBACK_PAUSED') {
    await endRollback(journal, run, { line: `Rollback failed: ${reason}` });
    return false;
  }
  const moved = await journal.move(run, move, {
    fields: { finishedAt: nowIso(), failureReason: reason },
    line,
  });
  if (moved) countRun('FAILED');
  return moved;
}

/**
 * The service stops the run's pass with `reason`: a run or a rollback pauses at its checkpoint with it as its
 * pauseReason (the chunk under way is not checkpointed: chunks are safe to work again, so a resume carries on where
 * it stood); a verification is not paused: it ends, and is started again. `first`: the reason names something to
 * do first, after which the stream's line says to resume (or verify again). Answers whether the run moved.
 */
async function stopPass(journal: RunJournal, run: Run, reason: string, first: boolean): Promise<boolean> {
  if (run.status === 'VERIFYING')
    return endVerification(journal, run, {
      line: `Verification stopped: ${reason}${first ? ', then verify again' : ''}`,
    });
  const then = first ? ', then resume the run' : '';
  const fields = { control: 'pause' as const, pauseReason: reason };
  if (run.status === 'ROLLING_BACK')
    return journal.move(run, RUN_TRANSITIONS.pauseRollback, {
      fields,
      line: `Rollback paused: ${reason}${then}`,
    });
  return journal.move(run, RUN_TRANSITIONS.pause, { fields, line: `Run paused: ${reason}${then}` });
}

/**
 * A tracker connection's OAuth token could not be had (the grant refused: "Token exchange failed"; or the
 * provider unreachable): the run pauses with the reason instead of failing item after item (a refused grant needs
 * a reconnect first; an unreachable provider only time). Answers 'paused'.
 */
async function pauseForCredentials(
  journal: RunJournal,
  run: Run,
  refusal: CredentialsRefused,
): Promise<RunnerAnswer> {
  const moved = await stopPass(journal, run, refusal.message, refusal.reconnect);
  logger.warn('run paused: no tracker token', {
    tenantId: run.tenantId,
    runId: run.id,
    kind: refusal.tracker,
    providerError: refusal.code,
    moved,
  });
  return 'paused';
}

/**
 * The project's connection names other sites than the run is bound to (a connection replaced under a paused run or
 * rollback): the run works nowhere else; it pauses (a verification ends) until the connection names its sites
 * again. Answers 'paused'.
 */
async function pauseForMovedSites(
  journal: RunJournal,
  run: Run,
  moved: Extract<InterruptReason, { kind: 'sites-moved' }>,
): Promise<RunnerAnswer> {
  const stopped = await stopPass(journal, run, moved.message, true);
  logger.warn('run paused: its connection names another site', {
    tenantId: run.tenantId,
    runId: run.id,
    trackers: moved.trackers,
    status: run.status,
    moved: stopped,
  });
  return 'paused';
}

/**
 * A run delivered by Jira's importer reaches a batch Jira does not hold whole yet: the run pauses with the reason
 * (the batch, the file, the items missing), told on its stream; the admin imports the file and resumes the run,
 * which looks for the batch again (engine/phases/import.ts). Answers 'paused'.
 */
async function pauseForImport(
  journal: RunJournal,
  run: Run,
  awaited: Extract<InterruptReason, { kind: 'import-awaited' }>,
): Promise<RunnerAnswer> {
  const moved = await journal.move(run, RUN_TRANSITIONS.pause, {
    fields: { control: 'pause', pauseReason: awaited.message },
    line: `Run paused: ${awaited.message}`,
  });
  logger.info('run paused: waiting for a Jira import', {
    tenantId: run.tenantId,
    runId: run.id,
    batch: awaited.batch,
    moved,
  });
  return 'paused';
}

/**
 * Reads the run's control flag and status before any step: a cancel or pause request is carried out here (the
 * run moves, the stream is told); a run that is not RUNNING answers how it stands. `undefined`: go on.
 */
export async function obeyControl(deps: EngineDeps, run: Run): Promise<RunnerAnswer | undefined> {
  if (run.status === 'VERIFYING') {
    // A verification writes nothing: a cancel (or pause) asked for meanwhile ends it, the run back as it ended.
    if (run.control === 'run') return undefined;
    await endVerification(deps.journal, run, { line: 'Verification cancelled' });
    return 'cancelled';
  }
  if (run.status === 'ROLLING_BACK') {
    // The run API ends a cancelled rollback at once (services/rollback.ts), through the same move.
    if (run.control === 'run') return undefined;
    if (run.control === 'pause') {
      await deps.journal.move(run, RUN_TRANSITIONS.pauseRollback, { line: 'Rollback paused' });
      return 'paused';
    }
    await endRollback(deps.journal, run, { line: 'Rollback cancelled' });
    return 'cancelled';
  }
  if (run.status === 'ROLLBACK_PAUSED') return 'paused';
  if (run.status === 'ROLLED_BACK') return 'done';
  if (run.control === 'cancel') {
    // The run API cancels a run at once (services/migrations.ts), through the same journal move: whichever
    // move holds tells it, once. What a cancelled run did is reported too: its failures and the id map.
    if (['RUNNING', 'PAUSED', 'PENDING'].includes(run.status)) {
      await writeRunReports(deps, run);
      // No import file of the run is imported any more: its copies for the importer go.
      await new ImportFileArchive(deps.artifacts).removeAllCopies(run.tenantId, run.id);
    }
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

export async function readRun(
  deps: Pick<EngineDeps, 'store'>,
  ref: { tenantId: string; runId: string },
): Promise<Run> {
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

/**
 * The run waits outside the engine for a tracker (Jira's hourly quota beyond this invocation's time, or a tracker
 * not answering): the stream is told ("Waiting for Jira's hourly quota until 14:00 UTC"), the run stays RUNNING
 * at its checkpoint, and the state machine waits (callAgainAt), then calls RunBatch again.
 */
async function waitForReset(journal: RunJournal, run: Run, wait: RunWait): Promise<RunnerAnswer> {
  logger.info('run waits for a tracker outside the engine', {
    tenantId: run.tenantId,
    runId: run.id,
    tracker: wait.tracker,
    reason: wait.reason,
    until: wait.until.toISOString(),
  });
  await journal.waiting(run, wait);
  return 'wait';
}

/**
 * The state machine's answer for an interrupted invocation, the one place a reason becomes an answer: a refused
 * token pauses the run; a wait handed back, a tracker not answering and a spent time budget are all "call
 * again", after the wait the tracker asked for, after a backoff (`wait`: the state machine waits, callAgainAt),
 * or at once (`batch`); a tracker that did not answer too many times in a row fails the run.
 */
export async function answerInterrupt(
  deps: Pick<EngineDeps, 'journal'>,
  run: Run,
  reason: InterruptReason,
): Promise<RunnerAnswer> {
  switch (reason.kind) {
    case 'credentials-refused':
      return pauseForCredentials(deps.journal, run, reason);
    case 'wait-deferred':
      return waitForReset(deps.journal, run, reason.wait);
    case 'tracker-unavailable': {
      const { tracker, status, until } = reason;
      if (until)
        return waitForReset(deps.journal, run, { tracker, reason: 'tracker-unavailable', until, status });
      const why = faultFailureReason(tracker, reason.count, status);
      await failRun(deps.journal, run, RUN_TRANSITIONS.fail, why, `Run failed: ${why}`);
      logger.error('engine failed the run: tracker not answering', {
        tenantId: run.tenantId,
        runId: run.id,
        tracker,
        status,
        count: reason.count,
      });
      return 'failed';
    }
    case 'time-budget':
      return 'batch';
    case 'import-awaited':
      return pauseForImport(deps.journal, run, reason);
    case 'sites-moved':
      return pauseForMovedSites(deps.journal, run, reason);
  }
}

/** When the state machine calls again after the answer `wait` (ISO 8601): the wait the interrupt stands for. */
export function callAgainAt(reason: InterruptReason | undefined): string {
  if (reason?.kind === 'wait-deferred') return reason.wait.until.toISOString();
  if (reason?.kind === 'tracker-unavailable' && reason.until) return reason.until.toISOString();
  return new Date().toISOString();
}

/**
 * A step met a tracker not answering (after its client's retries): the run's streak of such calls grows by one
 * (domain/tracker-faults.ts), and the interrupt stands for it: call again after a backoff, or fail once too many.
 */
async function interruptForFault(
  deps: Pick<EngineDeps, 'store' | 'trackerFaults'>,
  run: Run,
  interrupt: Interrupt,
  fault: TrackerFault,
): Promise<void> {
  const streak = nextFaultStreak(run.trackerFaults, run.cursor);
  await deps.store.runs.recordTrackerFaults(run.tenantId, run.id, streak);
  const waitMs = faultWaitMs(streak.count, deps.trackerFaults ?? TRACKER_FAULT_POLICY);
  logger.warn('tracker not answering: the engine calls again later', {
    tenantId: run.tenantId,
    runId: run.id,
    ...fault,
    count: streak.count,
    waitMs,
  });
  interrupt.abort({
    kind: 'tracker-unavailable',
    ...fault,
    count: streak.count,
    ...(waitMs === undefined ? {} : { until: new Date(Date.now() + waitMs) }),
  });
}

/**
 * Runs one step of the engine (`work`) under the invocation's interrupt: once the interrupt voids the work under
 * way, whatever the step answered or threw, the answer is the interrupt's (answerInterrupt).
 */
export async function interruptible(
  deps: Pick<EngineDeps, 'journal' | 'store' | 'trackerFaults'>,
  ref: { tenantId: string; runId: string },
  interrupt: Interrupt,
  work: () => Promise<RunnerAnswer>,
): Promise<RunnerAnswer> {
  let answer: RunnerAnswer | undefined;
  try {
    answer = await work();
  } catch (err) {
    const fault = interrupt.voided ? undefined : passingFault(err);
    if (!interrupt.voided && !fault) throw err;
    if (fault) await interruptForFault(deps, await readRun(deps, ref), interrupt, fault);
  }
  if (answer !== undefined && !interrupt.voided) return answer;
  const reason = interrupt.reason as InterruptReason;
  return answerInterrupt(deps, await readRun(deps, ref), reason);
}
