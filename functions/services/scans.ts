/**
 * Scans of a source project: count what a migration would move, in the request for small projects and in the
 * background (./scan-dispatch.ts) for large ones; a named project moves -> SCANNED after a scan.
 */

import { v7 as uuidv7 } from 'uuid';
import {
  ASYNC_SCAN_THRESHOLD,
  type ScanRequest,
  type SourceCredentials,
  SourceCredentialsSchema,
} from '#domain/connectors.ts';
import { storedId } from '#domain/ids.ts';
import { PROJECT_TRANSITIONS } from '#domain/lifecycle.ts';
import type { ScanReport } from '#domain/scan-report.ts';
import {
  decideScanSlot,
  SCAN_LOST_AFTER_MS,
  type ScanSlotDecision,
  type ScanSubject,
  scanSubject,
} from '#domain/scan-slots.ts';
import { nowEpochSeconds, nowIso, nowMs } from '#platform/clock.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { ErrorCode, errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { scanCredentialContext } from '#platform/secret-contexts.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { ScanLeaseOutcome } from '#store/scan-leases.ts';
import type { BackgroundScanRecord, ScanRecord } from '#store/scans.ts';
import { type AdoClient, resolveOrganizationUrl } from '#trackers/ado/client.ts';
import { openSourceClient, sourceClient } from '#trackers/connections.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import { CredentialsUnavailable } from '#trackers/oauth/token-source.ts';
import { describeTrackerFailure, refuseOutbound, storedCredentials } from './connectors.ts';
import { findProject } from './projects.ts';
import { offerQuote } from './quotes.ts';
import { scanItems } from './scan-items.ts';

/** A scan handed to the background: ids only, the worker reads the record and unseals the credentials itself. */
export interface ScanJob {
  tenantId: string;
  /** Null for a scan of inline credentials with no project. */
  projectId: string | null;
  scanId: string;
}

/** How many background scans one tenant may have running at once (SCAN_MAX_PER_TENANT). */
export interface ScanLimits {
  maxPerTenant: number;
}

