/**
 * Which work items a run takes. FULL and SAMPLE: the whole scope (area and type filters). INCREMENTAL: the
 * items changed since the last successful run of the project began, plus every item of the scope that is not
 * in Jira yet (new, or its creation failed) and every item that failed in that run, so nothing an earlier run
 * left behind is forgotten. Without an earlier successful run, an incremental run takes the whole scope.
 * Items deleted in Azure DevOps or moved out of the scope since are left in Jira as they are.
 */
import type { Run } from '#domain/runs.ts';
import type { EngineDeps } from '#phase-kit/context.ts';

/**
 * Taken off the earlier run's start: our clock and Azure DevOps' may differ a little. Items changed just
 * before that run are then taken again, which costs an update and loses nothing.
 */
export const CLOCK_SKEW_MS = 5 * 60_000;

export async function idsToMigrate(
  deps: EngineDeps,
  run: Run,
): Promise<{ ids: number[]; warnings: string[]; inJira: ReadonlyMap<number, string> }> {
  const scope = { areaPath: run.options.areaFilter, types: run.options.typeFilter };
  const all = await deps.source.idsInScope(scope);
  if (run.type !== 'INCREMENTAL') return { ids: all, warnings: [], inJira: new Map() };

  const earlier = await deps.store.runs.listByProject(run.tenantId, run.projectId, {
    statuses: ['COMPLETED', 'PARTIAL'],
  });
  const baseline = earlier.find((r) => r.id !== run.id && !r.options.dryRun && r.startedAt);
  if (!baseline?.startedAt)
    return {
      ids: all,
      warnings: ['No earlier successful run of this project: this incremental run takes the whole scope'],
      inJira: new Map(),
    };
  const since = new Date(Date.parse(baseline.startedAt) - CLOCK_SKEW_MS).toISOString();
  const [changed, known, failures] = await Promise.all([
    deps.source.idsInScope({ ...scope, changedSince: since }),
    deps.store.idMap.getMany(run.tenantId, run.projectId, all),
    deps.store.runFailures.list(run.tenantId, run.projectId, baseline.id),
  ]);
  const failed = new Set(failures.map((f) => f.sourceId));
  const take = new Set(changed);
  let missing = 0;
  let retried = 0;
  for (const id of all) {
    if (!known.has(id)) {
      if (!take.has(id)) missing++;
      take.add(id);
    } else if (failed.has(id) && !take.has(id)) {
      retried++;
      take.add(id);
    }
  }
  return {
    ids: all.filter((id) => take.has(id)),
    // The items in Jira already, with their source types: the items taken keep such parents (phase 2 or 3
    // sets them), and the parents' types join the type mapping.
    inJira: new Map([...known.values()].map((e) => [e.sourceId, e.sourceType])),
    warnings: [
      `Incremental since ${since} (the start of run ${baseline.id}, less ${CLOCK_SKEW_MS / 60_000} minutes): ` +
        `${changed.length} changed, ${missing} not yet in Jira, ${retried} failed in that run`,
    ],
  };
}
