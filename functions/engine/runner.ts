/**
 * The generic runner: works the run's current phase from its checkpoint until the time budget runs low, every
 * phase (core or plugin) through its unit worker and one pool (at most 50 units not yet checkpointed under way,
 * the checkpoint moving over the finished prefix, the pause/cancel flag read at each move: unit-pool.ts). It answers what comes next; the state machine (or a test) calls it
 * again. The events of what a move covers (one log line per unit, then progress) are written in the checkpoint's
 * own transaction (checkpoint.ts): units worked again cannot log twice, a crash cannot lose them.
 * This module is the RunBatch step; the others live beside it: Preflight (preflight-step.ts), Finalize
 * (finalize.ts), and the run's control shared by all of them (control.ts).
 */
import { CHUNK_SIZE, LAST_CORE_PHASE, PHASES, phaseName, progressPercent, type Run } from '#domain/runs.ts';
import {
  type EngineDeps,
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type RunPreflight,
  type UnitOutcome,
} from '#phase-kit/context.ts';
import { InvocationScope } from '#phase-kit/invocation.ts';
import { openRunPreflight } from '#phase-kit/preflight-artifact.ts';
import { addOutcome } from '#phase-kit/toolkit.ts';
import { logger } from '#platform/logger.ts';
import { phaseDuration } from '#platform/metrics.ts';
import { Interrupt } from '#trackers/interrupt.ts';
import { CheckpointMoves } from './checkpoint.ts';
import {
  answerInterrupt,
  interruptible,
  lastPhaseOf,
  obeyControl,
  type RunnerAnswer,
  readRun,
  verifiesAtEnd,
} from './control.ts';
import { attachmentsPhase } from './phases/attachments.ts';
import { commentsPhase } from './phases/comments.ts';
import { createPhase } from './phases/create.ts';
import { hierarchyPhase } from './phases/hierarchy.ts';
import { importPhase } from './phases/import.ts';
import { linksPhase } from './phases/links.ts';
import { rollbackPhase } from './phases/rollback.ts';
import { transitionsPhase } from './phases/transitions.ts';
import { verificationPhase } from './phases/verify.ts';
import { type PluginPhase, pluginModule, resolvePluginPhase } from './plugin-phase.ts';
import { preflightWork } from './preflight-step.ts';
import { tellWaits } from './throttle-notices.ts';
import { workUnitPool } from './unit-pool.ts';

export type { RunnerAnswer } from './control.ts';
export { failRun } from './control.ts';
export { finalizeStep } from './finalize.ts';
export { preflightStep } from './preflight-step.ts';

/** A unit (or the create phase's block) takes a few seconds at worst; below this budget, start none, let the next call go on. */
export const MIN_BUDGET_MS = 20_000;

/** The core phases 2-7 (phase 1, preflight, is its own step: preflight-step.ts); plugins follow as 8+. */
const PHASE_MODULES: Partial<Record<number, PhaseModule>> = {
  [PHASES.create]: createPhase,
  [PHASES.hierarchy]: hierarchyPhase,
  [PHASES.links]: linksPhase,
  [PHASES.attachments]: attachmentsPhase,
  [PHASES.transitions]: transitionsPhase,
  [PHASES.comments]: commentsPhase,
};

/** The phase a run works after its last: its verification's or its rollback's; undefined: none (a run's own). */
function afterRunPhase(run: Run, pastLast: boolean): PhaseModule | undefined {
  if (!pastLast) return undefined;
  if (run.status === 'VERIFYING') return verificationPhase;
  if (run.status !== 'ROLLING_BACK') return undefined;
  const { preview = true, includeEdited = false } = run.rollback ?? {};
  return rollbackPhase({ preview, includeEdited });
}

/**
 * A run delivered by Jira's importer (docs/jira-import.md): the import files and the admin's import in place of
 * the create phase; the transitions and comments phases only for the items it writes by REST (sub-tasks whose
 * parent was in Jira before the run; in an incremental run, the items an earlier run put in Jira, which it
 * updates), as the files carry each imported issue's final status and its comments (a REST write of either would
 * be the service account's, in the imported history).
 */
const IMPORT_PHASE_MODULES: Partial<Record<number, PhaseModule>> = {
  ...PHASE_MODULES,
  [PHASES.create]: importPhase,
  // The transitions and comments phases work only the items the import phase wrote by REST (import-outside.ts);
  // none in most runs.
};

