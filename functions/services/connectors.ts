/**
 * Connectors: test credentials against a tracker and scan a source project. Named projects keep the
 * credentials sealed, move DRAFT -> CONNECTED when both trackers answer, and -> SCANNED after a scan.
 */
import { v7 as uuidv7 } from 'uuid';
import {
  ASYNC_SCAN_THRESHOLD,
  type ConnectionTestResult,
  type ConnectorTestInput,
  type ScanRequest,
  type SourceCredentials,
  SourceCredentialsSchema,
  type TargetCredentials,
  TargetCredentialsSchema,
} from '#domain/connectors.ts';
import { PROJECT_TRANSITIONS } from '#domain/lifecycle.ts';
import { buildScanReport, type ScanReport } from '#domain/scan-report.ts';
import { OutboundRefused } from '#outbound/fetch.ts';
import { outboundUrlProblems } from '#outbound/validate.ts';
import { nowIso, nowMs } from '#platform/clock.ts';
import { credentialCipher, type SealedSecret } from '#platform/credentials-cipher.ts';
import { ErrorCode, errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import type { Principal } from '#platform/tokens.ts';
import type { ConnectionKind, StoredConnection } from '#store/connections.ts';
import type { Store } from '#store/index.ts';
import type { ScanRecord } from '#store/scans.ts';
import { type AdoClient, resolveOrganizationUrl } from '#trackers/ado/client.ts';
import type { HttpOptions } from '#trackers/http.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { CredentialsUnavailable } from '#trackers/oauth/token-source.ts';
import { findProject } from './projects.ts';
import { offerQuote } from './quotes.ts';
import type { ScanDispatcher, ScanJob } from './scan-dispatch.ts';
import {
  credentialContext,
  loadSource,
  loadTarget,
  openSourceClient,
  openTargetClient,
  type StoredSource,
  type StoredTarget,
  sourceClient,
  targetClient,
} from './tracker-connections.ts';

/** A connection test should answer in seconds: few retries, short timeouts. */
const TEST_HTTP: Partial<HttpOptions> = { maxAttempts: 2, timeoutMs: 15_000, initialDelayMs: 100 };
const SCAN_CHUNK = 1_000;

/**
 * The outbound policy at the edge: credentials naming a URL the service may not reach are refused (400) before
 * any request, whatever listens there (functions/outbound/validate.ts).
 */
export function refuseOutbound(creds: SourceCredentials | TargetCredentials): void {
  const problems = outboundUrlProblems(
    'organization_url' in creds
      ? { 'credentials.organization_url': resolveOrganizationUrl(creds.organization_url) }
      : { 'credentials.base_url': creds.base_url },
  );
  if (problems.length) throw errors.validation(problems);
}

/** The spec's messages for what a tracker answered. */
export function describeTrackerFailure(kind: ConnectionKind, err: unknown, notFound: string): string {
  // Refused by the outbound policy (a name resolving to a private address, a redirect elsewhere): one message.
  if (err instanceof OutboundRefused) return `${kind} connection refused: ${err.message}`;
  // No OAuth token: "Token exchange failed" (reconnect) or the provider unreachable, and what to do about it.
  if (err instanceof CredentialsUnavailable) return err.message;
  if (err instanceof TrackerUnreachableError)
    return `${kind} tracker unreachable at ${err.host} (${err.reason})`;
  if (err instanceof TrackerHttpError)
    return err.status === 404 ? notFound : `${kind} connection failed with ${err.status}`;
  throw err;
}

/** The project's stored credentials of `kind`, opened; `missing` says how their absence is refused. */
export async function requireStored<K extends ConnectionKind>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: K,
  missing: () => HttpError,
): Promise<K extends 'source' ? StoredSource : StoredTarget> {
  const stored =
    kind === 'source'
      ? await loadSource(store, tenantId, projectId)
      : await loadTarget(store, tenantId, projectId);
  if (!stored) throw missing();
  return stored as K extends 'source' ? StoredSource : StoredTarget;
}

/** A request that gave no credentials falls back on the project's: without them, the body lacked a field. */
const storedCredentials = <K extends ConnectionKind>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: K,
) =>
  requireStored(store, tenantId, projectId, kind, () =>
    errors.validation([`credentials is required: project ${projectId} has no stored ${kind} credentials`]),
  );

