/**
 * Drives a phase as the runner does, through the engine's own pool (engine/unit-pool.ts): one chunk (at most 50
 * units) with a worker of its own (`workChunk`), or every chunk from a checkpoint with one worker, as one pass of
 * the runner (`workChunks`). Tests that look at a phase chunk by chunk use them instead of a second, test-only way
 * into the phase.
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
  await workRange(module, ctx, index, total, async (chunk) => addOutcome(outcome, chunk));
  return outcome;
}

/**
 * Works `module`'s units from `index` to its last with one unit worker, as one pass of the runner does, a chunk
 * (50 units) at a time: `chunkDone` gets each chunk's outcome (its units in unit order) once all of them settled,
 * before the next chunk starts. Throws what a unit threw (the worker closed); the chunks before it were handed
 * over, the one under way is lost, as a crashed invocation's.
 */
export async function workChunks(
  module: PhaseModule,
  ctx: PhaseContext,
  index: number,
  chunkDone: (outcome: ChunkOutcome) => Promise<void>,
): Promise<void> {
  await workRange(module, ctx, index, await module.units(ctx), chunkDone);
}

/** The units [from, to) through the engine's pool with one worker, a move (and `chunkDone`) per 50 units. */
async function workRange(
  module: PhaseModule,
  ctx: PhaseContext,
  from: number,
  to: number,
  chunkDone: (outcome: ChunkOutcome) => Promise<void>,
): Promise<void> {
  const worker = await module.open(ctx);
  try {
    await workUnitPool<UnitOutcome>({
      from,
      total: to,
      window: CHUNK_SIZE,
      reach: POOL_REACH,
      // One move a chunk, once all its units settled (the window holds no unit past it until then).
      minMove: CHUNK_SIZE,
      minMoveFull: CHUNK_SIZE,
      work: (i, stopped) => worker.work(i, stopped),
      signal: new AbortController().signal,
      move: async ({ units }) => {
        const outcome: ChunkOutcome = { processed: units.length, ...emptyOutcome() };
        for (const u of units) addOutcome(outcome, u.result);
        // As the runner's move: the items the units recorded as done (their id map entries) written beside it.
        if (outcome.marks?.length)
          await ctx.deps.store.idMap.putMany(ctx.run.tenantId, ctx.run.projectId, outcome.marks);
        await chunkDone(outcome);
        return true;
      },
    });
  } finally {
    await worker.close?.();
  }
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

/**
 * A phase worked over a finished run from its first unit to its `complete`, in fresh invocations (`context()`
 * makes each: the run's preflight loaded again, a new invocation scope); `resumed`: its first chunk in one
 * invocation, the rest in another from the checkpoint after it, as after a crash.
 */
export async function workWholePhase(
  phase: PhaseModule,
  context: () => Promise<PhaseContext>,
  opts: { resumed?: boolean } = {},
): Promise<void> {
  let ctx = await context();
  if (opts.resumed) {
    const first = await workChunk(phase, ctx, 0);
    if (first.processed !== CHUNK_SIZE)
      throw new Error(`the first chunk worked ${first.processed} units, not ${CHUNK_SIZE}`);
    ctx = await context();
  }
  await workChunks(phase, ctx, opts.resumed ? CHUNK_SIZE : 0, async () => {});
  await phase.complete?.(ctx);
}
