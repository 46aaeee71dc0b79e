/**
 * The generic runner: works the run's current phase from its checkpoint, a chunk of at most 50 at a time,
 * reading the pause/cancel flag before every chunk, until the time budget runs low. It answers what comes
 * next; the state machine (or a test) calls it again. A chunk's events (one log line per unit, then progress)
 * are written in the checkpoint's own transaction: a retried chunk cannot log twice, a crash cannot lose them.
 */
import { chunkEventId, type RunEvent, statusEventId } from '#domain/run-events.ts';
import {
  CHUNK_SIZE,
  LAST_CORE_PHASE,
  PHASES,
  phaseName,
  progressPercent,
  type Run,
  type RunStatus,
} from '#domain/runs.ts';
import {
  type ChunkOutcome,
  type EngineDeps,
  type PhaseContext,
  type PhaseModule,
  type Preflight,
  SimulatedCrash,
} from '#phase-kit/context.ts';
import { nowIso } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import { countItems, countRun, phaseDuration } from '#platform/metrics.ts';
import { artifactKeys } from '#store/artifacts.ts';
import { CredentialsUnavailable, TokenExchangeError } from '#trackers/oauth/token-source.ts';
import { attachmentsPhase } from './phases/attachments.ts';
import { commentsPhase } from './phases/comments.ts';
import { createChunk } from './phases/create.ts';
import { hierarchyPhase } from './phases/hierarchy.ts';
import { linksPhase } from './phases/links.ts';
import { loadPreflight, PreflightError, runPreflight } from './phases/preflight.ts';
import { completeSprints } from './phases/sprints.ts';
import { transitionsPhase } from './phases/transitions.ts';
import { failPluginChunk, type PluginPhase, resolvePluginPhase } from './plugin-phase.ts';
import { writeRunReports } from './reports.ts';

/**
 * What the engine answers the state machine. `ready`: preflight is done, work the phases; `batch`/`phase-done`:
 * call RunBatch again; `finalize`: every phase is done, call Finalize; the others end the execution.
 */
export type RunnerAnswer =
  | 'ready'
  | 'batch'
  | 'phase-done'
  | 'finalize'
  | 'paused'
  | 'cancelled'
  | 'done'
  | 'failed';

/** A chunk takes a few seconds at worst; below this budget, stop at the checkpoint and let the next call go on. */
export const MIN_BUDGET_MS = 20_000;
/**
 * A transaction holds 100 writes: the checkpoint, the progress event and at most 98 more: the lines, and the
 * markers of items failing for the first time in the run (the lines give way to them).
 */
const MAX_LOG_EVENTS = 98;

/** The phases implemented so far; a phase without a module is passed over (the engine issue is in progress). */
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
    if (deps.credentialsRefused?.()) return false;
    failed.add(failure.sourceId);
    return runFailures.record(tenantId, projectId, runId, failure);
  };
  return { ...deps, store: { ...deps.store, runFailures: watched } };
}

/** The run's last phase: the core phases, then one per plugin the run took at preflight. */
const lastPhaseOf = (preflight: Preflight) => LAST_CORE_PHASE + (preflight.plugins?.length ?? 0);

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

async function announce(
  deps: Pick<EngineDeps, 'store'>,
  run: Run,
  status: RunStatus,
  offsetMs = 0,
): Promise<void> {
  const id = statusEventId(run.cursor.phase, run.cursor.index, Date.now() + offsetMs);
  await deps.store.runs.appendEvent(run.tenantId, run.projectId, run.id, id, {
    type: 'status',
    status: status.toLowerCase(),
  });
}

/**
 * Marks the run FAILED with its reason, only from one of `from` (a run that already ended keeps its end), and
 * tells the stream: a log line saying why, then the status. Answers whether the run moved.
 */
export async function failRun(
  store: EngineDeps['store'],
  run: Run,
  from: RunStatus[],
  reason: string,
  line: string,
): Promise<boolean> {
  const moved = await store.runs.setStatus(run.tenantId, run.id, from, 'FAILED', {
    finishedAt: nowIso(),
    failureReason: reason,
  });
  if (moved) {
    countRun('FAILED');
    await store.runs.appendEvent(
      run.tenantId,
      run.projectId,
      run.id,
      statusEventId(run.cursor.phase, run.cursor.index, Date.now()),
      { type: 'log', message: line },
    );
    await announce({ store }, run, 'FAILED', 1);
  }
  return moved;
}

