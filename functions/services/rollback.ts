/**
 * The rollback of a run, as the run API offers it: a preview (reads only) or the rollback carrying a finished
 * preview out, each on the run's own state machine as the phase after its last (engine/phases/rollback.ts), so
 * the runner's pool, checkpoints, pacing, waits and pause/cancel apply; then the counts and the list. Which run
 * may be rolled back, and when, is the domain's answer (#domain/rollback/request.ts).
 */
import { nextGeneration, type Orchestrator } from '#domain/orchestration.ts';
import { type RollbackReport, RollbackReportSchema } from '#domain/rollback/plan.ts';
import {
  type RollbackRefusal,
  type RollbackRequest,
  rollbackRefusal,
  rollbackView,
} from '#domain/rollback/request.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import { isRollingBack, RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { RollbackFrom, Run, RunRollback } from '#domain/runs.ts';
import { afterRunPhaseOf, endRollback } from '#engine/control.ts';
import { openPreflight } from '#phase-kit/preflight-artifact.ts';
import { nowIso } from '#platform/clock.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { type ArtifactStore, artifactKeys } from '#store/artifacts.ts';
import type { Store } from '#store/index.ts';
import { findRun } from './migrations.ts';

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

function refused(run: Run, refusal: RollbackRefusal): Error {
  switch (refusal.kind) {
    case 'not-finished':
      return errors.rollbackNotFinished(run.id, run.status);
    case 'nothing':
      return errors.nothingToRollBack(run.id, refusal.why);
    case 'newer-run':
      return errors.newerRunNotRolledBack(run.id, refusal.runId);
    case 'not-confirmed':
      return errors.rollbackNotConfirmed(run.id);
    case 'preview-required':
      return errors.rollbackPreviewRequired(run.id, refusal.why);
  }
}

/**
 * Starts a rollback's pass of a finished run: its preview (the default: reads Jira, writes nothing there), or,
 * confirmed, the rollback carrying out the run's last finished preview. The run moves to ROLLING_BACK with its
 * cursor at a phase after its last no earlier pass has used, and the run's next execution works it. The same
 * request while its pass is under way answers the run as it stands.
 */
export async function startRollback(
  ports: { store: Store; journal: RunJournal; orch: Orchestrator; artifacts: ArtifactStore },
  tenantId: string,
  runId: string,
  request: RollbackRequest,
): Promise<Run> {
  const { store, journal, orch, artifacts } = ports;
  const run = await findRun(store, tenantId, runId);
  if (isRollingBack(run.status)) {
    if (run.rollback?.preview === request.preview) return run;
    throw errors.rollbackNotFinished(run.id, run.status);
  }
  // The project's later runs (the list is newest first): a later one that wrote to Jira goes back first.
  const later = (await store.runs.listByProject(tenantId, run.projectId)).filter(
    (r) => r.id !== run.id && r.createdAt > run.createdAt,
  );
  const refusal = rollbackRefusal(run, later, request);
  if (refusal) throw refused(run, refusal);

  const { header } = await openPreflight(artifacts, { tenantId, runId: run.id });
  const phase = afterRunPhaseOf(header, run);
  const cursor = { phase, index: 0 };
  const previewed = run.rollback?.previewed ?? null;
  const rollback: RunRollback = request.preview
    ? {
        preview: true,
        includeEdited: request.includeEdited ?? false,
        endedAs: run.status as RollbackFrom,
        previewed: null,
      }
    : {
        preview: false,
        includeEdited: previewed?.includeEdited ?? false,
        endedAs: run.status as RollbackFrom,
        previewed,
      };
  // Told at the pass's place: after everything the run (and any earlier pass) told.
  const moved = await journal.move({ ...run, cursor }, RUN_TRANSITIONS.rollBack, {
    fields: {
      control: 'run',
      pauseReason: null,
      cursor,
      currentPhase: phase,
      phaseStartedAt: nowIso(),
      rollback,
    },
    line: request.preview
      ? `Rollback preview started: each issue the run created read from Jira, nothing written${rollback.includeEdited ? ' (issues edited after the run included)' : ''}`
      : `Rollback started: the preview of ${previewed?.at} carried out, issues deleted from Jira`,
  });
  // It moved meanwhile (another request): answer as for its new status.
  if (!moved) return startRollback(ports, tenantId, runId, request);
  const rolling: Run = { ...run, status: 'ROLLING_BACK', control: 'run', cursor, rollback };
  try {
    // As a resume: the run's start was generation 0, and each execution that worked it is recorded.
    await orch.start({ tenantId, runId: run.id, generation: Math.max(1, nextGeneration(run)) });
  } catch (err) {
    logger.error('rollback dispatch failed', { tenantId, runId: run.id, errorMessage: errorText(err) });
    await endRollback(journal, rolling, { line: 'Rollback could not be started' });
    throw errors.engineDispatchFailed();
  }
  logger.info('rollback started', { tenantId, runId: run.id, preview: request.preview });
  return rolling;
}

async function storedReport(
  artifacts: ArtifactStore,
  run: Pick<Run, 'tenantId' | 'id'>,
  preview: boolean,
): Promise<RollbackReport | undefined> {
  const body = await artifacts.get(artifactKeys.rollbackSummary(run.tenantId, run.id, preview));
  return body === undefined ? undefined : RollbackReportSchema.parse(JSON.parse(body));
}

/** The run's rollback as it stands: the pass under way, the last finished preview's counts, the rollback's. */
export async function rollbackStatus(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<ReturnType<typeof rollbackView>> {
  const run = await findRun(store, tenantId, runId);
  const [preview, done] = await Promise.all([
    run.rollback?.previewed ? storedReport(artifacts, run, true) : undefined,
    run.status === 'ROLLED_BACK' ? storedReport(artifacts, run, false) : undefined,
  ]);
  return rollbackView(run, preview, done);
}

/**
 * The list (CSV: `source_id, jira_key, would|did, reason`): the last finished preview's (`preview`), or the
 * rollback's once the run is ROLLED_BACK (`rollback`).
 */
export async function rollbackList(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
  of: 'preview' | 'rollback',
): Promise<string> {
  const run = await findRun(store, tenantId, runId);
  const preview = of === 'preview';
  const ready = preview ? Boolean(run.rollback?.previewed) : run.status === 'ROLLED_BACK';
  const body = ready ? await artifacts.get(artifactKeys.rollbackList(tenantId, run.id, preview)) : undefined;
  if (body === undefined)
    throw errors.rollbackNotFound(run.id, preview ? 'finished rollback preview' : 'finished rollback');
  return body;
}
