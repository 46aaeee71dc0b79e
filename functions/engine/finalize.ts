/**
 * The state machine's Finalize step, once every phase is done: the dry-run preview, the run's reports, then
 * COMPLETED or PARTIAL and the stream's `done`; for a verification, its summary and the run back as it ended.
 */
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { Run } from '#domain/runs.ts';
import { VerificationSummarySchema } from '#domain/verification/index.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { openPreflight } from '#phase-kit/preflight-artifact.ts';
import { nowIso } from '#platform/clock.ts';
import { countRun } from '#platform/metrics.ts';
import { artifactKeys } from '#store/artifacts.ts';
import {
  endVerification,
  lastPhaseOf,
  obeyControl,
  type RunnerAnswer,
  readRun,
  verifiesAtEnd,
} from './control.ts';
import { writePreview, writeRunReports } from './reports.ts';

/** A verification done: its summary (written by the phase's `complete`) told, the run back as it ended. */
async function finishVerification(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  await endVerification(deps.journal, run, await verificationDone(deps, run));
  return 'done';
}

/** The summary of the run's latest finished verification, and its line for the stream. */
async function verificationDone(deps: EngineDeps, run: Run) {
  const saved = await deps.artifacts.get(artifactKeys.verificationSummary(run.tenantId, run.id));
  const summary = saved ? VerificationSummarySchema.parse(JSON.parse(saved)) : undefined;
  const line = summary
    ? `Verification done: ${summary.fullyFaithful} of ${summary.itemsChecked} items fully faithful`
    : 'Verification done';
  return { line, ...(summary ? { verification: summary } : {}) };
}

async function finish(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  if (run.status === 'VERIFYING') return finishVerification(deps, run);
  if (run.options.dryRun) await writePreview(deps, run);
  await writeRunReports(deps, run);
  const move = run.failureCount > 0 ? RUN_TRANSITIONS.completePartial : RUN_TRANSITIONS.complete;
  // A run verified at its end tells the verification's summary with its end.
  const told = verifiesAtEnd(run) ? await verificationDone(deps, run) : {};
  // The journal tells the status and the stream's `done` with the run's counters.
  if (await deps.journal.move(run, move, { ...told, fields: { finishedAt: nowIso(), progressPercent: 100 } }))
    countRun(move.to);
  return 'done';
}

/**
 * The state machine's Finalize step, once every phase is done: the dry-run preview, the run's reports, then
 * COMPLETED (or PARTIAL when items failed) and the stream's `done`. A pause or cancel that came in meanwhile
 * still wins; a run that already ended answers how it ended.
 */
export async function finalizeStep(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
): Promise<RunnerAnswer> {
  const run = await readRun(deps, ref);
  const stop = await obeyControl(deps, run);
  if (stop) return stop;
  // The header only: the finalize step never reads the manifest (the reports read it a slice at a time).
  const { header } = await openPreflight(deps.artifacts, { tenantId: run.tenantId, runId: run.id });
  // Not there yet: back to the phases (the verification too, for a run verified at its end). A verification's
  // phase answers Finalize once its audit is written.
  const last = lastPhaseOf(header) + (verifiesAtEnd(run) ? 1 : 0);
  if (run.status !== 'VERIFYING' && run.cursor.phase <= last) return 'batch';
  return finish(deps, run);
}
