/**
 * The state machine's Finalize step, once every phase is done: the dry-run preview, the run's reports, then
 * COMPLETED or PARTIAL and the stream's `done`.
 */
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { Run } from '#domain/runs.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { nowIso } from '#platform/clock.ts';
import { countRun } from '#platform/metrics.ts';
import { artifactKeys } from '#store/artifacts.ts';
import { lastPhaseOf, obeyControl, type RunnerAnswer, readRun } from './control.ts';
import { loadPreflight } from './phases/preflight.ts';
import { writeRunReports } from './reports.ts';

/**
 * The dry-run preview: what a real run would do, and every warning, so the admin can fix the mapping before
 * anything is written to Jira.
 */
async function writePreview(deps: EngineDeps, run: Run): Promise<void> {
  const preflight = await loadPreflight(deps, run);
  const countsPerType: Record<string, number> = {};
  for (const m of preflight.manifest) countsPerType[m.type] = (countsPerType[m.type] ?? 0) + 1;
  const known = await deps.store.idMap.getMany(
    run.tenantId,
    run.projectId,
    preflight.manifest.map((m) => m.id),
  );
  const preview = {
    runId: run.id,
    type: run.type,
    totalItems: preflight.manifest.length,
    countsPerType,
    wouldCreate: preflight.manifest.length - known.size,
    alreadyInJira: known.size,
    wouldUpdate: run.type === 'INCREMENTAL' ? known.size : 0,
    mapping: { types: Object.fromEntries(Object.entries(preflight.typeMap).map(([k, v]) => [k, v.name])) },
    unmappedUsers: preflight.unmappedUsers,
    // The phases' warnings as their outcomes carried them, kept with each checkpoint move (never read back from
    // log lines, whose text a work item's state names or file names could make say "warning:").
    warnings: [
      ...preflight.warnings,
      ...(await deps.store.runs.warnings(run.tenantId, run.projectId, run.id)),
    ],
    // Phase 1's setup: what a real run would create in Jira, and what it would reuse.
    sprints: preflight.sprints.map((s) => ({
      name: s.name,
      iterationPath: s.iterationPath,
      startDate: s.startDate,
      endDate: s.endDate,
      state: s.state,
      action: s.created ? 'create' : 'reuse',
    })),
    components: preflight.components.map((c) => ({
      name: c.name,
      areaPaths: c.areaPaths,
      action: c.created ? 'create' : 'reuse',
    })),
  };
  await deps.artifacts.put(artifactKeys.preview(run.tenantId, run.id), JSON.stringify(preview, null, 2));
}

async function finish(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  if (run.options.dryRun) await writePreview(deps, run);
  await writeRunReports(deps, run);
  const move = run.failureCount > 0 ? RUN_TRANSITIONS.completePartial : RUN_TRANSITIONS.complete;
  // The journal tells the status and the stream's `done` with the run's counters.
  if (await deps.journal.move(run, move, { fields: { finishedAt: nowIso(), progressPercent: 100 } }))
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
  const preflight = await loadPreflight(deps, run);
  if (run.cursor.phase <= lastPhaseOf(preflight)) return 'batch'; // not there yet: back to the phases
  return finish(deps, run);
}
