/**
 * A run's rollback pass (its preview, or the rollback carrying the preview out) worked by the engine's own phase
 * over a finished run of an engine harness, from its first unit to its counts and list, in fresh invocations:
 * what the run API's pass does on the run's state machine, without the API around it.
 */
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { type RollbackOptions, rollbackPhase } from '../../functions/engine/phases/rollback.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { artifactKeys } from '../../functions/store/artifact-store.ts';
import type { EngineHarness } from './engine-harness.ts';
import { workWholePhase } from './phase-driver.ts';

/** The pass's counts (its summary artifact) and its list's lines (CSV, header left out). */
export interface RollbackPass {
  summary: Record<string, number | boolean>;
  lines: string[];
}

/** The pass worked from its first unit to its list; `resumed`: its first block, then the rest afresh. */
export async function rollBackRun(
  h: EngineHarness,
  tenantId: string,
  runId: string,
  options: RollbackOptions,
  opts: { resumed?: boolean; deps?: EngineDeps } = {},
): Promise<RollbackPass> {
  const deps = opts.deps ?? h.deps();
  const run = await h.app.store.runs.get(tenantId, runId);
  if (!run) throw new Error(`no run ${runId}`);
  await workWholePhase(
    rollbackPhase(options),
    async () => ({ deps, run, preflight: await loadPreflight(deps, run), invocation: new InvocationScope() }),
    opts,
  );
  const summary = JSON.parse(
    (await deps.artifacts.get(artifactKeys.rollbackSummary(run.tenantId, run.id, options.preview))) ?? '{}',
  ) as Record<string, number | boolean>;
  const csv =
    (await deps.artifacts.get(artifactKeys.rollbackList(run.tenantId, run.id, options.preview))) ?? '';
  return { summary, lines: csv.trim().split('\r\n').slice(1) };
}
