/**
 * The state machine's Finalize step, once every phase is done: the dry-run preview, the run's reports, then
 * COMPLETED or PARTIAL and the stream's `done`; for a verification, its summary and the run back as it ended; for
 * a rollback's preview, its counts and the run back as it ended; for a rollback, its counts and ROLLED_BACK.
 */
import { RollbackReportSchema, rollbackDoneLine } from '#domain/rollback/plan.ts';
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { Run } from '#domain/runs.ts';
import { VerificationSummarySchema } from '#domain/verification/index.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { openPreflight } from '#phase-kit/preflight-artifact.ts';
import { nowIso } from '#platform/clock.ts';
import { countRun } from '#platform/metrics.ts';
import { artifactKeys } from '#store/artifacts.ts';
import {
  endRollback,
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

/**
 * A rollback's pass done (its list and counts written by the phase's `complete`): a preview takes the run back as
 * it ended, recorded as the preview a rollback carries out; a rollback leaves it ROLLED_BACK. Both tell the counts.
 */
async function finishRollback(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  const preview = run.rollback?.preview ?? true;
  const saved = await deps.artifacts.get(artifactKeys.rollbackSummary(run.tenantId, run.id, preview));
  if (!saved) throw new Error(`rollback of run ${run.id}: its pass ended without its counts`);
  const report = RollbackReportSchema.parse(JSON.parse(saved));
  const line = rollbackDoneLine(report);
  if (preview) {
    const previewed = { includeEdited: run.rollback?.includeEdited ?? false, at: nowIso() };
    await endRollback(deps.journal, run, { line, report, previewed });
    return 'done';
  }
  const next = run.cursor.phase + 1;
  await deps.journal.move(run, RUN_TRANSITIONS.rolledBack, {
    line,
    rollback: report,
    fields: { control: 'run', cursor: { phase: next, index: 0 }, currentPhase: next },
  });
  return 'done';
}

async function finish(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  if (run.status === 'VERIFYING') return finishVerification(deps, run);
  if (run.status === 'ROLLING_BACK') return finishRollback(deps, run);
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
  // Not there yet: back to the phases (the verification too, for a run verified at its end). A verification's or
  // a rollback's phase answers Finalize once its files are written.
  const after = run.status === 'VERIFYING' || run.status === 'ROLLING_BACK';
  const last = lastPhaseOf(header) + (verifiesAtEnd(run) ? 1 : 0);
  if (!after && run.cursor.phase <= last) return 'batch';
  return finish(deps, run);
}
