/**
 * Run frames for the tenant dashboard (docs/api.md, "Tenant dashboard (WebSocket)"), told by the run journal
 * (adapters/run-journal.ts) as the run moves: its status moves, checkpoints, start and tracker waits.
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
import type { RunEvent, RunWait } from '#domain/run-events.ts';
import { phaseName, type Run } from '#domain/runs.ts';
import { nowIso, nowMs } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import type { Store } from '#store/index.ts';
import { fanOut } from './dashboard-channel.ts';

/** How long an invocation waits at most for its queued frames before returning. */
const SETTLE_TIMEOUT_MS = 2_000;

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

  rollingBack(tenantId: string, run: FrameRun): void {
    this.send(tenantId, runFrame('run.rollingBack', run, nowIso(), {}));
  }

  waiting(tenantId: string, run: FrameRun, notice: RunWait): void {
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
        status: run.status as 'COMPLETED' | 'PARTIAL' | 'FAILED' | 'CANCELLED' | 'ROLLED_BACK',
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