/**
 * A tracker connection's OAuth token could not be had (the grant refused: "Token exchange failed"; or the
 * provider unreachable): the run pauses with the reason instead of failing item after item; the chunk under
 * way is not checkpointed (chunks are safe to work again), so a resume (after a reconnect, for a refusal)
 * carries on where it stood. Answers 'paused'.
 */
export async function pauseForCredentials(
  store: EngineDeps['store'],
  run: Run,
  refusal: CredentialsUnavailable,
): Promise<RunnerAnswer> {
  const moved = await store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], 'PAUSED', {
    control: 'pause',
    pauseReason: refusal.message,
  });
  logger.warn('run paused: no tracker token', {
    tenantId: run.tenantId,
    runId: run.id,
    kind: refusal.kind,
    providerError: refusal.providerError,
    moved,
  });
  if (moved) {
    await store.runs.appendEvent(
      run.tenantId,
      run.projectId,
      run.id,
      statusEventId(run.cursor.phase, run.cursor.index, Date.now()),
      {
        type: 'log',
        // A refused grant needs a reconnect first; an unreachable provider only time.
        message: `Run paused: ${refusal.message}${refusal instanceof TokenExchangeError ? ', then resume the run' : ''}`,
      },
    );
    await announce({ store }, run, 'PAUSED', 1);
  }
  return 'paused';
}

/** The refusal behind `err`, or one a token source recorded though a phase swallowed the error. */
function refusalOf(deps: EngineDeps, err?: unknown): CredentialsUnavailable | undefined {
  if (err instanceof CredentialsUnavailable) return err;
  return deps.credentialsRefused?.();
}

/**
 * The warnings the phases logged on the way (unmapped states, unreachable statuses, files over the upload
 * limit ...): the log lines that say "warning:", read back from the run's events.
 */
async function phaseWarnings(deps: EngineDeps, run: Run): Promise<string[]> {
  const found: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await deps.store.runs.events(run.tenantId, run.projectId, run.id, after);
    if (page.length === 0) return found;
    for (const { event } of page) {
      if (event.type !== 'log') continue;
      // A line may carry several ("...; warning: a; warning: b"): one entry each, named by the line's item.
      for (const line of event.message.split('\n')) {
        const [head, ...warnings] = line.split(/;?\s*\bwarning:\s*/i);
        const item = /^#\d+/.exec(head ?? '')?.[0];
        for (const w of warnings) found.push(item ? `${item}: ${w}` : w);
      }
    }
    after = page.at(-1)?.id;
  }
}

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
    warnings: [...preflight.warnings, ...(await phaseWarnings(deps, run))],
    // Phase 1's setup: what a real run would create in Jira, and what it would reuse.
    sprints: (preflight.sprints ?? []).map((s) => ({
      name: s.name,
      iterationPath: s.iterationPath,
      startDate: s.startDate,
      endDate: s.endDate,
      state: s.state,
      action: s.created ? 'create' : 'reuse',
    })),
    components: (preflight.components ?? []).map((c) => ({
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
  const status = run.failureCount > 0 ? 'PARTIAL' : 'COMPLETED';
  const moved = await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], status, {
    finishedAt: nowIso(),
    progressPercent: 100,
  });
  if (moved) {
    countRun(status);
    await announce(deps, run, status);
    await deps.store.runs.appendEvent(
      run.tenantId,
      run.projectId,
      run.id,
      statusEventId(run.cursor.phase, run.cursor.index, Date.now() + 1),
      {
        type: 'done',
        stats: { created: run.successCount, skipped: run.skippedCount, failed: run.failureCount },
      },
    );
  }
  return 'done';
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
 * Reads the run's control flag and status before any step: a cancel or pause request is carried out here (the
 * run moves, the stream is told); a run that is not RUNNING answers how it stands. `undefined`: go on.
 */
