/**
 * Drives a phase as the runner does, one chunk (at most 50 units) at a time: its unit worker opened, the chunk's
 * units worked through the engine's own pool (engine/unit-pool.ts), the worker closed once they settled. Tests
 * that look at a phase chunk by chunk use it instead of a second, test-only way into the phase.
 */
import { CHUNK_SIZE } from '../../functions/domain/runs.ts';
import { POOL_REACH } from '../../functions/engine/runner.ts';
import { workUnitPool } from '../../functions/engine/unit-pool.ts';
import {
  type ChunkOutcome,
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type UnitOutcome,
} from '../../functions/phase-kit/context.ts';
import { addOutcome, blockUnits } from '../../functions/phase-kit/toolkit.ts';

/** The units [index, index + 50) of `module`, their outcomes added in unit order; throws what a unit threw. */
export async function workChunk(
  module: PhaseModule,
  ctx: PhaseContext,
  index: number,
): Promise<ChunkOutcome> {
  const total = Math.min(index + CHUNK_SIZE, await module.units(ctx));
  const outcome: ChunkOutcome = { processed: Math.max(0, total - index), ...emptyOutcome() };
  const worker = await module.open(ctx);
  try {
    await workUnitPool<UnitOutcome>({
      from: index,
      total,
      window: CHUNK_SIZE,
      reach: POOL_REACH,
      // One move at the chunk's end: its outcome is the units' in unit order.
      minMove: CHUNK_SIZE,
      minMoveFull: CHUNK_SIZE,
      work: (i, stopped) => worker.work(i, stopped),
      signal: new AbortController().signal,
      move: async ({ units }) => {
        for (const u of units) addOutcome(outcome, u.result);
        return true;
      },
    });
  } finally {
    await worker.close?.();
  }
  return outcome;
}

/**
 * A test double's phase written chunk by chunk (`chunk(ctx, index)` works the units [index, index + 50)), as a
 * phase of the one shape: its worker works a block of 50 units at a time (toolkit `blockUnits`, as the create phase
 * does), so the runner's pool moves the checkpoint over whole chunks.
 */
export function chunkedPhase(phase: {
  units: (ctx: PhaseContext) => number | Promise<number>;
  chunk: (ctx: PhaseContext, index: number) => Promise<ChunkOutcome>;
}): PhaseModule {
  return {
    units: phase.units,
    open: async (ctx) => ({ work: blockUnits(await phase.units(ctx), (from) => phase.chunk(ctx, from)) }),
  };
}
