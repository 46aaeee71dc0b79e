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
import { buildScanReport, type ScanReport } from '#domain/scan-report.ts';
import { nowIso } from '#platform/clock.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import type { Principal } from '#platform/tokens.ts';
import type { ConnectionKind, StoredConnection } from '#store/connections.ts';
import type { Store } from '#store/index.ts';
import type { ScanRecord } from '#store/scans.ts';
import { AdoClient } from '#trackers/ado/client.ts';
import type { HttpOptions } from '#trackers/http.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import { JiraClient } from '#trackers/jira/client.ts';
import { findProject } from './projects.ts';

/** A connection test should answer in seconds: few retries, short timeouts. */
const TEST_HTTP: Partial<HttpOptions> = { maxAttempts: 2, timeoutMs: 15_000, initialDelayMs: 100 };
const SCAN_CHUNK = 1_000;

export const sourceClient = (c: SourceCredentials, http: Partial<HttpOptions> = {}) =>
  new AdoClient(
    { organization: c.organization_url, project: c.project, token: c.personal_access_token },
    http,
  );
export const targetClient = (c: TargetCredentials, http: Partial<HttpOptions> = {}) =>
  new JiraClient({ baseUrl: c.base_url, email: c.email, token: c.api_token }, http);

/** The spec's messages for what a tracker answered. */
export function describeTrackerFailure(kind: ConnectionKind, err: unknown, notFound: string): string {
  if (err instanceof TrackerUnreachableError)
    return `${kind} tracker unreachable at ${err.host} (${err.reason})`;
  if (err instanceof TrackerHttpError)
    return err.status === 404 ? notFound : `${kind} connection failed with ${err.status}`;
  throw err;
}

const context = (tenantId: string, projectId: string, kind: ConnectionKind) => ({
  tenantId,
  projectId,
  kind,
});
/** The authenticated data a project's sealed credentials are bound to (the run API seals with it too). */
export const credentialContext = context;

async function storedCredentials(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: ConnectionKind,
): Promise<unknown> {
  const stored = await store.connections.get(tenantId, projectId, kind);
  if (!stored?.sealed) {
    throw errors.validation([
      `credentials is required: project ${projectId} has no stored ${kind} credentials`,
    ]);
  }
  return JSON.parse(await credentialCipher().open(stored.sealed, context(tenantId, projectId, kind)));
}

async function testSource(c: SourceCredentials): Promise<ConnectionTestResult> {
  const client = sourceClient(c, TEST_HTTP);
  try {
    const itemCount = (await client.idsInScope()).length;
    const metadata = { organisation: client.organizationName, project: c.project, itemCount };
    return {
      success: true,
      message: `Connected to Azure DevOps project ${c.project} in ${metadata.organisation}: ${itemCount} work items`,
      metadata,
    };
  } catch (err) {
    return { success: false, message: describeTrackerFailure('source', err, 'source project not found') };
  }
}

