/**
 * Where a large scan runs once its answer (202) has gone: in this process offline, in the scan worker Lambda
 * in AWS, where work left running after a response would be frozen with the sandbox. Either way the scan is
 * handed over by ids only; the worker reads the record and unseals the credentials itself
 * (runScanJob in ./scans.ts), so no credential travels in an invocation payload.
 */
import { InvocationType, InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { type EnvInput, readEnv } from '#platform/env.ts';
import { logger } from '#platform/logger.ts';
import { type Store, store } from '#store/index.ts';
import { runScanJob, type ScanDispatcher, type ScanJob } from './scans.ts';

export type { ScanDispatcher, ScanJob };

/** Offline: the scan runs in this process after the answer (the Node process outlives the request). */
export class InProcessScanDispatcher implements ScanDispatcher {
  constructor(private readonly store: () => Store) {}

  async dispatch(job: ScanJob): Promise<void> {
    runScanJob(this.store(), job).catch((err: unknown) =>
      logger.error('background scan failed', {
        tenantId: job.tenantId,
        scanId: job.scanId,
        errorMessage: err instanceof Error ? err.message : String(err),
      }),
    );
  }
}

export interface LambdaScanDispatcherOptions {
  lambda: LambdaClient;
  /** The scan worker's name or ARN (SCAN_FUNCTION_NAME). */
  functionName: string;
}

/** AWS: an asynchronous invoke (InvocationType Event) of the scan worker, whose payload is the ids alone. */
export class LambdaScanDispatcher implements ScanDispatcher {
  constructor(private readonly opts: LambdaScanDispatcherOptions) {}

  async dispatch({ tenantId, projectId, scanId }: ScanJob): Promise<void> {
    const out = await this.opts.lambda.send(
      new InvokeCommand({
        FunctionName: this.opts.functionName,
        InvocationType: InvocationType.Event,
        Payload: Buffer.from(JSON.stringify({ tenantId, projectId, scanId })),
      }),
    );
    // An accepted asynchronous invoke answers 202; anything else means no worker will see the scan.
    if (out.StatusCode !== 202) throw new Error(`scan worker invoke answered ${out.StatusCode ?? 'nothing'}`);
    logger.info('scan dispatched to the worker', { tenantId, projectId, scanId });
  }
}

/** The dispatcher of this deployment, chosen at cold start: the worker Lambda when SCAN_FUNCTION_NAME is set. */
export function scanDispatcherFromEnv(store: () => Store, source?: EnvInput): ScanDispatcher {
  const { SCAN_FUNCTION_NAME: functionName, AWS_REGION: region } = readEnv(
    ['SCAN_FUNCTION_NAME', 'AWS_REGION'],
    source,
  );
  if (!functionName) return new InProcessScanDispatcher(store);
  return new LambdaScanDispatcher({ lambda: new LambdaClient(region ? { region } : {}), functionName });
}

/** The process's dispatcher (see adapter-slot.ts), over the process's store. */
export const scanDispatcher = adapterSlot(() => scanDispatcherFromEnv(store));