/** Reads the project's work item count: the source works when this does. */
export async function testSourceClient(
  client: AdoClient,
  projectName: string,
): Promise<ConnectionTestResult> {
  try {
    const itemCount = (await client.idsInScope()).length;
    const metadata = { organisation: client.organizationName, project: projectName, itemCount };
    return {
      success: true,
      message: `Connected to Azure DevOps project ${projectName} in ${metadata.organisation}: ${itemCount} work items`,
      metadata,
    };
  } catch (err) {
    return { success: false, message: describeTrackerFailure('source', err, 'source project not found') };
  }
}

/** Reads the account, the project and the account's rights in it; `site` names the site in the message. */
export async function testTargetClient(
  client: JiraClient,
  projectKey: string,
  site: string = client.siteHost,
): Promise<ConnectionTestResult> {
  try {
    await client.myself();
    const project = await client.project(projectKey);
    const permissions = await client.myPermissions(projectKey, ['ADMINISTER_PROJECTS']);
    // Creating components, sprints and versions needs the project administrator role: say so now, not mid-run.
    if (!permissions.ADMINISTER_PROJECTS)
      return { success: false, message: 'target connection failed with 403' };
    const itemCount = await client.countIssues(projectKey);
    const metadata = { organisation: site, project: project.name, itemCount };
    return {
      success: true,
      message: `Connected to Jira project ${project.key} at ${metadata.organisation}: ${itemCount} issues`,
      metadata,
    };
  } catch (err) {
    return { success: false, message: describeTrackerFailure('target', err, 'target project key not found') };
  }
}

function summaryOf(
  input: ConnectorTestInput,
  creds: SourceCredentials | TargetCredentials,
  result: ConnectionTestResult,
) {
  const base = result.metadata ? { ...result.metadata } : {};
  if (input.type === 'azure_devops') {
    const c = creds as SourceCredentials;
    return { ...base, organizationUrl: c.organization_url, projectName: c.project };
  }
  const c = creds as TargetCredentials;
  return { ...base, baseUrl: c.base_url, email: c.email, projectKey: c.project_key };
}

/** Both trackers answered: the project is CONNECTED (from DRAFT; later statuses stay). */
export async function connectIfBothOk(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: ConnectionKind,
) {
  const other = await store.connections.get(tenantId, projectId, kind === 'source' ? 'target' : 'source');
  const { from, to } = PROJECT_TRANSITIONS.connect;
  if (other?.ok) await store.projects.transition(tenantId, projectId, [...from], to);
}

/** The non-secret summary of an OAuth connection's test. */
export function oauthSummary(stored: StoredSource | StoredTarget, result: ConnectionTestResult) {
  const base = { ...(result.metadata ?? {}), auth: 'oauth' };
  return 'organization_url' in stored.creds
    ? { ...base, organizationUrl: stored.creds.organization_url, projectName: stored.creds.project }
    : { ...base, baseUrl: stored.creds.base_url, projectKey: stored.creds.project_key };
}

/**
 * One test of an OAuth grant (stored, or just made): the same checks as a pasted token's, with its token source
 * (refreshed if due); no token to be had is a failed test with its reason, not an error.
 */
export async function testOAuthGrant(
  store: Store,
  tenantId: string,
  projectId: string,
  stored: StoredSource | StoredTarget,
  http: Partial<HttpOptions> = {},
): Promise<ConnectionTestResult> {
  try {
    if ('organization_url' in stored.creds)
      return await testSourceClient(
        await openSourceClient(store, tenantId, projectId, stored as StoredSource, { http }),
        stored.creds.project,
      );
    const target = stored as StoredTarget;
    return await testTargetClient(
      await openTargetClient(store, tenantId, projectId, target, { http }),
      target.creds.project_key,
      new URL(target.creds.base_url).host,
    );
  } catch (err) {
    if (!(err instanceof CredentialsUnavailable)) throw err;
    return { success: false, message: err.message };
  }
}

/**
 * Tests a stored OAuth connection with its own grant (refreshed if due, as a run would). The grant stays
 * stored whatever the outcome: only a reconnect replaces it; a refusal has already marked it.
 */
