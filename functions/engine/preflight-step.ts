/** The state machine's Preflight step: reads the source, plans the run, and checkpoints to the create phase. */
import { chunkEventId, type RunEvent } from '#domain/run-events.ts';
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { Run } from '#domain/runs.ts';
import { PHASES, phaseName } from '#domain/runs.ts';
import type { EngineDeps, Preflight } from '#phase-kit/context.ts';
import { phaseDuration } from '#platform/metrics.ts';
import { Interrupt } from '#trackers/interrupt.ts';
import {
  failRun,
  interruptible,
  MAX_LOG_EVENTS,
  obeyControl,
  type RunnerAnswer,
  readRun,
} from './control.ts';
import { PreflightError, runPreflight } from './phases/preflight.ts';

/**
 * The state machine's Preflight step: reads the source, plans the run and checkpoints to the create phase.
 * A run already past preflight (a resumed run, a continued execution) answers `batch` at once. `interrupt`: as
 * runBatch's.
 */
export async function preflightStep(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  projectKey: string,
  interrupt = new Interrupt(),
): Promise<RunnerAnswer> {
  return interruptible(deps, ref, interrupt, async () => {
    const run = await readRun(deps, ref);
    const stop = await obeyControl(deps, run);
    if (stop) return stop;
    if (run.cursor.phase !== PHASES.preflight) return 'batch';
    return preflightWork(deps, run, projectKey, interrupt);
  });
}

/**
 * Preflight itself, for a RUNNING run at phase 1 (the Preflight step, or RunBatch when a caller skipped it). An
 * error met once the invocation is interrupted is the interrupt's to answer (interruptible), not a failed preflight.
 */
export async function preflightWork(
  deps: EngineDeps,
  run: Run,
  projectKey: string,
  interrupt: Interrupt,
): Promise<RunnerAnswer> {
  let preflight: Preflight;
  const began = Date.now();
  try {
    preflight = await runPreflight(deps, run, projectKey);
  } catch (err) {
    // However preflight reported a refused token or a wait handed back, it is the interrupt's to answer.
    if (!(err instanceof PreflightError) || interrupt.voided) throw err;
    await failRun(
      deps.journal,
      run,
      RUN_TRANSITIONS.failPreflight,
      err.message,
      `Preflight failed: ${err.message}`,
    );
    return 'failed';
  }
  phaseDuration(phaseName(PHASES.preflight), Date.now() - began);
  // Not moved: another invocation checkpointed first, or the run stopped meanwhile; RunBatch reads which.
  await deps.journal.checkpoint(run, {
    from: run.cursor,
    to: { phase: PHASES.create, index: 0 },
    progressPercent: run.progressPercent,
    totalItems: preflight.manifest.length,
    events: [
      ...preflight.warnings.slice(0, MAX_LOG_EVENTS).map((message, n) => ({
        id: chunkEventId(1, 0, n),
        event: { type: 'log', message } as RunEvent,
      })),
    ],
  });
  return 'batch';
}
