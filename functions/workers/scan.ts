/**
 * The scan worker: runs, in a Lambda of its own (15 minutes), a scan too large for a request. The connectors
 * API invokes it asynchronously with ids only ({tenantId, projectId, scanId}); it reads the scan record,
 * unseals the source credentials itself and runs the same scan code as a request (runScanJob), recording
 * progress and the outcome on the scan. A scan failure is recorded (FAILED, with the reason) and the
 * invocation succeeds, so Lambda does not retry it; only a failure to reach the store at all is thrown, and
 * then Lambda's asynchronous retries run the job again (a scan no longer RUNNING is left alone).
 */

import * as z from 'zod';
import { logger } from '#platform/logger.ts';
import { flushMetrics } from '#platform/metrics.ts';
import { runScanJob } from '#services/scans.ts';
import { store } from '#store/index.ts';

const ScanJobSchema = z.object({
  tenantId: z.string().min(1),
  projectId: z.string().min(1).nullable(),
  scanId: z.string().min(1),
});

export interface ScanWorkerResult {
  scanId: string | undefined;
  status: 'COMPLETED' | 'FAILED' | 'RUNNING' | 'NOT_FOUND' | 'INVALID_EVENT';
}

export const handler = async (event: unknown): Promise<ScanWorkerResult> => {
  const job = ScanJobSchema.safeParse(event);
  if (!job.success) {
    // A retry would get the same event: log it (ids only, no values) and end.
    logger.error('scan worker got a malformed event', {
      issues: job.error.issues.map((i) => i.path.join('.')),
    });
    return { scanId: undefined, status: 'INVALID_EVENT' };
  }
  let scan: Awaited<ReturnType<typeof runScanJob>>;
  try {
    scan = await runScanJob(store(), job.data);
  } finally {
    flushMetrics(); // the scan's tracker calls and throttles
  }
  const status = scan?.status ?? 'NOT_FOUND';
  logger.info('scan worker done', { tenantId: job.data.tenantId, scanId: job.data.scanId, status });
  return { scanId: job.data.scanId, status };
};
