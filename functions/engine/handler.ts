/**
 * The engine Lambda: the state machine's Preflight ('preflight'), RunBatch ('batch'), Finalize ('finalize'),
 * CheckWait ('wait': between slices of a wait for a tracker's reset) and MarkFailed ('fail') tasks. The event carries
 * ids only; the project's tracker credentials are unsealed here, used for this invocation, and never logged
 * nor returned.
 */
import type { Context } from 'aws-lambda';
import { RunEventsNotifier } from '#adapters/run-events.ts';
import { StoreRunJournal } from '#adapters/run-journal.ts';
import type { ConnectionKind } from '#domain/connectors.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import { RUN_TRANSITIONS } from '#domain/run-lifecycle.ts';
import type { TrackerFaultPolicy } from '#domain/tracker-faults.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { logger } from '#platform/logger.ts';
import { flushMetrics } from '#platform/metrics.ts';
import { PLUGIN_DEFINITIONS } from '#plugins/index.ts';
import { type ArtifactStore, artifacts } from '#store/artifacts.ts';
import { type Store, store } from '#store/index.ts';
import {
  loadSource,
  loadTarget,
  openSourceClient,
  openTargetClient,
  runSitesOf,
} from '#trackers/connections.ts';
import { Interrupt } from '#trackers/interrupt.ts';
import { CredentialsUnavailable } from '#trackers/oauth/token-source.ts';
import { leaseIdOf, SiteShare, siteIdOf } from '#trackers/site-share.ts';
import { answerInterrupt, callAgainAt, interruptible, obeyControl, waitSlice } from './control.ts';
import { checkRunSites } from './run-sites.ts';
import {
  failRun,
  finalizeStep,
  MIN_BUDGET_MS,
  preflightStep,
  type RunnerAnswer,
  runBatch,
} from './runner.ts';

export interface EngineEvent {
  action: 'preflight' | 'batch' | 'finalize' | 'wait' | 'fail';
  tenantId: string;
  runId: string;
  generation: number;
  /** Engine calls this execution made so far (the state machine's count for continue-as-new). */
  iterations?: number;
  /** 'wait': the tracker's reset (ISO 8601) the run waits for, from the previous answer's `waitUntil`. */
  until?: string;
  /** 'fail': what the state machine caught ({Error, Cause}). */
  error?: { Error?: string; Cause?: string };
}

/** `waitUntil`/`waitSeconds` with the answer `wait`: the state machine's Wait state reads `waitSeconds`. */
export type EngineResult =
  | { answer: RunnerAnswer; iterations: number; waitUntil?: string; waitSeconds?: number }
  | { failed: boolean };

export interface EngineHandlerOptions {
  store: () => Store;
  artifacts: () => ArtifactStore;
  /** How long Jira's search may lag behind a write (see EngineDeps.indexLagMs). */
  indexLagMs: number;
  /** The tenant dashboard's frames the run journal queues (adapters/run-events.ts); none: nothing is told. */
  runEvents?: RunEventsNotifier;
  /** How long a run waits for a tracker that does not answer (see EngineDeps.trackerFaults). */
  trackerFaults?: TrackerFaultPolicy;
}

/** Jira Cloud's search usually catches up within seconds; the create phase waits this out only after a crash. */
const DEFAULT_INDEX_LAG_MS = 10_000;
/** A failure reason is shown to the admin: long enough to be useful, short enough for one line. */
const MAX_REASON = 1_000;

/** The project's credentials of one kind; an error names what is wrong, never a value. */
async function stored<T>(
  load: () => Promise<T | undefined>,
  projectId: string,
  kind: ConnectionKind,
): Promise<T> {
  let value: T | undefined;
  try {
    value = await load();
  } catch {
    throw new Error(`project ${projectId} has malformed ${kind} credentials`);
  }
  if (value === undefined) throw new Error(`project ${projectId} has no stored ${kind} credentials`);
  return value;
}

/**
 * What the state machine caught, as a reason for the admin. Lambda puts a thrown error in Cause as JSON
 * ({errorType, errorMessage, trace}); the local interpreter gives the message itself.
 */
export function failureReason(error: EngineEvent['error']): string {
  const cause = error?.Cause ?? '';
  let message = cause;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed?.errorMessage === 'string') message = parsed.errorMessage;
  } catch {
    // not JSON: the cause is the message
  }
  const reason = `engine error ${error?.Error ?? 'unknown'}${message ? `: ${message}` : ''}`;
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}