/** Where a large scan runs once its answer (202) has gone (implementations: ./scan-dispatch.ts). */
export interface ScanDispatcher {
  /** Hands the scan over; resolves once it is accepted (not done). Throws when it cannot be handed over. */
  dispatch(job: ScanJob): Promise<void>;
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

/** When a running scan's place lapses: when the scan counts as lost (STALE_SCAN_MS after it started). */
const placeExpiry = (scan: ScanRecord) => Math.floor((Date.parse(scan.startedAt) + STALE_SCAN_MS) / 1000);

/**
 * Settles a start against the tenant's running background scans (functions/domain/scan-slots.ts): undefined when
 * nothing stands in the way (or `attempt` took a place), the running scan of the same project or request to
 * answer, or the refusal (409 `SCAN_ALREADY_RUNNING`, 429 `SCAN_LIMIT`). A place still held by a scan that has
 * ended (its worker stopped between recording the end and giving the place back) is freed and the start
 * decided again.
 */
async function againstRunningScans(
  store: Store,
  tenantId: string,
  attempt: () => Promise<ScanSlotDecision | ScanLeaseOutcome>,
): Promise<ScanRecord | undefined> {
  for (let tries = 0; tries < 3; tries++) {
    const outcome = await attempt();
    if (outcome.kind === 'free' || outcome.kind === 'taken') return undefined;
    if (outcome.kind === 'full') throw errors.scanLimit(outcome.max);
    const scan = await store.scans.get(tenantId, outcome.scanId);
    if (scan?.status === 'RUNNING') {
      if (outcome.kind === 'credential-busy') throw errors.scanAlreadyRunning(outcome.scanId);
      return scan;
    }
    await store.scanLeases.release(tenantId, outcome.scanId);
  }
  throw new Error(`tenant ${tenantId}: scan places kept pointing at ended scans`);
}

/**
 * Counts the items in scope first: up to 10,000 the scan runs within the request; beyond, the answer comes at
 * once and the dispatcher hands the scan (by ids) to the background: this process offline, the scan worker
 * Lambda in AWS (functions/services/scan-dispatch.ts). Its progress is readable at /api/audit/{scanId}.
 * Background scans are bounded: one running per project and per credential (a start of the same project, or
 * of the same inline credentials and project, answers the running scan, before the tracker is asked again),
 * and `limits.maxPerTenant` running in a tenant.
 */
export async function startScan(
  store: Store,
  principal: Principal,
  input: ScanRequest,
  dispatcher: ScanDispatcher,
  limits: ScanLimits,
): Promise<ScanAnswer> {
  const project = input.projectId ? await findProject(store, principal.tenantId, input.projectId) : undefined;
  if (!input.credentials && !project) throw errors.validation(['credentials is required']);
  const inline = input.credentials ? SourceCredentialsSchema.parse(input.credentials) : undefined;
  if (inline) refuseOutbound(inline);
  const { tenantId } = principal;
  const subject = scanSubject(
    project?.id ?? null,
    inline && {
      organizationUrl: resolveOrganizationUrl(inline.organization_url),
      project: inline.project,
      token: inline.personal_access_token,
    },
  );
  const running = await againstRunningScans(store, tenantId, async () =>
    decideScanSlot(
      await store.scanLeases.live(tenantId, nowEpochSeconds()),
      subject,
      Number.POSITIVE_INFINITY,
    ),
  );
  if (running) return { async: true, scan: running };
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

  return { async: true, scan: await startInBackground(store, scan, subject, inline, dispatcher, limits) };
}

/**
 * Records the background scan (with the request's credentials sealed onto it), takes its place among the
 * tenant's running scans and hands it to the dispatcher. Recorded before the place is taken, so a start that
 * meets the place always finds the scan it answers (a place without its record is one left behind, and
 * freed); a start that finds another scan of its scope, or is refused, takes its record back.
 */
async function startInBackground(
  store: Store,
  scan: ScanRecord,
  subject: ScanSubject,
  inline: SourceCredentials | undefined,
  dispatcher: ScanDispatcher,
  limits: ScanLimits,
): Promise<ScanRecord> {
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
  let running: ScanRecord | undefined;
  try {
    running = await takePlace(store, scan, subject, limits);
  } catch (err) {
    await store.scans.delete(scan.tenantId, scan.scanId);
    throw err;
  }
  if (running) {
    await store.scans.delete(scan.tenantId, scan.scanId);
    return running;
  }
  try {
    await dispatcher.dispatch({ tenantId: scan.tenantId, projectId: scan.projectId, scanId: scan.scanId });
  } catch (err) {
    // Decision: a scan no worker received would stay RUNNING for ever and its audit would never end. It is
    // marked FAILED with the reason, and the request answers 502 ENGINE_DISPATCH_FAILED ("Could not start the
    // scan worker") rather than a 202 for a scan that will never run; the client may simply ask again.
    await failScan(store, scan, 'the scan worker could not be started', err);
    await store.scanLeases.release(scan.tenantId, scan.scanId);
    throw new HttpError(502, ErrorCode.ENGINE_DISPATCH_FAILED, 'Could not start the scan worker');
  }
  return scan;
}

/**
 * Takes the background scan's place: undefined when taken, the scan of the same scope another start got in
 * first with, or the refusal thrown.
 */
function takePlace(
  store: Store,
  scan: ScanRecord,
  subject: ScanSubject,
  limits: ScanLimits,
): Promise<ScanRecord | undefined> {
  const lease = { scanId: scan.scanId, ...subject, expiresAt: placeExpiry(scan) };
  return againstRunningScans(store, scan.tenantId, () =>
    store.scanLeases.acquire(
      scan.tenantId,
      lease,
      (live) => decideScanSlot(live, subject, limits.maxPerTenant),
      nowEpochSeconds(),
    ),
  );
}

/**
 * The background half of a large scan, given ids only: what the scan worker Lambda runs (functions/workers/
 * scan.ts) and what this process runs offline. It reads the scan record, unseals the source credentials itself
 * (the request's, sealed onto the record, else the project's stored ones), lists the items in scope again and
 * runs the same scan as a request would. Every failure past the read of the record is recorded on the scan
 * (FAILED with a clear reason); a scan that is no longer RUNNING (a repeated invocation) is left as it is.
 * Once it has ended the scan's place among the tenant's running scans is given back.
 */
export async function runScanJob(store: Store, job: ScanJob): Promise<ScanRecord | undefined> {
  const ended = await workScanJob(store, job);
  // Ended (recorded), ended before, or unknown: its place is free. A throw (the store out of reach) keeps it
  // for Lambda's retry, and it lapses by itself if none comes.
  await store.scanLeases.release(job.tenantId, job.scanId);
  return ended;
}

async function workScanJob(store: Store, job: ScanJob): Promise<ScanRecord | undefined> {
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
 * A scan still RUNNING this long after it started has lost its worker: it waits at most 5 minutes for one and
 * the scan worker Lambda stops at 15 (a scan of 100,000 items takes a few), so nothing will ever finish it. It
 * is reported FAILED.
 */
export const STALE_SCAN_MS = SCAN_LOST_AFTER_MS;

export async function getScan(store: Store, tenantId: string, scanId: string): Promise<ScanRecord> {
  const id = storedId(scanId);
  const scan = id ? await store.scans.get(tenantId, id) : undefined;
  if (!scan) throw errors.scanNotFound(scanId);
  if (scan.status === 'RUNNING' && nowMs() - Date.parse(scan.startedAt) > STALE_SCAN_MS) {
    const lost = await failScan(
      store,
      scan,
      'the scan worker stopped before the scan finished; start the scan again',
      new Error(`scan still RUNNING ${STALE_SCAN_MS / 60_000} minutes after it started`),
    );
    // Its place has lapsed by now anyway; this tidies it away.
    await store.scanLeases.release(tenantId, scan.scanId);
    return lost;
  }
  return scan;
}
