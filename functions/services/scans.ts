/**
 * Scans of a source project: count what a migration would move, in the request for small projects and in the
 * background (./scan-dispatch.ts) for large ones; a named project moves -> SCANNED after a scan.
 */

import { v7 as uuidv7 } from 'uuid';
import { ASYNC_SCAN_THRESHOLD, type ScanRequest, SourceCredentialsSchema } from '#domain/connectors.ts';
import { storedId } from '#domain/ids.ts';
import { PROJECT_TRANSITIONS } from '#domain/lifecycle.ts';
import { buildScanReport, type ScanReport } from '#domain/scan-report.ts';
import { nowIso, nowMs } from '#platform/clock.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { ErrorCode, errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { scanCredentialContext } from '#platform/secret-contexts.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { BackgroundScanRecord, ScanRecord } from '#store/scans.ts';
import type { AdoClient } from '#trackers/ado/client.ts';
import { openSourceClient, sourceClient } from '#trackers/connections.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import { CredentialsUnavailable } from '#trackers/oauth/token-source.ts';
import { describeTrackerFailure, refuseOutbound, storedCredentials } from './connectors.ts';
import { findProject } from './projects.ts';
import { offerQuote } from './quotes.ts';

const SCAN_CHUNK = 1_000;

/** A scan handed to the background: ids only, the worker reads the record and unseals the credentials itself. */
export interface ScanJob {
  tenantId: string;
  /** Null for a scan of inline credentials with no project. */
  projectId: string | null;
  scanId: string;
}

/** Where a large scan runs once its answer (202) has gone (implementations: ./scan-dispatch.ts). */
export interface ScanDispatcher {
  /** Hands the scan over; resolves once it is accepted (not done). Throws when it cannot be handed over. */
  dispatch(job: ScanJob): Promise<void>;
}

async function scanItems(
  client: AdoClient,
  ids: number[],
  onProgress: (processed: number) => Promise<void>,
): Promise<ScanReport> {
  const [areas, iterations, fieldDefinitions] = await Promise.all([
    client.classificationNodes('areas'),
    client.classificationNodes('iterations'),
    client.fields(),
  ]);
  const items = [];
  for (let i = 0; i < ids.length; i += SCAN_CHUNK) {
    items.push(...(await client.workItems(ids.slice(i, i + SCAN_CHUNK), { expand: 'relations' })));
    await onProgress(Math.min(ids.length, i + SCAN_CHUNK));
  }
  const needCounts = items.some((i) => i.fields['System.CommentCount'] === undefined);
  const commentCount = needCounts
    ? (await Promise.all(items.map((i) => client.commentCount(i.id)))).reduce((a, b) => a + b, 0)
    : undefined;
  return buildScanReport({
    items,
    areas,
    iterations,
    fieldDefinitions,
    ...(commentCount !== undefined ? { commentCount } : {}),
  });
}

async function finishScan(store: Store, scan: ScanRecord, report: ScanReport): Promise<ScanRecord> {
  const done: ScanRecord = {
    ...scan,
    status: 'COMPLETED',
    progress: { processed: report.totalWorkItems, total: report.totalWorkItems, percent: 100 },
    finishedAt: nowIso(),
    report,
  };
  await store.scans.put(done);
  if (scan.projectId) {
    await store.projects.setAttributes(scan.tenantId, scan.projectId, {
      scanSummary: {
        scanId: scan.scanId,
        scannedAt: done.finishedAt,
        totalWorkItems: report.totalWorkItems,
        typeCounts: report.typeCounts,
        attachmentTotalGb: report.attachmentTotalGb,
        commentCount: report.commentCount,
      },
    });
    await offerQuote(store, scan.tenantId, scan.projectId, scan.scanId, report.pricing);
    const { from, to } = PROJECT_TRANSITIONS.scan;
    await store.projects.transition(scan.tenantId, scan.projectId, [...from], to);
  }
  return done;
}

export type ScanAnswer = { async: false; scan: ScanRecord } | { async: true; scan: ScanRecord };

/** What a failed scan records: the spec's message for what the tracker answered, else a plain reason. */
function failureMessage(err: unknown): string {
  if (
    err instanceof TrackerHttpError ||
    err instanceof TrackerUnreachableError ||
    err instanceof CredentialsUnavailable
  )
    return describeTrackerFailure('source', err, 'source project not found');
  // Ours, written for the caller (e.g. the project has no stored source credentials).
  if (err instanceof HttpError) return err.message;
  return 'the scan failed unexpectedly';
}

async function failScan(store: Store, scan: ScanRecord, message: string, err: unknown): Promise<ScanRecord> {
  logger.error('scan failed', {
    tenantId: scan.tenantId,
    scanId: scan.scanId,
    reason: message,
    errorName: err instanceof Error ? err.name : undefined,
    errorMessage: err instanceof Error ? err.message : String(err),
  });
  const failed: ScanRecord = { ...scan, status: 'FAILED', finishedAt: nowIso(), error: message };
  await store.scans.put(failed);
  return failed;
}

/** Reads the items, records progress, then the outcome; a failure is recorded on the scan, not thrown. */
async function runScan(
  store: Store,
  scan: ScanRecord,
  client: AdoClient,
  ids: number[],
): Promise<ScanRecord> {
  const onProgress = (processed: number) =>
    store.scans.progress(scan.tenantId, scan.scanId, processed, ids.length);
  try {
    return await finishScan(store, scan, await scanItems(client, ids, onProgress));
  } catch (err) {
    return failScan(store, scan, failureMessage(err), err);
  }
}

