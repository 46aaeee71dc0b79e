/**
 * The items a run delivered by Jira's importer writes by REST after its import, kept as a run artifact: those it
 * creates by REST (import.ts `createOutsideParents`: sub-tasks whose parent was in Jira before the run, which no
 * import file can hold), and, in an INCREMENTAL run, those an earlier run put in Jira, which it updates by REST
 * (import.ts `knownUnits`). They are the units of the REST phases that such a run works after its import for
 * them alone (transitions, comments), the items its files carried having their status and comments from the file.
 */
import type { PhaseContext } from '#phase-kit/context.ts';
import { runArtifactKey } from '#phase-kit/toolkit.ts';

const REST_ARTIFACT = 'import-outside.json';

/** Whether the run delivers through Jira's importer. */
export const deliveredByImport = (ctx: Pick<PhaseContext, 'preflight'>): boolean =>
  ctx.preflight.delivery?.deliveryMode === 'jira-import';

/** Records the ids the run writes by REST after its import (created, or updated), in manifest order. */
export async function recordRestUnits(ctx: PhaseContext, ids: readonly number[]): Promise<void> {
  await ctx.deps.artifacts.put(runArtifactKey(ctx.run, REST_ARTIFACT), JSON.stringify(ids));
}

/** The ids the run writes by REST after its import; none in a dry run or before the import phase recorded them. */
export async function restUnits(ctx: PhaseContext): Promise<number[]> {
  if (ctx.run.options.dryRun) return [];
  const text = await ctx.deps.artifacts.get(runArtifactKey(ctx.run, REST_ARTIFACT));
  return text === undefined ? [] : (JSON.parse(text) as number[]);
}
