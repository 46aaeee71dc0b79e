/**
 * The generic runner: works the run's current phase from its checkpoint, a chunk of at most 50 at a time,
 * reading the pause/cancel flag before every chunk, until the time budget runs low. It answers what comes
 * next; the state machine (or a test) calls it again. A chunk's events (one log line per unit, then progress)
 * are written in the checkpoint's own transaction: a retried chunk cannot log twice, a crash cannot lose them.
 * This module is the RunBatch step; the others live beside it: Preflight (preflight-step.ts), Finalize
 * (finalize.ts), and the run's control shared by all of them (control.ts).
 */
import { chunkEventId, type RunEvent } from '#domain/run-events.ts';
import { CHUNK_SIZE, LAST_CORE_PHASE, PHASES, phaseName, progressPercent, type Run } from '#domain/runs.ts';
import {
  type ChunkOutcome,
  type EngineDeps,
  type PhaseContext,
  type PhaseModule,
  type Preflight,
  SimulatedCrash,
} from '#phase-kit/context.ts';
import { logger } from '#platform/logger.ts';
import { countItems, phaseDuration } from '#platform/metrics.ts';
import {
  credentialsRefusal,
  deferredWait,
  lastPhaseOf,
  MAX_LOG_EVENTS,
  obeyControl,
  pauseForCredentials,
  type RunnerAnswer,
  readRun,
  throwIfWaitDeferred,
} from './control.ts';
import { attachmentsPhase } from './phases/attachments.ts';
import { commentsPhase } from './phases/comments.ts';
import { createChunk } from './phases/create.ts';
import { hierarchyPhase } from './phases/hierarchy.ts';
import { linksPhase } from './phases/links.ts';
import { loadPreflight } from './phases/preflight.ts';
import { completeSprints } from './phases/sprints.ts';
import { transitionsPhase } from './phases/transitions.ts';
import { failPluginChunk, type PluginPhase, resolvePluginPhase } from './plugin-phase.ts';
import { preflightStep } from './preflight-step.ts';
import { tellWaits } from './throttle-notices.ts';

export type { RunnerAnswer } from './control.ts';
export { failRun, pauseForCredentials } from './control.ts';
export { finalizeStep } from './finalize.ts';
export { preflightStep } from './preflight-step.ts';

/** A chunk takes a few seconds at worst; below this budget, stop at the checkpoint and let the next call go on. */
export const MIN_BUDGET_MS = 20_000;

/** The core phases 2-7 (phase 1, preflight, is its own step: preflight-step.ts); plugins follow as 8+. */
const PHASE_MODULES: Partial<Record<number, PhaseModule>> = {
  [PHASES.create]: {
    units: (ctx) => ctx.preflight.manifest.length,
    chunk: createChunk,
    complete: completeSprints,
  },
  [PHASES.hierarchy]: hierarchyPhase,
  [PHASES.links]: linksPhase,
  [PHASES.attachments]: attachmentsPhase,
  [PHASES.transitions]: transitionsPhase,
  [PHASES.comments]: commentsPhase,
};

/** The same dependencies, noting every item a phase records as failed (the runner counts items, not units). */
function watchingFailures(deps: EngineDeps, failed: Set<number>): EngineDeps {
  const runFailures = deps.store.runFailures;
  const watched: typeof runFailures = Object.create(runFailures);
  watched.record = async (tenantId, projectId, runId, failure) => {
    // Once a tracker connection is refused, what fails is the connection, not the item: the run pauses and
    // the chunk is worked again after the reconnect.
    if (deps.credentialsRefused?.() || deps.waitDeferred?.()) return false;
    failed.add(failure.sourceId);
    return runFailures.record(tenantId, projectId, runId, failure);
  };
  return { ...deps, store: { ...deps.store, runFailures: watched } };
}

/** The run's plugin phase at `phase` (its configuration opened once per invocation); undefined: not a plugin's. */
async function pluginPhase(
  deps: EngineDeps,
  run: Run,
  preflight: Preflight,
  phase: number,
  opened: Map<string, PluginPhase | undefined>,
): Promise<PluginPhase | undefined> {
  const key = phase > LAST_CORE_PHASE ? preflight.plugins[phase - LAST_CORE_PHASE - 1] : undefined;
  if (!key) return undefined;
  if (!opened.has(key)) opened.set(key, await resolvePluginPhase(deps, run.tenantId, key));
  return opened.get(key);
}

/** The chunk's events: one log line per unit (any overflow folded into the last), then progress. */
function chunkEvents(
  phase: number,
  index: number,
  lines: string[],
  progress: RunEvent,
  maxLines = MAX_LOG_EVENTS,
): { id: string; event: RunEvent }[] {
  const kept =
    lines.length > maxLines ? [...lines.slice(0, maxLines - 1), lines.slice(maxLines - 1).join('\n')] : lines;
  const events: { id: string; event: RunEvent }[] = kept.map((message, n) => ({
    id: chunkEventId(phase, index, n),
    event: { type: 'log', message },
  }));
  events.push({ id: chunkEventId(phase, index, kept.length), event: progress });
  return events;
}

/**
 * The state machine's RunBatch step: works the run's phases from its checkpoint, chunk by chunk, until the
 * time budget runs low (`batch`), a phase ends (`phase-done`), every phase is done (`finalize`) or the run
 * stops.
 */