export function createEngineHandler(opts: EngineHandlerOptions) {
  type Step = 'preflight' | 'batch' | 'finalize';

  /** What one invocation works with: the store, and the run journal the engine moves the run through. */
  interface Invocation {
    store: Store;
    journal: RunJournal;
  }

  async function step(
    action: Step,
    event: EngineEvent,
    context: Pick<Context, 'getRemainingTimeInMillis'>,
    { store: s, journal }: Invocation,
  ) {
    const run = await s.runs.get(event.tenantId, event.runId);
    if (!run) throw new Error(`run ${event.runId} not found`);
    const iterations = event.iterations ?? 0;
    // Before any work: a resume then starts after this generation, whatever happens to this execution.
    if (iterations === 0) await s.runs.recordGeneration(run.tenantId, run.id, event.generation);
    // The run's first step: the dashboard learns it started, in its first phase.
    if (action === 'preflight' && iterations === 0 && event.generation === 0) journal.started(run);
    const source = await stored(() => loadSource(s, run.tenantId, run.projectId), run.projectId, 'source');
    const target = await stored(() => loadTarget(s, run.tenantId, run.projectId), run.projectId, 'target');
    // The sites the run started against (its first invocation binds them): connections moved elsewhere since are
    // not opened; the run pauses (a verification ends) with the reason, having read and written nothing.
    const moved = await checkRunSites(s, run, runSitesOf(source, target));
    if (moved) return { answer: await answerInterrupt({ journal }, run, moved), iterations: iterations + 1 };
    // Every tracker call's log line names the tenant and run it was made for.
    const logKeys = { tenantId: run.tenantId, runId: run.id };
    // This invocation's one interrupt: the token sources and the HTTP layers abort it, the runner answers it.
    const interrupt = new Interrupt();
    const clientOptions = {
      // A wait of the whole client that would outlast this invocation is handed back: the state machine waits.
      http: { logKeys, waitBudgetMs: () => context.getRemainingTimeInMillis() - MIN_BUDGET_MS },
      logKeys,
      interrupt,
    };
    let clients: Pick<EngineDeps, 'source' | 'target'>;
    try {
      clients = {
        source: await openSourceClient(s, run.tenantId, run.projectId, source, clientOptions),
        target: await openTargetClient(s, run.tenantId, run.projectId, target, clientOptions),
      };
    } catch (err) {
      // A stored grant this deployment cannot refresh (its OAuth app is not configured): reconnect, then resume.
      if (!(err instanceof CredentialsUnavailable)) throw err;
      return {
        answer: await answerInterrupt({ journal }, run, err.interruptReason),
        iterations: iterations + 1,
      };
    }
    const deps: EngineDeps = {
      store: s,
      journal,
      artifacts: opts.artifacts(),
      ...clients,
      indexLagMs: opts.indexLagMs,
      // The plugin registry is the entry point's choice, handed to the engine (which imports no plugin).
      pluginDefinitions: PLUGIN_DEFINITIONS,
      ...(opts.trackerFaults ? { trackerFaults: opts.trackerFaults } : {}),
    };
    const ref = { tenantId: run.tenantId, runId: run.id };
    const remainingMs = () => context.getRemainingTimeInMillis();
    // The Jira site's limits, shared with the other runs working it: read now and every few seconds.
    const site = new SiteShare(
      s.siteLimits,
      siteIdOf(target.creds.base_url),
      leaseIdOf(run.tenantId, run.id),
    );
    await site.join(clients.target.http);
    let answer: RunnerAnswer;
    try {
      answer =
        action === 'preflight'
          ? await preflightStep(deps, ref, target.creds.project_key, interrupt)
          : action === 'finalize'
            ? await interruptible(deps, ref, interrupt, () => finalizeStep(deps, ref))
            : await runBatch(deps, ref, remainingMs, target.creds.project_key, interrupt);
    } finally {
      // The run's last step gives its place back; otherwise the lease lapses unless the next call renews it.
      if (action === 'finalize') await site.leave();
      else site.stop();
    }
    // The state machine waits (in slices), then calls again.
    if (answer === 'wait') return { ...waitSlice(callAgainAt(interrupt.reason)), iterations: iterations + 1 };
    logger.info(`engine ${action}`, {
      tenantId: run.tenantId,
      runId: run.id,
      generation: event.generation,
      iterations: iterations + 1,
      answer,
    });
    return { answer, iterations: iterations + 1 };
  }

  /**
   * The state machine's check between two slices of a wait for a tracker's reset: a pause or cancel asked for
   * meanwhile is carried out; otherwise wait on (`wait`, the next slice) or, once the reset is reached, `batch`.
   * No tracker is called.
   */
  async function checkWait(event: EngineEvent, { store: s, journal }: Invocation): Promise<EngineResult> {
    const run = await s.runs.get(event.tenantId, event.runId);
    if (!run) throw new Error(`run ${event.runId} not found`);
    const iterations = (event.iterations ?? 0) + 1;
    const stop = await obeyControl({ store: s, journal, artifacts: opts.artifacts() } as EngineDeps, run);
    if (stop) return { answer: stop, iterations };
    return { ...waitSlice(event.until ?? ''), iterations };
  }

  async function fail(event: EngineEvent, { store: s, journal }: Invocation) {
    const run = await s.runs.get(event.tenantId, event.runId);
    if (!run) return { failed: false };
    const reason = failureReason(event.error);
    const failed = await failRun(journal, run, RUN_TRANSITIONS.fail, reason, `Run failed: ${reason}`);
    logger.error('engine failed the run', {
      tenantId: run.tenantId,
      runId: run.id,
      generation: event.generation,
      error: event.error?.Error,
      failed,
    });
    return { failed };
  }

  return async (
    event: EngineEvent,
    context: Pick<Context, 'getRemainingTimeInMillis'>,
  ): Promise<EngineResult> => {
    const s = opts.store();
    const invocation: Invocation = { store: s, journal: new StoreRunJournal(s, opts.runEvents) };
    try {
      if (event.action === 'preflight' || event.action === 'batch' || event.action === 'finalize')
        return await step(event.action, event, context, invocation);
      if (event.action === 'wait') return await checkWait(event, invocation);
      if (event.action === 'fail') return await fail(event, invocation);
      throw new Error(`unknown engine action ${String((event as { action?: unknown }).action)}`);
    } finally {
      // What this invocation counted (items, tracker calls, run ends), published as one EMF document.
      flushMetrics();
      // The dashboard frames still on their way (bounded: a slow post never holds the execution for long).
      await invocation.journal.settle();
    }
  };
}

export type EngineHandler = ReturnType<typeof createEngineHandler>;

/** The deployed function (and the offline runtime): the process's store and artifact store. */
export const handler: EngineHandler = createEngineHandler({
  store,
  artifacts,
  indexLagMs: DEFAULT_INDEX_LAG_MS,
  // One per process: its once-a-second progress limit holds across the run's invocations here.
  runEvents: new RunEventsNotifier(store),
});