async function testStoredOAuth(
  store: Store,
  tenantId: string,
  projectId: string,
  stored: StoredSource | StoredTarget,
): Promise<ConnectionTestResult> {
  const kind: ConnectionKind = 'organization_url' in stored.creds ? 'source' : 'target';
  const result = await testOAuthGrant(store, tenantId, projectId, stored, TEST_HTTP);
  const refused = (await store.connections.get(tenantId, projectId, kind))?.reconnectRequired;
  // A refused grant keeps its "reconnect" mark: a test cannot revive it, only a new grant can.
  if (!refused || result.success)
    await store.connections.recordTest(tenantId, projectId, kind, {
      ok: result.success,
      message: result.message,
      testedAt: nowIso(),
      summary: oauthSummary(stored, result),
    });
  if (result.success) await connectIfBothOk(store, tenantId, projectId, kind);
  return result;
}

export async function testConnection(
  store: Store,
  principal: Principal,
  input: ConnectorTestInput,
): Promise<ConnectionTestResult> {
  const kind: ConnectionKind = input.type === 'azure_devops' ? 'source' : 'target';
  const project = input.projectId ? await findProject(store, principal.tenantId, input.projectId) : undefined;
  if (!input.credentials && !project) throw errors.validation(['credentials is required']);
  let raw: unknown = input.credentials;
  if (!raw) {
    const stored = await storedCredentials(store, principal.tenantId, project!.id, kind);
    if (stored.method === 'oauth') {
      const result = await testStoredOAuth(store, principal.tenantId, project!.id, stored);
      logger.info('connection tested', {
        tenantId: principal.tenantId,
        projectId: project!.id,
        kind,
        auth: 'oauth',
        success: result.success,
      });
      return result;
    }
    raw = stored.creds;
  }
  const creds = kind === 'source' ? SourceCredentialsSchema.parse(raw) : TargetCredentialsSchema.parse(raw);
  refuseOutbound(creds);
  const result =
    kind === 'source'
      ? await testSourceClient(
          sourceClient(creds as SourceCredentials, TEST_HTTP),
          (creds as SourceCredentials).project,
        )
      : await testTargetClient(
          targetClient(creds as TargetCredentials, TEST_HTTP),
          (creds as TargetCredentials).project_key,
        );
  logger.info('connection tested', {
    tenantId: principal.tenantId,
    projectId: project?.id,
    kind,
    success: result.success,
  });
  if (!project) return result;

  const record: StoredConnection = {
    kind,
    ok: result.success,
    message: result.message,
    testedAt: nowIso(),
    summary: summaryOf(input, creds, result),
    method: 'token',
    // Only credentials that worked are kept; a failed test leaves none behind to be used by mistake.
    ...(result.success
      ? {
          sealed: await credentialCipher().seal(
            JSON.stringify(creds),
            credentialContext(principal.tenantId, project.id, kind),
          ),
        }
      : {}),
  };
  await store.connections.put(principal.tenantId, project.id, record);
  if (result.success) await connectIfBothOk(store, principal.tenantId, project.id, kind);
  return result;
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

/**
 * A background scan's record may carry the request's inline source credentials, sealed and bound to the scan:
 * the worker gets ids only, so this is how credentials that were never stored on a project reach it. Written
 * only while the scan runs; the outcome replaces the whole record, and the API never shows the field.
 */
type BackgroundScanRecord = ScanRecord & { sealedCredentials?: SealedSecret };
const scanCredentialContext = (scan: ScanRecord) => ({
  tenantId: scan.tenantId,
  scanId: scan.scanId,
  kind: 'scan-source',
});

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
        sealedCredentials: await credentialCipher().seal(JSON.stringify(inline), scanCredentialContext(scan)),
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
  const record = (await store.scans.get(job.tenantId, job.scanId)) as BackgroundScanRecord | undefined;
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
      const raw = JSON.parse(await credentialCipher().open(sealedCredentials, scanCredentialContext(scan)));
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
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const scan = uuid.test(scanId) ? await store.scans.get(tenantId, scanId.toLowerCase()) : undefined;
  if (!scan) throw errors.scanNotFound(scanId);
  if (scan.status === 'RUNNING' && nowMs() - Date.parse(scan.startedAt) > STALE_SCAN_MS) {
    const { sealedCredentials: _sealed, ...plain } = scan as BackgroundScanRecord;
    return failScan(
      store,
      plain,
      'the scan worker stopped before the scan finished; start the scan again',
      new Error(`scan still RUNNING ${STALE_SCAN_MS / 60_000} minutes after it started`),
    );
  }
  return scan;
}