export async function runBatch(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  remainingMs: () => number,
  projectKey: string,
): Promise<RunnerAnswer> {
  // A long wait of a tracker (Jira's hourly quota) is told on the run's stream while this invocation works.
  const untell = tellWaits(deps, await readRun(deps, ref));
  try {
    return await workPhases(deps, ref, remainingMs, projectKey);
  } catch (err) {
    // A refusal outside a chunk (a phase's preparation, its completion, a plugin's set-up) pauses the same way.
    const refused = credentialsRefusal(deps, err);
    if (!refused) throw err;
    return pauseForCredentials(deps.store, await readRun(deps, ref), refused);
  } finally {
    untell();
  }
}

async function workPhases(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  remainingMs: () => number,
  projectKey: string,
): Promise<RunnerAnswer> {
  let preflight: Preflight | undefined;
  const openedPlugins = new Map<string, PluginPhase | undefined>();
  // Speed is units per minute over this invocation (the stream documents the unit).
  const started = Date.now();
  let worked = 0;
  for (;;) {
    const run = await readRun(deps, ref);
    const stop = await obeyControl(deps, run);
    if (stop) return stop;
    if (remainingMs() < MIN_BUDGET_MS) return 'batch';

    const { phase, index } = run.cursor;
    // Preflight is the state machine's own step; a caller that skipped it gets it done here all the same.
    if (phase === PHASES.preflight) {
      const answer = await preflightStep(deps, ref, projectKey);
      return answer === 'ready' ? 'phase-done' : answer;
    }
    preflight ??= await loadPreflight(deps, run);
    const lastPhase = lastPhaseOf(preflight);
    if (phase > lastPhase) return 'finalize';

    const plugin = await pluginPhase(deps, run, preflight, phase, openedPlugins);
    const module = phase <= LAST_CORE_PHASE ? PHASE_MODULES[phase] : plugin?.module;
    const failedItems = new Set<number>();
    const ctx: PhaseContext = { deps: watchingFailures(deps, failedItems), run, preflight };
    if (module?.prepare && !(await module.prepare(ctx, remainingMs))) return 'batch';
    const total = module ? await module.units(ctx) : 0;
    if (!module || index >= total) {
      if (module?.complete && !run.options.dryRun) await module.complete(ctx);
      const ended = await deps.store.runs.checkpoint(run.tenantId, run.id, {
        from: run.cursor,
        to: { phase: phase + 1, index: 0 },
        progressPercent: progressPercent(run.progressPercent, phase, total, total, lastPhase),
      });
      // The phase's wall time, from the checkpoint that entered it (pauses included).
      if (ended && run.phaseStartedAt)
        phaseDuration(phaseName(phase), Date.now() - Date.parse(run.phaseStartedAt));
      return 'phase-done';
    }
    let outcome: ChunkOutcome;
    try {
      outcome = await module.chunk(ctx, index);
    } catch (err) {
      const refused = credentialsRefusal(deps, err);
      if (refused) return pauseForCredentials(deps.store, run, refused);
      // A failing plugin fails its chunk's items, never the run (also when its service is out of reach after the
      // client's retries: a core phase would fail the run there); a crash is still a crash (the chunk again).
      if (!plugin || err instanceof SimulatedCrash || deferredWait(deps, err)) throw err;
      outcome = await failPluginChunk(ctx, plugin, index, total, err);
    }
    // A phase that caught the refusal item by item still worked nothing: not checkpointed.
    const refused = credentialsRefusal(deps);
    if (refused) return pauseForCredentials(deps.store, run, refused);
    // Nor one whose tracker handed back a long wait: the handler answers `wait` (control.ts waitForReset).
    throwIfWaitDeferred(deps);
    deps.crash?.('before-checkpoint');
    if (outcome.processed === 0 || outcome.processed > CHUNK_SIZE)
      throw new Error(`phase ${phase} processed ${outcome.processed} units`);
    const to = { phase, index: index + outcome.processed };
    worked += outcome.processed;
    const percent = progressPercent(run.progressPercent, phase, to.index, total, lastPhase);
    const minutes = Math.max((Date.now() - started) / 60_000, 1e-6);
    const progress: RunEvent = {
      type: 'progress',
      current: to.index,
      total,
      percent,
      speed: Math.round((worked / minutes) * 10) / 10,
    };
    // The run counts items: one whose work failed in any phase counts once, whatever else of it failed.
    const counted = failedItems.size
      ? await deps.store.runFailures.counted(run.tenantId, run.projectId, run.id, [...failedItems])
      : new Set<number>();
    const newlyFailed = [...failedItems].filter((id) => !counted.has(id)).sort((a, b) => a - b);
    if (newlyFailed.length > MAX_LOG_EVENTS - 1)
      throw new Error(`phase ${phase} failed ${newlyFailed.length} items in one chunk`);
    const moved = await deps.store.runs.checkpoint(run.tenantId, run.id, {
      from: run.cursor,
      to,
      // The run's counters count items: created or skipped once, in the create phase; any later phase adds
      // only failures (an item whose attachment failed makes the run PARTIAL).
      success: phase === PHASES.create ? outcome.success : 0,
      skipped: phase === PHASES.create ? outcome.skipped : 0,
      failure: newlyFailed.length,
      newlyFailedItems: newlyFailed,
      progressPercent: percent,
      events: chunkEvents(phase, index, outcome.log, progress, MAX_LOG_EVENTS - newlyFailed.length),
    });
    logger.debug('chunk', {
      tenantId: run.tenantId,
      runId: run.id,
      phase,
      index,
      processed: outcome.processed,
    });
    if (!moved) return 'batch'; // another invocation advanced this chunk first; it owns the run now
    countItems({
      created: phase === PHASES.create ? outcome.success : 0,
      skipped: phase === PHASES.create ? outcome.skipped : 0,
      failed: newlyFailed.length,
    });
  }
}
