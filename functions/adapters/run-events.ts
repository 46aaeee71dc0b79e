/**
 * Run events for the tenant dashboard (docs/api.md, "Tenant dashboard (WebSocket)"), told as they happen:
 * `withRunEvents(store, notifier)` is the store the engine and the run API write through, whose checkpoints and
 * status transitions (the only ways a run moves) also tell the notifier, so no engine step needs a call of its
 * own; the start and the tracker waits are told by name (engine/handler.ts, engine/throttle-notices.ts).
 *
 * Best effort and off the run's path: each frame is queued behind the run's previous one (frames of a run keep
 * their order) and sent while the run goes on; `settle()` waits, boundedly, for what is queued before an
 * invocation returns. A failure is logged, never thrown to the run.
 */
import {
  type DashboardRunFrame,
  type FrameRun,
  ProgressThrottle,
  runFrame,
} from '#domain/dashboard-events.ts';
import { isTerminalRun } from '#domain/migrations.ts';
import type { RunEvent } from '#domain/run-events.ts';
import { phaseName, type Run } from '#domain/runs.ts';
import { nowIso, nowMs } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import type { Store } from '#store/index.ts';
import type { RunRepository } from '#store/runs.ts';
import { fanOut } from './dashboard-channel.ts';

/** How long an invocation waits at most for its queued frames before returning. */
const SETTLE_TIMEOUT_MS = 2_000;

/** A tracker's long wait, as the HTTP layer tells it (trackers/http.ts ThrottleWaitNotice). */
export interface WaitNotice {
  tracker: 'source' | 'target';
  reason: string | null;
  until: Date;
}

export class RunEventsNotifier {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly throttle = new ProgressThrottle();

  constructor(
    private readonly store: () => Store,
    private readonly publish: (
      store: Store,
      tenantId: string,
      frame: DashboardRunFrame,
    ) => Promise<unknown> = fanOut,
  ) {}

  started(tenantId: string, run: FrameRun & Pick<Run, 'type' | 'options'>): void {
    this.send(
      tenantId,
      runFrame('run.started', run, nowIso(), { runType: run.type, dryRun: run.options.dryRun }),
    );
  }

  phase(tenantId: string, run: FrameRun, phase: number): void {
    this.send(tenantId, runFrame('run.phase', run, nowIso(), { phase, phaseName: phaseName(phase) }));
  }

  /** At most one a second per run: the others are dropped (the next one says more anyway). */
  progress(tenantId: string, run: FrameRun, phase: number, p: Extract<RunEvent, { type: 'progress' }>): void {
    // One reading of the clock for both: frames' `at` are then a second apart at least, as admitted.
    const now = nowMs();
    if (!this.throttle.admit(run.id, now)) return;
    this.send(
      tenantId,
      runFrame('run.progress', run, new Date(now).toISOString(), {
        phase,
        phaseName: phaseName(phase),
        current: p.current,
        total: p.total,
        percent: p.percent,
        speed: p.speed,
      }),
    );
  }

  paused(tenantId: string, run: FrameRun, reason: string): void {
    this.send(tenantId, runFrame('run.paused', run, nowIso(), { reason }));
  }

  resumed(tenantId: string, run: FrameRun): void {
    this.send(tenantId, runFrame('run.resumed', run, nowIso(), {}));
  }

  waiting(tenantId: string, run: FrameRun, notice: WaitNotice): void {
    this.send(
      tenantId,
      runFrame('run.waiting', run, nowIso(), {
        tracker: notice.tracker,
        reason: notice.reason ?? 'rate-limited',
        until: notice.until.toISOString(),
      }),
    );
  }

  ended(tenantId: string, run: Run): void {
    this.throttle.forget(run.id);
    if (!isTerminalRun(run.status)) return;
    this.send(
      tenantId,
      runFrame('run.ended', run, nowIso(), {
        status: run.status as 'COMPLETED' | 'PARTIAL' | 'FAILED' | 'CANCELLED',
        stats: { created: run.successCount, skipped: run.skippedCount, failed: run.failureCount },
      }),
    );
  }

  /** Waits for every queued frame, at most `timeoutMs`. */
  async settle(timeoutMs = SETTLE_TIMEOUT_MS): Promise<void> {
    const pending = [...this.queues.values()];
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private send(tenantId: string, frame: DashboardRunFrame): void {
    const previous = this.queues.get(frame.runId) ?? Promise.resolve();
    const next = previous
      .then(() => this.publish(this.store(), tenantId, frame))
      .then(
        () => undefined,
        (err: unknown) =>
          logger.warn('dashboard frame failed', {
            tenantId,
            runId: frame.runId,
            type: frame.type,
            errorName: (err as Error | undefined)?.name,
          }),
      );
    this.queues.set(frame.runId, next);
    // The queue forgets a run once its last frame is out.
    void next.then(() => {
      if (this.queues.get(frame.runId) === next) this.queues.delete(frame.runId);
    });
  }
}

/**
 * The same store, whose run checkpoints and status transitions also tell `notifier` (after the write held):
 * a checkpoint into a new phase is `run.phase`, one carrying a progress event `run.progress`; a move to PAUSED is
 * `run.paused`, PAUSED to RUNNING `run.resumed`, to an end status `run.ended` with the run's counters.
 */
export function withRunEvents(store: Store, notifier: RunEventsNotifier): Store {
  const base = store.runs;
  const runs: RunRepository = Object.create(base);
  // The run's project, remembered from the reads the engine makes anyway (a checkpoint names only the run).
  const projects = new Map<string, string>();
  const frameRun = async (tenantId: string, runId: string): Promise<FrameRun | undefined> => {
    const known = projects.get(runId);
    if (known) return { id: runId, projectId: known };
    const run = await runs.get(tenantId, runId);
    return run && { id: run.id, projectId: run.projectId };
  };
  runs.get = async (tenantId, runId) => {
    const run = await base.get(tenantId, runId);
    if (run) projects.set(run.id, run.projectId);
    return run;
  };
  runs.checkpoint = async (tenantId, runId, u) => {
    const moved = await base.checkpoint(tenantId, runId, u);
    if (!moved) return moved;
    const run = await frameRun(tenantId, runId);
    if (!run) return moved;
    const progress = u.events?.find((e) => e.event.type === 'progress')?.event;
    if (progress?.type === 'progress') notifier.progress(tenantId, run, u.from.phase, progress);
    if (u.to.phase !== u.from.phase) notifier.phase(tenantId, run, u.to.phase);
    return moved;
  };
  runs.transition = async (tenantId, runId, move, extra = {}) => {
    const moved = await base.transition(tenantId, runId, move, extra);
    if (!moved) return moved;
    if (isTerminalRun(move.to)) {
      const run = await base.get(tenantId, runId);
      if (run) notifier.ended(tenantId, run);
      projects.delete(runId);
      return moved;
    }
    const run = await frameRun(tenantId, runId);
    if (!run) return moved;
    if (move.to === 'PAUSED') notifier.paused(tenantId, run, extra.pauseReason ?? 'requested');
    else if (move.to === 'RUNNING') notifier.resumed(tenantId, run);
    return moved;
  };
  return { ...store, runs };
}
