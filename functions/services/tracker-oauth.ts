/**
 * Connecting a project's tracker by OAuth 2.0 instead of a pasted token. Start (an authenticated API call):
 * a one-time attempt is recorded (state hashed, PKCE verifier, a browser-binding value whose cookie the answer
 * sets) and the provider's authorization URL returned for the browser to open. Callback (the provider sends
 * the browser back): the attempt is taken (deleted: a replay finds none), the code exchanged, Atlassian's site
 * found (accessible-resources), the connection tested with the new grant and stored sealed like any
 * credentials; the browser goes back to the app. Nothing is kept from a callback that fails before the test.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConnectionKind } from '#domain/connectors.ts';
import { resolveReturnTo, safeOAuthError } from '#domain/redirects.ts';
import {
  chooseSite,
  OAUTH_ATTEMPT_TTL_SECONDS,
  type OAuthSourceCredentials,
  OAuthSourceCredentialsSchema,
  type OAuthTargetCredentials,
  OAuthTargetCredentialsSchema,
  PROVIDER_OF,
  StartSourceOAuthSchema,
  StartTargetOAuthSchema,
  sameSite,
} from '#domain/tracker-oauth.ts';
import { outboundUrlProblems } from '#outbound/validate.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { OAUTH_CALLBACK_PATH } from '#platform/cookies.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { credentialContext } from '#platform/secret-contexts.ts';
import type { Principal } from '#platform/tokens.ts';
import { sha256Url } from '#platform/tokens.ts';
import { parseOrThrow } from '#platform/validation.ts';
import type { Store } from '#store/index.ts';
import type { OAuthAttempt } from '#store/oauth-attempts.ts';
import { resolveOrganizationUrl } from '#trackers/ado/client.ts';
import {
  loadSource,
  loadTarget,
  type StoredSource,
  type StoredTarget,
  sourceSiteOf,
  targetSiteOf,
} from '#trackers/connections.ts';
import { OAuthRefusal, type OAuthTokens, OAuthUnavailable } from '#trackers/oauth/providers.ts';
import { oauthProviders } from '#trackers/oauth/settings.ts';
import { holdConnection } from './connection-hold.ts';
import { connectIfBothOk, oauthSummary, testOAuthGrant } from './connectors.ts';
import { findProject } from './projects.ts';

const base64url = (b: Buffer) => b.toString('base64url');
const sha256 = sha256Url;
const TRACKER_NAME: Record<ConnectionKind, string> = { source: 'Azure DevOps', target: 'Jira' };

export interface StartedConnection {
  authorizationUrl: string;
  expiresAt: string;
  /** The binding value for the cookie the answer sets. */
  binding: string;
}

/** Where the browser lands afterwards: the project's page of the app, or a place on the app the start named. */
function returnTarget(returnTo: string | undefined, projectId: string): string {
  const app = config().appUrl;
  const resolved = resolveReturnTo(returnTo ?? `/projects/${projectId}`, app);
  if (!resolved)
    throw errors.validation([
      `returnTo must be a path of the app or a URL on its origin ${new URL(app).origin}`,
    ]);
  return resolved;
}

type StartRequest =
  | { organization_url: string; project: string }
  | { project_key: string; site?: string | undefined };

/**
 * Does this start name another organisation/project (or project key/site) than the project's stored connection
 * of the same kind, a pasted token's or an OAuth grant's? (A target start's absent site is the stored site by
 * then: `withStoredSite`.)
 */
function movesConnection(stored: StoredSource | StoredTarget | undefined, request: StartRequest): boolean {
  if (!stored) return false;
  if ('organization_url' in request) {
    if (!('organization_url' in stored.creds)) return false;
    return (
      !sameSite(
        resolveOrganizationUrl(stored.creds.organization_url),
        resolveOrganizationUrl(request.organization_url),
      ) || !sameSite(stored.creds.project, request.project)
    );
  }
  if (!('base_url' in stored.creds)) return false;
  return (
    stored.creds.project_key !== request.project_key ||
    (request.site !== undefined && !sameSite(stored.creds.base_url, request.site))
  );
}

/**
 * A target start without a site asks for the site the project's target is connected to now: the callback then
 * refuses a grant that does not reach it, rather than taking the only site the signed-in account reaches (which
 * would move the project into that person's Jira). Naming another site is moving the connection.
 */
function withStoredSite<R extends StartRequest>(
  stored: StoredSource | StoredTarget | undefined,
  request: R,
): R {
  if ('organization_url' in request || request.site !== undefined || !stored || !('base_url' in stored.creds))
    return request;
  return { ...request, site: stored.creds.base_url };
}