/** The run's plugin phase at `phase` (its configuration opened once per invocation); undefined: not a plugin's. */
async function pluginPhase(
  deps: EngineDeps,
  run: Run,
  preflight: RunPreflight,
  phase: number,
  opened: Map<string, PluginPhase | undefined>,
): Promise<PluginPhase | undefined> {
  const key = phase > LAST_CORE_PHASE ? preflight.plugins[phase - LAST_CORE_PHASE - 1] : undefined;
  if (!key) return undefined;
  if (!opened.has(key)) opened.set(key, await resolvePluginPhase(deps, run.tenantId, key));
  return opened.get(key);
}

/**
 * The state machine's RunBatch step: works the run's phases from its checkpoint, unit by unit, until the
 * time budget runs low or a phase ends (`batch`: call again), every phase is done (`finalize`) or the run
 * stops. `interrupt` is the invocation's (the handler gave it to the tracker clients too); a caller whose
 * clients stop nothing (a test) leaves it to the runner.
 */
export async function runBatch(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  remainingMs: () => number,
  projectKey: string,
  interrupt = new Interrupt(),
): Promise<RunnerAnswer> {
  // The run as the invocation starts: the stream's place for a wait told, and the first step's run.
  const first = await readRun(deps, ref);
  // A long wait of a tracker (Jira's hourly quota) is told on the run's stream while this invocation works.
  const untell = tellWaits(deps, first);
  try {
    // A refusal outside a unit (a phase's preparation, its completion, a plugin's set-up) stops it the same way.
    return await interruptible(deps, ref, interrupt, () =>
      workPhases(deps, first, remainingMs, projectKey, new InvocationScope(interrupt)),
    );
  } finally {
    untell();
  }
}

/** The phases from `first` (the run as runBatch read it): each step after a pass reads the run again. */
async function workPhases(
  deps: EngineDeps,
  first: Run,
  remainingMs: () => number,
  projectKey: string,
  invocation: InvocationScope,
): Promise<RunnerAnswer> {
  const { interrupt } = invocation;
  const ref = { tenantId: first.tenantId, runId: first.id };
  let fresh: Run | undefined = first;
  // The header whole, the manifest opened slice by slice: each phase reads the slices its units are at.
  let preflight: RunPreflight | undefined;
  const openedPlugins = new Map<string, PluginPhase | undefined>();
  // Speed is units per minute over this invocation (the stream documents the unit).
  const started = Date.now();
  let worked = 0;
  for (;;) {
    // Read once per step: the first just now, by runBatch; after a pass, where its moves left the run.
    const run = fresh ?? (await readRun(deps, ref));
    fresh = undefined;
    const stop = await obeyControl(deps, run);
    if (stop) return stop;
    if (remainingMs() < MIN_BUDGET_MS) interrupt.abort({ kind: 'time-budget' });
    // A stop that voids the work is answered once, by runBatch (interruptible); the time budget here.
    interrupt.throwIfVoided();
    if (interrupt.reason) return answerInterrupt(deps, run, interrupt.reason);

    const { phase, index } = run.cursor;
    // Preflight is the state machine's own step; a caller that skipped it gets it done here all the same.
    if (phase === PHASES.preflight) return preflightWork(deps, run, projectKey, interrupt);
    preflight ??= await openRunPreflight(deps.artifacts, { tenantId: run.tenantId, runId: run.id });
    const lastPhase = lastPhaseOf(preflight);
    // A run being verified or rolled back works one phase more after its last (afterRunPhaseOf): the
    // verification, or the rollback (its preview, or carrying the preview out). A run that verifies itself at its
    // end works the verification as its own next phase, then Finalize.
    const onDemand = afterRunPhase(run, phase > lastPhase);
    const atEnd = run.status === 'RUNNING' && verifiesAtEnd(run) && phase === lastPhase + 1;
    const after = onDemand ?? (atEnd ? verificationPhase : undefined);
    const verifying = after !== undefined;
    if (phase > lastPhase && !verifying) return 'finalize';

    const plugin = verifying ? undefined : await pluginPhase(deps, run, preflight, phase, openedPlugins);
    const module = verifying
      ? after
      : phase <= LAST_CORE_PHASE
        ? (preflight.delivery?.deliveryMode === 'jira-import' ? IMPORT_PHASE_MODULES : PHASE_MODULES)[phase]
        : plugin && pluginModule(plugin, interrupt);
    const ctx: PhaseContext = { deps, run, preflight, invocation };
    if (module?.prepare && !(await module.prepare(ctx, remainingMs))) return 'batch';
    const total = module ? await module.units(ctx) : 0;
    if (!module || index >= total) {
      if (module?.complete && !run.options.dryRun) await module.complete(ctx);
      // A verification or a rollback ends in Finalize, which moves the run and its cursor on (finalize.ts).
      if (onDemand) return 'finalize';
      const ended = await deps.journal.checkpoint(run, {
        from: run.cursor,
        to: { phase: phase + 1, index: 0 },
        progressPercent: progressPercent(run.progressPercent, phase, total, total, lastPhase),
      });
      if (ended) {
        logger.info('phase done', {
          tenantId: run.tenantId,
          runId: run.id,
          phase,
          phaseName: phaseName(phase),
        });
        // The phase's wall time, from the checkpoint that entered it (pauses included).
        if (run.phaseStartedAt) phaseDuration(phaseName(phase), Date.now() - Date.parse(run.phaseStartedAt));
      }
      // The next phase in the next invocation (its own tracker clients and time budget).
      return 'batch';
    }
    const moves: CheckpointMoves = new CheckpointMoves(deps, run, total, lastPhase, () => {
      const minutes = Math.max((Date.now() - started) / 60_000, 1e-6);
      return Math.round(((worked + moves.worked) / minutes) * 10) / 10;
    });
    const answer = await workPool(ctx, module, total, moves, remainingMs);
    worked += moves.worked;
    if (answer) return answer;
  }
}

