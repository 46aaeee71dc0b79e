/**
 * Tells the run's stream (and the tenant dashboard: `run.waiting`) when a tracker makes the whole run wait (Jira's
 * hourly quota spent, Azure DevOps blocking the identity): "Waiting for Jira's hourly quota until 14:00 UTC", through
 * the run journal. The HTTP layer does the waiting; this only tells it.
 */
import type { Run } from '#domain/runs.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { logger } from '#platform/logger.ts';
import type { ThrottleWaitNotice } from '#trackers/http.ts';

/** Subscribes the run's stream to both trackers' long waits; answers the unsubscribe. */
export function tellWaits(deps: Pick<EngineDeps, 'journal' | 'source' | 'target'>, run: Run): () => void {
  const tell = (notice: ThrottleWaitNotice) => {
    deps.journal
      .waiting(run, notice)
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