async function obeyControl(deps: EngineDeps, run: Run): Promise<RunnerAnswer | undefined> {
  if (run.control === 'cancel') {
    // What a cancelled run did is reported too: its failures and the id map as it stands.
    if (['RUNNING', 'PAUSED', 'PENDING'].includes(run.status)) await writeRunReports(deps, run);
    const moved = await deps.store.runs.setStatus(
      run.tenantId,
      run.id,
      ['RUNNING', 'PAUSED', 'PENDING'],
      'CANCELLED',
      { finishedAt: nowIso() },
    );
    if (moved) {
      countRun('CANCELLED');
      await announce(deps, run, 'CANCELLED');
    }
    return 'cancelled';
  }
  if (run.control === 'pause') {
    if (await deps.store.runs.setStatus(run.tenantId, run.id, ['RUNNING'], 'PAUSED'))
      await announce(deps, run, 'PAUSED');
    return 'paused';
  }
  if (run.status === 'RUNNING') return undefined;
  if (run.status === 'PAUSED') return 'paused';
  if (run.status === 'CANCELLED') return 'cancelled';
  if (run.status === 'FAILED') return 'failed';
  return 'done';
}

async function readRun(deps: EngineDeps, ref: { tenantId: string; runId: string }): Promise<Run> {
  const run = await deps.store.runs.get(ref.tenantId, ref.runId);
  if (!run) throw new Error(`run ${ref.runId} not found`);
  return run;
}

/**
 * The state machine's Preflight step: reads the source, plans the run and checkpoints to the create phase.
 * A run already past preflight (a resumed run, a continued execution) answers `ready` at once.
 */
export async function preflightStep(
  deps: EngineDeps,
  ref: { tenantId: string; runId: string },
  projectKey: string,
): Promise<RunnerAnswer> {
  const run = await readRun(deps, ref);
  const stop = await obeyControl(deps, run);
  if (stop) return stop;
  if (run.cursor.phase !== PHASES.preflight) return 'ready';
  let preflight: Preflight;
  const began = Date.now();
  try {
    preflight = await runPreflight(deps, run, projectKey);
  } catch (err) {
    const refused = refusalOf(deps, err);
    if (refused) return pauseForCredentials(deps.store, run, refused);
    if (!(err instanceof PreflightError)) throw err;
    await failRun(deps.store, run, ['RUNNING'], err.message, `Preflight failed: ${err.message}`);
    return 'failed';
  }
  phaseDuration(phaseName(PHASES.preflight), Date.now() - began);
  // Not moved: another invocation checkpointed first, or the run stopped meanwhile; RunBatch reads which.
  await deps.store.runs.checkpoint(run.tenantId, run.id, {
    from: run.cursor,
    to: { phase: PHASES.create, index: 0 },
    progressPercent: run.progressPercent,
    totalItems: preflight.manifest.length,
    events: [
      ...preflight.warnings.slice(0, MAX_LOG_EVENTS).map((message, n) => ({
        id: chunkEventId(1, 0, n),
        event: { type: 'log', message } as RunEvent,
      })),
    ],
  });
  return 'ready';
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
  try {
    return await workPhases(deps, ref, remainingMs, projectKey);
  } catch (err) {
    // A refusal outside a chunk (a phase's preparation, its completion, a plugin's set-up) pauses the same way.
    const refused = refusalOf(deps, err);
    if (!refused) throw err;
    return pauseForCredentials(deps.store, await readRun(deps, ref), refused);
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
      const refused = refusalOf(deps, err);
      if (refused) return pauseForCredentials(deps.store, run, refused);
      // A failing plugin fails its chunk's items, never the run (also when its service is out of reach after the
      // client's retries: a core phase would fail the run there); a crash is still a crash (the chunk again).
      if (!plugin || err instanceof SimulatedCrash) throw err;
      outcome = await failPluginChunk(ctx, plugin, index, total, err);
    }
    // A phase that caught the refusal item by item still worked nothing: not checkpointed.
    const refused = refusalOf(deps);
    if (refused) return pauseForCredentials(deps.store, run, refused);
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
