import type { ConnectionKind } from '#domain/connectors.ts';
import {
  type ConnectionTestResult,
  type ConnectorTestInput,
  type SourceCredentials,
  SourceCredentialsSchema,
  type TargetCredentials,
  TargetCredentialsSchema,
} from '#domain/connectors.ts';
import { PROJECT_TRANSITIONS } from '#domain/lifecycle.ts';
import { OutboundRefused } from '#outbound/fetch.ts';
import { outboundUrlProblems } from '#outbound/validate.ts';
import { nowIso } from '#platform/clock.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { errors, type HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { credentialContext } from '#platform/secret-contexts.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import { type AdoClient, resolveOrganizationUrl } from '#trackers/ado/client.ts';
import {
  loadSource,
  loadTarget,
  openSourceClient,
  openTargetClient,
  type StoredSource,
  type StoredTarget,
  sourceClient,
  sourceSiteOf,
  targetClient,
  targetSiteOf,
} from '#trackers/connections.ts';
import type { HttpOptions } from '#trackers/http.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { CredentialsUnavailable } from '#trackers/oauth/token-source.ts';
import { holdConnection } from './connection-hold.ts';
import { checkTestSide, makerOf, sideOf } from './connection-use.ts';
import { findProject } from './projects.ts';

/** A connection test should answer in seconds: few retries, short timeouts. */
const TEST_HTTP: Partial<HttpOptions> = { maxAttempts: 2, timeoutMs: 15_000, initialDelayMs: 100 };

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

/**
 * What a caller is told when the tracker cannot be reached, whatever the reason: the policy refused the name's
 * address or a redirect, the name does not resolve, the connection was refused or reset, the tracker never
 * answered. One sentence, so that a connection test tells nothing of what listens where (the reason is logged).
 */
export const unreachableMessage = (kind: ConnectionKind) =>
  `${kind} tracker unreachable: the service could not connect to it (it connects only to the public https addresses of supported trackers and of hosts your operator allows)`;

/** The spec's messages for what a tracker answered. */
export function describeTrackerFailure(kind: ConnectionKind, err: unknown, notFound: string): string {
  if (err instanceof OutboundRefused || err instanceof TrackerUnreachableError) {
    logger.warn('tracker unreachable', {
      kind,
      ...(err instanceof TrackerUnreachableError ? { host: err.host } : {}),
      reason: err.reason,
    });
    return unreachableMessage(kind);
  }
  // No OAuth token: "Token exchange failed" (reconnect) or the provider unreachable, and what to do about it.
  if (err instanceof CredentialsUnavailable) return err.message;
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
const noStoredCredentials = (projectId: string, kind: ConnectionKind) =>
  errors.validation([`credentials is required: project ${projectId} has no stored ${kind} credentials`]);

export const storedCredentials = <K extends ConnectionKind>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: K,
) => requireStored(store, tenantId, projectId, kind, () => noStoredCredentials(projectId, kind));

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
    // Creating components and sprints needs the project administrator role: say so now, not mid-run.
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
  const stored = project
    ? await (kind === 'source'
        ? loadSource(store, principal.tenantId, project.id)
        : loadTarget(store, principal.tenantId, project.id))
    : undefined;
  let raw: unknown = input.credentials;
  if (!raw) {
    if (!stored) throw noStoredCredentials(project!.id, kind);
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
  // Credentials in the body for a project are stored in place of its connection: a member may not replace one
  // someone else made (services/connection-use.ts). The stored token tested again, or sent again, keeps its
  // maker; one stored before makers were kept becomes the testing owner's or admin's.
  const side = sideOf(stored, input.credentials ? creds : undefined);
  if (project) checkTestSide(principal, kind, side);
  // Nor elsewhere than an unfinished run of the project works (services/connection-hold.ts): refused before the
  // other site is asked anything.
  if (project && side.bringsOther)
    await holdConnection(
      store,
      principal.tenantId,
      project.id,
      kind,
      stored,
      'organization_url' in creds ? sourceSiteOf(creds) : targetSiteOf(creds),
    );
  const adopts = !stored?.connectedBy && principal.role !== 'member';
  const connectedBy = side.bringsOther || adopts ? makerOf(principal) : stored?.connectedBy;
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

  const outcome = {
    ok: result.success,
    message: result.message,
    testedAt: nowIso(),
    summary: summaryOf(input, creds, result),
  };
  if (stored && !side.bringsOther) {
    // The stored connection tested (sent again or not): whatever the tracker answered, only the outcome is
    // recorded; its credentials stay, so a test once the tracker is back connects it again.
    await store.connections.recordTest(principal.tenantId, project.id, kind, { ...outcome, connectedBy });
  } else if (result.success || !stored) {
    // Other credentials replace the stored connection only when they work (a member's only where
    // checkTestSide let them); where none is stored, a failure is shown with no credentials kept.
    await store.connections.put(principal.tenantId, project.id, {
      kind,
      ...outcome,
      method: 'token',
      ...(connectedBy ? { connectedBy } : {}),
      ...(result.success
        ? {
            sealed: await credentialCipher().seal(
              JSON.stringify(creds),
              credentialContext(principal.tenantId, project.id, kind),
            ),
          }
        : {}),
    });
  }
  // Other credentials that failed replace nothing: the stored token or grant stays as it was.
  if (result.success) await connectIfBothOk(store, principal.tenantId, project.id, kind);
  return result;
}
