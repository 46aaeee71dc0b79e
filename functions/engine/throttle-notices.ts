/**
 * Tells the run's stream (and the tenant dashboard: `run.waiting`) when a tracker makes the whole run wait (Jira's
 * hourly quota spent, Azure DevOps blocking the identity): "Waiting for Jira's hourly quota until 14:00 UTC". The
 * HTTP layer does the waiting; this only writes the line.
 */
import { statusEventId } from '#domain/run-events.ts';
import { coveredUnits, type Run } from '#domain/runs.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { logger } from '#platform/logger.ts';
import type { ThrottleWaitNotice } from '#trackers/http.ts';

/** `14:00` at a whole minute, `14:03:20` otherwise, UTC. */
const clockTime = (at: Date) => {
  const iso = at.toISOString();
  return iso.slice(17, 19) === '00' ? iso.slice(11, 16) : iso.slice(11, 19);
};

export function waitLine(notice: ThrottleWaitNotice): string {
  const until = `until ${clockTime(notice.until)} UTC`;
  if (notice.reason === 'jira-quota-global-based') return `Waiting for Jira's hourly quota ${until}`;
  const tracker = notice.tracker === 'target' ? 'Jira' : 'Azure DevOps';
  return `Waiting for ${tracker}: it asked the run to slow down (rate limited) ${until}`;
}

/** Subscribes the run's stream to both trackers' long waits; answers the unsubscribe. */
export function tellWaits(
  deps: Pick<EngineDeps, 'store' | 'source' | 'target' | 'runEvents'>,
  run: Run,
): () => void {
  const tell = (notice: ThrottleWaitNotice) => {
    deps.runEvents?.waiting(run.tenantId, run, notice);
    deps.store.runs
      .appendEvent(
        run.tenantId,
        run.projectId,
        run.id,
        statusEventId(run.cursor.phase, coveredUnits(run.cursor), Date.now()),
        {
          type: 'log',
          message: waitLine(notice),
        },
      )
      .catch((err: unknown) => logger.warn('could not tell the stream about a wait', { runId: run.id, err }));
  };
  // Tests may hand the engine stand-in clients without an HTTP layer.
  const off = [deps.target?.http, deps.source?.http].flatMap((http) =>
    typeof http?.onThrottleWait === 'function' ? [http.onThrottleWait(tell)] : [],
  );
  return () => {
    for (const o of off) o();
  };
}