export async function startOAuthConnection(
  store: Store,
  principal: Principal,
  projectId: string,
  kind: string,
  body: unknown,
  apiBaseUrl: string,
): Promise<StartedConnection> {
  const project = await findProject(store, principal.tenantId, projectId);
  if (kind !== 'source' && kind !== 'target')
    throw errors.validation(['kind must be one of: source, target']);
  const asked =
    kind === 'source'
      ? parseOrThrow(StartSourceOAuthSchema, body ?? {})
      : parseOrThrow(StartTargetOAuthSchema, body ?? {});
  const stored =
    kind === 'source'
      ? await loadSource(store, principal.tenantId, project.id)
      : await loadTarget(store, principal.tenantId, project.id);
  const request = withStoredSite(stored, asked);
  const unreachable = outboundUrlProblems(
    'organization_url' in request
      ? { organization_url: resolveOrganizationUrl(request.organization_url) }
      : { site: request.site },
  );
  if (unreachable.length) throw errors.validation(unreachable);
  const provider = (await oauthProviders())[PROVIDER_OF[kind]];
  if (!provider) throw errors.oauthNotConfigured(TRACKER_NAME[kind]);
  // A connection stays where it was made: only an owner or admin moves a project's connection elsewhere.
  if (principal.role === 'member' && movesConnection(stored, request))
    throw errors.connectionMoveForbidden(kind);
  // Nor, by anyone, elsewhere than an unfinished run of the project works (services/connection-hold.ts); a target
  // start names its site when one is connected (else the callback checks the site the grant reaches).
  const next =
    'organization_url' in request
      ? sourceSiteOf(request)
      : request.site !== undefined
        ? targetSiteOf({ base_url: request.site, project_key: request.project_key })
        : undefined;
  if (next) await holdConnection(store, principal.tenantId, project.id, kind, stored, next);

  const state = base64url(randomBytes(32));
  const codeVerifier = base64url(randomBytes(48));
  const binding = base64url(randomBytes(32));
  const redirectUri = `${apiBaseUrl.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
  const expiresAt = nowEpochSeconds() + OAUTH_ATTEMPT_TTL_SECONDS;
  const { returnTo, ...scope } = request;
  await store.oauthAttempts.put({
    stateHash: sha256(state),
    bindingHash: sha256(binding),
    tenantId: principal.tenantId,
    projectId: project.id,
    userId: principal.userId,
    role: principal.role,
    kind,
    provider: provider.name,
    codeVerifier,
    redirectUri,
    returnTo: returnTarget(returnTo, project.id),
    request: Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
    expiresAt,
  });
  logger.info('oauth connection started', {
    tenantId: principal.tenantId,
    projectId: project.id,
    kind,
    provider: provider.name,
  });
  return {
    authorizationUrl: provider.authorizeUrl({
      state,
      redirectUri,
      codeChallenge: sha256(codeVerifier),
    }),
    expiresAt: new Date(expiresAt * 1000).toISOString(),
    binding,
  };
}

export interface CallbackInput {
  state: string;
  code?: string;
  error?: string;
  error_description?: string;
}

const sameHash = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** The connection's credentials from the exchanged tokens: Atlassian's site picked from what the grant reaches. */
async function credentialsOf(
  attempt: OAuthAttempt,
  tokens: OAuthTokens & { refreshToken: string },
): Promise<OAuthSourceCredentials | OAuthTargetCredentials> {
  const common = {
    method: 'oauth' as const,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: tokens.expiresAt,
    obtainedAt: tokens.obtainedAt,
    scope: tokens.scope,
  };
  if (attempt.kind === 'source')
    return OAuthSourceCredentialsSchema.parse({
      ...common,
      provider: 'entra',
      organization_url: attempt.request.organization_url,
      project: attempt.request.project,
    });
  const atlassian = (await oauthProviders()).atlassian;
  if (!atlassian) throw errors.oauthNotConfigured('Jira');
  const chosen = chooseSite(await atlassian.accessibleResources(tokens.accessToken), attempt.request.site);
  if ('refusal' in chosen)
    throw chosen.reason === 'uncovered'
      ? errors.oauthScopeMismatch([chosen.refusal])
      : errors.validation([chosen.refusal]);
  return OAuthTargetCredentialsSchema.parse({
    ...common,
    provider: 'atlassian',
    base_url: chosen.site.url,
    cloud_id: chosen.site.id,
    project_key: attempt.request.project_key,
  });
}

/**
 * The provider's redirect back. Answers where to send the browser (the app, told which connection and whether
 * its test passed); throws a clear HttpError for an unusable state or a refused grant, with nothing stored.
 */
export async function completeOAuthConnection(
  store: Store,
  input: CallbackInput,
  binding: string | undefined,
): Promise<{ location: string }> {
  const stateHash = sha256(input.state);
  // Unknown, used, expired, or brought back by another browser than the one that started it: all the same. The
  // binding is checked before the attempt is spent, so a stranger replaying the redirect cannot spoil it.
  const found = await store.oauthAttempts.get(stateHash);
  if (!found || !binding || !sameHash(sha256(binding), found.bindingHash)) throw errors.oauthStateInvalid();
  const attempt = await store.oauthAttempts.take(stateHash);
  if (!attempt || attempt.expiresAt < nowEpochSeconds()) throw errors.oauthStateInvalid();
  try {
    return await finishAttempt(store, input, attempt);
  } catch (err) {
    // The attempt is known and spent: the browser goes back to where the connection started, told why, rather
    // than left on a JSON page. The message is one of our own (the provider's error code is sanitised).
    if (!(err instanceof HttpError)) throw err;
    const location = new URL(attempt.returnTo);
    location.searchParams.set('connection', attempt.kind);
    location.searchParams.set('status', 'error');
    location.searchParams.set('code', err.code);
    location.searchParams.set('message', err.message);
    return { location: location.toString() };
  }
}

/** The callback's work once its attempt is taken: exchange, store sealed, test; where the browser goes next. */
async function finishAttempt(
  store: Store,
  input: CallbackInput,
  attempt: OAuthAttempt,
): Promise<{ location: string }> {
  const ids = { tenantId: attempt.tenantId, projectId: attempt.projectId, kind: attempt.kind };
  if (input.error) {
    const error = safeOAuthError(input.error);
    logger.warn('oauth connection declined', { ...ids, error });
    throw errors.tokenExchangeFailed(
      400,
      `The ${TRACKER_NAME[attempt.kind]} sign-in answered ${error}: the connection was not made`,
    );
  }
  if (!input.code) throw errors.validation(['code is required']);
  const provider = (await oauthProviders())[attempt.provider];
  if (!provider) throw errors.oauthNotConfigured(TRACKER_NAME[attempt.kind]);

  let tokens: OAuthTokens;
  try {
    tokens = await provider.exchangeCode(input.code, attempt.redirectUri, attempt.codeVerifier);
  } catch (err) {
    if (err instanceof OAuthRefusal) {
      logger.warn('oauth code exchange refused', { ...ids, status: err.status, error: err.error });
      throw errors.tokenExchangeFailed(
        400,
        `Token exchange failed: ${attempt.provider} answered ${err.error}; connect again`,
      );
    }
    if (err instanceof OAuthUnavailable) throw errors.oauthUnavailable(attempt.provider);
    throw err;
  }
  // Without a refresh token the connection would die within the hour, mid-run: refuse it now.
  if (!tokens.refreshToken)
    throw errors.tokenExchangeFailed(
      400,
      `Token exchange failed: ${attempt.provider} granted no refresh token (offline access); connect again`,
    );
  const creds = await credentialsOf(attempt, { ...tokens, refreshToken: tokens.refreshToken });

  // The project may have been deleted meanwhile: then nothing is stored.
  await findProject(store, attempt.tenantId, attempt.projectId);
  // A run of the project may have started since (or be verified, or rolled back): a grant for another site (or
  // project) is not stored under it (services/connection-hold.ts); the browser goes back told why.
  await holdConnection(
    store,
    attempt.tenantId,
    attempt.projectId,
    attempt.kind,
    attempt.kind === 'source'
      ? await loadSource(store, attempt.tenantId, attempt.projectId)
      : await loadTarget(store, attempt.tenantId, attempt.projectId),
    'organization_url' in creds ? sourceSiteOf(creds) : targetSiteOf(creds),
  );
  const previous = await store.connections.get(attempt.tenantId, attempt.projectId, attempt.kind);
  const version = (previous?.version ?? 0) + 1;
  await store.connections.put(attempt.tenantId, attempt.projectId, {
    kind: attempt.kind,
    ok: false,
    message: 'Connected by OAuth; not tested yet',
    testedAt: null,
    summary: {},
    method: 'oauth',
    provider: attempt.provider,
    version,
    // Who consented: what a member may pair this grant with (domain/connection-use.ts).
    connectedBy: { userId: attempt.userId, role: attempt.role ?? 'member' },
    sealed: await credentialCipher().seal(
      JSON.stringify(creds),
      credentialContext(attempt.tenantId, attempt.projectId, attempt.kind),
    ),
  });
  // The new grant's first use: the same test a pasted token gets.
  const stored = { method: 'oauth', creds, version } as StoredSource | StoredTarget;
  const result = await testOAuthGrant(store, attempt.tenantId, attempt.projectId, stored);
  await store.connections.recordTest(attempt.tenantId, attempt.projectId, attempt.kind, {
    ok: result.success,
    message: result.message,
    testedAt: nowIso(),
    summary: oauthSummary(stored, result),
  });
  if (result.success) await connectIfBothOk(store, attempt.tenantId, attempt.projectId, attempt.kind);
  logger.info('oauth connection made', { ...ids, provider: attempt.provider, tested: result.success });
  const location = new URL(attempt.returnTo);
  location.searchParams.set('connection', attempt.kind);
  location.searchParams.set('status', result.success ? 'connected' : 'failed');
  return { location: location.toString() };
}