/**
 * This many finished units are checkpointed at once (fewer when nothing else is under way): the window refills as
 * the checkpoint moves, so moves come often, but not one DynamoDB transaction per unit.
 */
const MIN_MOVE = 10;

/**
 * This many when the window of 50 is full: then no unit starts until the checkpoint moves, so waiting for 10 idles
 * the pool. Not 1: a move per unit would be a DynamoDB transaction per unit (at 2,000 items: AWS cost per 10,000
 * items $0.20 where 3 cost $0.11, for the same speed).
 */
const MIN_MOVE_FULL = 3;

/**
 * A unit starts at most this far past the first unworked one: a slow unit lets the pool go on over this many
 * positions, and the checkpoint records at most this many worked units past it (a few hundred bytes of the run).
 */
export const POOL_REACH = 500;

/**
 * Works the phase's units through one pool (unit-pool.ts) from the checkpoint: at most 50 not yet checkpointed
 * under way, the checkpoint moving over the finished prefix, the pause/cancel flag read at each move, no unit
 * started once the invocation is interrupted (its time budget runs low, a token is refused, a wait handed back).
 * Undefined: go on (the caller reads the run again: phase done, paused, out of time); otherwise what to answer.
 * Work the interrupt voids is not checkpointed, and ends the pass with InvocationInterrupted.
 */
async function workPool(
  ctx: PhaseContext,
  module: PhaseModule,
  total: number,
  moves: CheckpointMoves,
  remainingMs: () => number,
): Promise<RunnerAnswer | undefined> {
  const { run, invocation } = ctx;
  const { interrupt } = invocation;
  let lost = false;
  const worker = await module.open(ctx);
  try {
    await workUnitPool<UnitOutcome>({
      from: run.cursor.index,
      done: run.cursor.done ?? [],
      total,
      window: CHUNK_SIZE,
      reach: POOL_REACH,
      minMove: MIN_MOVE,
      minMoveFull: MIN_MOVE_FULL,
      work: (i, stopped) => worker.work(i, stopped),
      signal: interrupt.signal,
      move: async ({ units, to }) => {
        // A unit that met a refused token or a deferred client worked nothing: not checkpointed.
        if (lost || interrupt.voided) return false;
        const outcome = emptyOutcome();
        for (const u of units) addOutcome(outcome, u.result);
        // The pause/cancel flag is read by the move itself (its condition: CheckpointMoved), not beside it: no
        // unit starts while a move is under way (its units still count in the window), so its one round trip is
        // the window's idle time.
        const moved = await moves.move(units.length, outcome, to);
        if (!moved) {
          lost = true; // another invocation moved it first; it owns the run now
          return false;
        }
        // Read before the pass (by the caller) and at each move: at least every 50 units.
        if (remainingMs() < MIN_BUDGET_MS) interrupt.abort({ kind: 'time-budget' });
        return moved === true;
      },
    });
  } finally {
    await worker.close?.();
  }
  interrupt.throwIfVoided();
  return lost ? 'batch' : undefined;
}