async function testTarget(c: TargetCredentials): Promise<ConnectionTestResult> {
  const client = targetClient(c, TEST_HTTP);
  try {
    await client.myself();
    const project = await client.project(c.project_key);
    const permissions = await client.myPermissions(c.project_key, ['ADMINISTER_PROJECTS']);
    // Creating components, sprints and versions needs the project administrator role: say so now, not mid-run.
    if (!permissions.ADMINISTER_PROJECTS)
      return { success: false, message: 'target connection failed with 403' };
    const itemCount = await client.countIssues(c.project_key);
    const metadata = { organisation: client.siteHost, project: project.name, itemCount };
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

export async function testConnection(
  store: Store,
  principal: Principal,
  input: ConnectorTestInput,
): Promise<ConnectionTestResult> {
  const kind: ConnectionKind = input.type === 'azure_devops' ? 'source' : 'target';
  const project = input.projectId ? await findProject(store, principal.tenantId, input.projectId) : undefined;
  if (!input.credentials && !project) throw errors.validation(['credentials is required']);
  const raw = input.credentials ?? (await storedCredentials(store, principal.tenantId, project!.id, kind));
  const creds = kind === 'source' ? SourceCredentialsSchema.parse(raw) : TargetCredentialsSchema.parse(raw);
  const result =
    kind === 'source'
      ? await testSource(creds as SourceCredentials)
      : await testTarget(creds as TargetCredentials);
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
    // Only credentials that worked are kept; a failed test leaves none behind to be used by mistake.
    ...(result.success
      ? {
          sealed: await credentialCipher().seal(
            JSON.stringify(creds),
            context(principal.tenantId, project.id, kind),
          ),
        }
      : {}),
  };
  await store.connections.put(principal.tenantId, project.id, record);
  if (result.success) {
    const other = await store.connections.get(
      principal.tenantId,
      project.id,
      kind === 'source' ? 'target' : 'source',
    );
    if (other?.ok) await store.projects.transition(principal.tenantId, project.id, ['DRAFT'], 'CONNECTED');
  }
  return result;
}

/** How a scan runs after its answer: in this process offline; the deployment may hand it to a worker. */
export type BackgroundRunner = (name: string, work: () => Promise<void>) => void;

export const inProcessRunner: BackgroundRunner = (name, work) => {
  work().catch((err: unknown) =>
    logger.error('background work failed', {
      name,
      errorMessage: err instanceof Error ? err.message : String(err),
    }),
  );
};

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
      quote: { scanId: scan.scanId, ...report.pricing },
    });
    await store.projects.transition(scan.tenantId, scan.projectId, ['CONNECTED'], 'SCANNED');
  }
  return done;
}

export type ScanAnswer = { async: false; scan: ScanRecord } | { async: true; scan: ScanRecord };

/**
 * Counts the items in scope first: up to 10,000 the scan runs within the request; beyond, the answer comes at
 * once and the scan runs in the background, its progress readable at /api/audit/{scanId}.
 */
export async function startScan(
  store: Store,
  principal: Principal,
  input: ScanRequest,
  runInBackground: BackgroundRunner = inProcessRunner,
): Promise<ScanAnswer> {
  const project = input.projectId ? await findProject(store, principal.tenantId, input.projectId) : undefined;
  if (!input.credentials && !project) throw errors.validation(['credentials is required']);
  const creds = SourceCredentialsSchema.parse(
    input.credentials ?? (await storedCredentials(store, principal.tenantId, project!.id, 'source')),
  );
  const client = sourceClient(creds);
  let ids: number[];
  try {
    ids = await client.idsInScope();
  } catch (err) {
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
  await store.scans.put(scan);
  const onProgress = (processed: number) =>
    store.scans.progress(scan.tenantId, scan.scanId, processed, ids.length);
  const run = async () => {
    try {
      return await finishScan(store, scan, await scanItems(client, ids, onProgress));
    } catch (err) {
      const message =
        err instanceof TrackerHttpError || err instanceof TrackerUnreachableError
          ? describeTrackerFailure('source', err, 'source project not found')
          : 'the scan failed unexpectedly';
      logger.error('scan failed', {
        tenantId: scan.tenantId,
        scanId: scan.scanId,
        errorMessage: err instanceof Error ? err.message : String(err),
      });
      const failed: ScanRecord = { ...scan, status: 'FAILED', finishedAt: nowIso(), error: message };
      await store.scans.put(failed);
      return failed;
    }
  };
  if (ids.length > ASYNC_SCAN_THRESHOLD) {
    runInBackground(`scan ${scan.scanId}`, async () => {
      await run();
    });
    return { async: true, scan };
  }
  const finished = await run();
  if (finished.status === 'FAILED') throw errors.sourceTracker(finished.error ?? 'scan failed');
  return { async: false, scan: finished };
}

export async function getScan(store: Store, tenantId: string, scanId: string): Promise<ScanRecord> {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const scan = uuid.test(scanId) ? await store.scans.get(tenantId, scanId.toLowerCase()) : undefined;
  if (!scan) throw errors.scanNotFound(scanId);
  return scan;
}