/**
 * Counts the items in scope first: up to 10,000 the scan runs within the request; beyond, the answer comes at
 * once and the dispatcher hands the scan (by ids) to the background: this process offline, the scan worker
 * Lambda in AWS (functions/services/scan-dispatch.ts). Its progress is readable at /api/audit/{scanId}.
 */
export async function startScan(
  store: Store,
  principal: Principal,
  input: ScanRequest,
  dispatcher: ScanDispatcher,
): Promise<ScanAnswer> {
  const project = input.projectId ? await findProject(store, principal.tenantId, input.projectId) : undefined;
  if (!input.credentials && !project) throw errors.validation(['credentials is required']);
  const inline = input.credentials ? SourceCredentialsSchema.parse(input.credentials) : undefined;
  if (inline) refuseOutbound(inline);
  let client: AdoClient;
  let ids: number[];
  try {
    client = inline
      ? sourceClient(inline)
      : await openSourceClient(
          store,
          principal.tenantId,
          project!.id,
          await storedCredentials(store, principal.tenantId, project!.id, 'source'),
        );
    ids = await client.idsInScope();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw errors.sourceTracker(describeTrackerFailure('source', err, 'source project not found'));
  }
  const scan: ScanRecord = {
    scanId: uuidv7(),
    tenantId: principal.tenantId,
    projectId: project?.id ?? null,
    status: 'RUNNING',
    progress: { processed: 0, total: ids.length, percent: ids.length === 0 ? 100 : 0 },
    startedAt: nowIso(),
    finishedAt: null,
    report: null,
    error: null,
  };
  if (ids.length <= ASYNC_SCAN_THRESHOLD) {
    await store.scans.put(scan);
    const finished = await runScan(store, scan, client, ids);
    if (finished.status === 'FAILED') throw errors.sourceTracker(finished.error ?? 'scan failed');
    return { async: false, scan: finished };
  }

  const record: BackgroundScanRecord = inline
    ? {
        ...scan,
        sealedCredentials: await credentialCipher().seal(
          JSON.stringify(inline),
          scanCredentialContext(scan.tenantId, scan.scanId),
        ),
      }
    : scan;
  await store.scans.put(record);
  try {
    await dispatcher.dispatch({ tenantId: scan.tenantId, projectId: scan.projectId, scanId: scan.scanId });
  } catch (err) {
    // Decision: a scan no worker received would stay RUNNING for ever and its audit would never end. It is
    // marked FAILED with the reason, and the request answers 502 ENGINE_DISPATCH_FAILED ("Could not start the
    // scan worker") rather than a 202 for a scan that will never run; the client may simply ask again.
    await failScan(store, scan, 'the scan worker could not be started', err);
    throw new HttpError(502, ErrorCode.ENGINE_DISPATCH_FAILED, 'Could not start the scan worker');
  }
  return { async: true, scan };
}

/**
 * The background half of a large scan, given ids only: what the scan worker Lambda runs (functions/workers/
 * scan.ts) and what this process runs offline. It reads the scan record, unseals the source credentials itself
 * (the request's, sealed onto the record, else the project's stored ones), lists the items in scope again and
 * runs the same scan as a request would. Every failure past the read of the record is recorded on the scan
 * (FAILED with a clear reason); a scan that is no longer RUNNING (a repeated invocation) is left as it is.
 */
export async function runScanJob(store: Store, job: ScanJob): Promise<ScanRecord | undefined> {
  const ids = { tenantId: job.tenantId, scanId: job.scanId };
  const record = await store.scans.getForWorker(job.tenantId, job.scanId);
  if (!record) {
    logger.warn('scan job for an unknown scan', ids);
    return undefined;
  }
  if (record.status !== 'RUNNING') {
    logger.info('scan job skipped: the scan has ended', { ...ids, status: record.status });
    return record;
  }
  const { sealedCredentials, ...scan } = record;
  let client: AdoClient;
  let itemIds: number[];
  try {
    if (sealedCredentials) {
      const raw = JSON.parse(
        await credentialCipher().open(sealedCredentials, scanCredentialContext(scan.tenantId, scan.scanId)),
      );
      client = sourceClient(SourceCredentialsSchema.parse(raw));
    } else if (scan.projectId) {
      const stored = await storedCredentials(store, scan.tenantId, scan.projectId, 'source');
      client = await openSourceClient(store, scan.tenantId, scan.projectId, stored);
    } else {
      throw errors.validation(['credentials is required: the scan has neither credentials nor a project']);
    }
    itemIds = await client.idsInScope();
  } catch (err) {
    return failScan(store, scan, failureMessage(err), err);
  }
  logger.info('scan job started', { ...ids, projectId: scan.projectId, total: itemIds.length });
  return runScan(store, scan, client, itemIds);
}

/**
 * A scan still RUNNING this long after it started has lost its worker: the scan worker Lambda stops at 15
 * minutes (a scan of 100,000 items takes a few), so nothing will ever finish it. It is reported FAILED.
 */
export const STALE_SCAN_MS = 20 * 60_000;

export async function getScan(store: Store, tenantId: string, scanId: string): Promise<ScanRecord> {
  const id = storedId(scanId);
  const scan = id ? await store.scans.get(tenantId, id) : undefined;
  if (!scan) throw errors.scanNotFound(scanId);
  if (scan.status === 'RUNNING' && nowMs() - Date.parse(scan.startedAt) > STALE_SCAN_MS) {
    return failScan(
      store,
      scan,
      'the scan worker stopped before the scan finished; start the scan again',
      new Error(`scan still RUNNING ${STALE_SCAN_MS / 60_000} minutes after it started`),
    );
  }
  return scan;
}
