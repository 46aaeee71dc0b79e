/** The state machine's Preflight step: reads the source, plans the run, and checkpoints to the create phase. */
import { chunkEventId, type RunEvent } from '#domain/run-events.ts';
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import { PHASES, phaseName } from '#domain/runs.ts';
import type { EngineDeps, Preflight } from '#phase-kit/context.ts';
import { phaseDuration } from '#platform/metrics.ts';
import {
  credentialsRefusal,
  failRun,
  MAX_LOG_EVENTS,
  obeyControl,
  pauseForCredentials,
  type RunnerAnswer,
  readRun,
  throwIfWaitDeferred,
} from './control.ts';
import { PreflightError, runPreflight } from './phases/preflight.ts';

/**
 * The state machine's Preflight step: reads the source, plans the run and checkpoints to the create phase.
 * A run already past preflight (a resumed run, a continued execution) answers `batch` at once.
 */
export async function preflightStep(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  projectKey: string,
): Promise<RunnerAnswer> {
  const run = await readRun(deps, ref);
  const stop = await obeyControl(deps, run);
  if (stop) return stop;
  if (run.cursor.phase !== PHASES.preflight) return 'batch';
  let preflight: Preflight;
  const began = Date.now();
  try {
    preflight = await runPreflight(deps, run, projectKey);
  } catch (err) {
    const refused = credentialsRefusal(deps, err);
    if (refused) return pauseForCredentials(deps.journal, run, refused);
    // A long wait handed back by a tracker (however preflight reported it) is the handler's to answer.
    throwIfWaitDeferred(deps);
    if (!(err instanceof PreflightError)) throw err;
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
