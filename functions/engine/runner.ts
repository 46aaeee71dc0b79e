/**
 * The generic runner: works the run's current phase from its checkpoint, a chunk of at most 50 at a time,
 * reading the pause/cancel flag before every chunk, until the time budget runs low. It answers what comes
 * next; the state machine (or a test) calls it again.
 */
import { CHUNK_SIZE, LAST_CORE_PHASE, PHASES, progressPercent, type Run } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import type { EngineDeps, PhaseContext, PhaseModule, Preflight } from './context.ts';
import { createChunk } from './phases/create.ts';
import { loadPreflight, PreflightError, runPreflight } from './phases/preflight.ts';

export type RunnerAnswer = 'batch' | 'phase-done' | 'paused' | 'cancelled' | 'done' | 'failed';

/** A chunk takes a few seconds at worst; below this budget, stop at the checkpoint and let the next call go on. */
export const MIN_BUDGET_MS = 20_000;

/** The phases implemented so far; a phase without a module is passed over (the engine issue is in progress). */
const PHASE_MODULES: Partial<Record<number, PhaseModule>> = {
  [PHASES.create]: { units: (ctx) => ctx.preflight.manifest.length, chunk: createChunk },
};

async function finish(deps: EngineDeps, run: Run): Promise<RunnerAnswer> {
  const status = run.failureCount > 0 ? 'PARTIAL' : 'COMPLETED';
  await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], status, {
    finishedAt: nowIso(),
    progressPercent: 100,
  });
  return 'done';
}

export async function runBatch(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  remainingMs: () => number,
  projectKey: string,
): Promise<RunnerAnswer> {
  let preflight: Preflight | undefined;
  for (;;) {
    const run = await deps.store.runs.get(ref.tenantId, ref.runId);
    if (!run) throw new Error(`run ${ref.runId} not found`);
    if (run.control === 'cancel') {
      await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING', 'PAUSED', 'PENDING'], 'CANCELLED', {
        finishedAt: nowIso(),
      });
      return 'cancelled';
    }
    if (run.control === 'pause') {
      await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], 'PAUSED');
      return 'paused';
    }
    if (run.status !== 'RUNNING')
      return run.status === 'PAUSED' ? 'paused' : run.status === 'CANCELLED' ? 'cancelled' : 'done';
    if (remainingMs() < MIN_BUDGET_MS) return 'batch';

    const { phase, index } = run.cursor;
    if (phase === PHASES.preflight) {
      try {
        preflight = await runPreflight(deps, run, projectKey);
      } catch (err) {
        if (!(err instanceof PreflightError)) throw err;
        await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], 'FAILED', {
          finishedAt: nowIso(),
          failureReason: err.message,
        });
        return 'failed';
      }
      const moved = await deps.store.runs.checkpoint(run.tenantId, run.id, {
        from: run.cursor,
        to: { phase: PHASES.create, index: 0 },
        progressPercent: run.progressPercent,
        totalItems: preflight.manifest.length,
      });
      if (!moved) return 'batch';
      return 'phase-done';
    }
    if (phase > LAST_CORE_PHASE) return finish(deps, run);

    const module = PHASE_MODULES[phase];
    preflight ??= await loadPreflight(deps, run);
    const ctx: PhaseContext = { deps, run, preflight };
    const total = module ? await module.units(ctx) : 0;
    if (!module || index >= total) {
      await deps.store.runs.checkpoint(run.tenantId, run.id, {
        from: run.cursor,
        to: { phase: phase + 1, index: 0 },
        progressPercent: progressPercent(run.progressPercent, phase, total, total, LAST_CORE_PHASE),
      });
      return 'phase-done';
    }
    const outcome = await module.chunk(ctx, index);
    deps.crash?.('before-checkpoint');
    const to = { phase, index: index + outcome.processed };
    const moved = await deps.store.runs.checkpoint(run.tenantId, run.id, {
      from: run.cursor,
      to,
      success: outcome.success,
      failure: outcome.failure,
      skipped: outcome.skipped,
      progressPercent: progressPercent(run.progressPercent, phase, to.index, total, LAST_CORE_PHASE),
    });
    for (const line of outcome.log) logger.debug('item', { tenantId: run.tenantId, runId: run.id, line });
    if (!moved) return 'batch'; // another invocation advanced this chunk first; it owns the run now
    if (outcome.processed === 0 || outcome.processed > CHUNK_SIZE)
      throw new Error(`phase ${phase} processed ${outcome.processed} units`);
  }
}
