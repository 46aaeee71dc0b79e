/**
 * A project's stored tracker connections, opened into ready clients: a pasted token (PAT, API token) as it is,
 * or an OAuth grant behind a token source that refreshes it (and writes the rotated tokens back). Every reader
 * of stored credentials (connection tests, scans, mappings, the engine) goes through here, so an OAuth
 * connection works wherever a pasted token does.
 */

import type { ConnectionMaker } from '#domain/connection-use.ts';
import type { ConnectionKind } from '#domain/connectors.ts';
import {
  type SourceCredentials,
  SourceCredentialsSchema,
  type TargetCredentials,
  TargetCredentialsSchema,
} from '#domain/connectors.ts';
import type { RunSites, SourceSite, TargetSite } from '#domain/run-sites.ts';
import {
  looksLikeJwt,
  type OAuthCredentials,
  type OAuthSourceCredentials,
  OAuthSourceCredentialsSchema,
  type OAuthTargetCredentials,
  OAuthTargetCredentialsSchema,
} from '#domain/tracker-oauth.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { credentialContext } from '#platform/secret-contexts.ts';
import type { Store } from '#store/index.ts';
import { AdoClient, resolveOrganizationUrl } from '#trackers/ado/client.ts';
import type { HttpOptions } from '#trackers/http.ts';
import type { Interrupt } from '#trackers/interrupt.ts';
import { JiraClient } from '#trackers/jira/client.ts';
import type { AtlassianOAuth, EntraOAuth } from '#trackers/oauth/providers.ts';
import { oauthProviders } from '#trackers/oauth/settings.ts';
import { OAuthTokenSource, TokenExchangeError, type TokenStore } from '#trackers/oauth/token-source.ts';

/** A pasted source token: a PAT over Basic, or (the spec: "or OAuth bearer token") an Entra JWT as Bearer. */
export const sourceClient = (c: SourceCredentials, http: Partial<HttpOptions> = {}) =>
  new AdoClient(
    {
      organization: c.organization_url,
      project: c.project,
      token: c.personal_access_token,
      tokenKind: looksLikeJwt(c.personal_access_token) ? 'bearer' : 'pat',
    },
    http,
  );
export const targetClient = (c: TargetCredentials, http: Partial<HttpOptions> = {}) =>
  new JiraClient({ baseUrl: c.base_url, email: c.email, token: c.api_token }, http);

/** Who made the stored connection (absent on older records): what a member may pair it with. */
interface Made {
  connectedBy?: ConnectionMaker | undefined;
}
export type StoredSource =
  | ({ method: 'token'; creds: SourceCredentials } & Made)
  | ({ method: 'oauth'; creds: OAuthSourceCredentials; version: number; refused?: boolean } & Made);
export type StoredTarget =
  | ({ method: 'token'; creds: TargetCredentials } & Made)
  | ({ method: 'oauth'; creds: OAuthTargetCredentials; version: number; refused?: boolean } & Made);

async function openSealed(store: Store, tenantId: string, projectId: string, kind: ConnectionKind) {
  const stored = await store.connections.get(tenantId, projectId, kind);
  if (!stored?.sealed) return undefined;
  const raw: unknown = JSON.parse(
    await credentialCipher().open(stored.sealed, credentialContext(tenantId, projectId, kind)),
  );
  return {
    raw,
    version: stored.version ?? 0,
    oauth: stored.method === 'oauth',
    refused: stored.reconnectRequired === true,
    connectedBy: stored.connectedBy,
  };
}

/** The project's stored credentials of one kind, unsealed and parsed; undefined when none are stored. */
export async function loadSource(
  store: Store,
  tenantId: string,
  projectId: string,
): Promise<StoredSource | undefined> {
  const opened = await openSealed(store, tenantId, projectId, 'source');
  if (!opened) return undefined;
  return opened.oauth
    ? {
        method: 'oauth',
        creds: OAuthSourceCredentialsSchema.parse(opened.raw),
        version: opened.version,
        refused: opened.refused,
        connectedBy: opened.connectedBy,
      }
    : { method: 'token', creds: SourceCredentialsSchema.parse(opened.raw), connectedBy: opened.connectedBy };
}

export async function loadTarget(
  store: Store,
  tenantId: string,
  projectId: string,
): Promise<StoredTarget | undefined> {
  const opened = await openSealed(store, tenantId, projectId, 'target');
  if (!opened) return undefined;
  return opened.oauth
    ? {
        method: 'oauth',
        creds: OAuthTargetCredentialsSchema.parse(opened.raw),
        version: opened.version,
        refused: opened.refused,
        connectedBy: opened.connectedBy,
      }
    : { method: 'token', creds: TargetCredentialsSchema.parse(opened.raw), connectedBy: opened.connectedBy };
}

/** The sealed connection record as a token store: refreshed tokens are written back under its version. */
function connectionTokenStore<C extends OAuthCredentials>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: ConnectionKind,
  schema: { parse(v: unknown): C },
): TokenStore<C> {
  const context = credentialContext(tenantId, projectId, kind);
  return {
    async load() {
      const opened = await openSealed(store, tenantId, projectId, kind);
      return opened?.oauth ? { creds: schema.parse(opened.raw), version: opened.version } : undefined;
    },
    async save(creds, version) {
      const sealed = await credentialCipher().seal(JSON.stringify(creds), context);
      return store.connections.replaceSealed(tenantId, projectId, kind, sealed, version);
    },
    async markRefused(version, message) {
      await store.connections.markReconnectRequired(tenantId, projectId, kind, message, version);
    },
  };
}

export interface ClientOptions {
  http?: Partial<HttpOptions>;
  /** Ids for the token source's log lines (tenant, run). */
  logKeys?: Readonly<Record<string, string>>;
  /**
   * The engine invocation's interrupt, given to the clients' HTTP layer and OAuth token sources: a refused token
   * or a wait handed back aborts it.
   */
  interrupt?: Interrupt;
}

/** The HTTP options a client is opened with: the caller's, and its interrupt. */
const httpOptions = (opts: ClientOptions): Partial<HttpOptions> | undefined =>
  opts.interrupt ? { ...opts.http, interrupt: opts.interrupt } : opts.http;

// A grant is stored but this deployment lost the app registration: nothing can refresh it.
async function entra(): Promise<EntraOAuth> {
  const p = (await oauthProviders()).entra;
  if (!p) throw new TokenExchangeError('source', 'client_not_configured');
  return p;
}
async function atlassian(): Promise<AtlassianOAuth> {
  const p = (await oauthProviders()).atlassian;
  if (!p) throw new TokenExchangeError('target', 'client_not_configured');
  return p;
}

export async function openSourceClient(
  store: Store,
  tenantId: string,
  projectId: string,
  stored: StoredSource,
  opts: ClientOptions = {},
): Promise<AdoClient> {
  if (stored.method === 'token') return sourceClient(stored.creds, httpOptions(opts));
  const kind = 'source';
  // Refused once: the provider would refuse again; only a reconnect (a new grant) helps.
  if (stored.refused) throw new TokenExchangeError(kind, 'reconnect_required');
  const tokens = new OAuthTokenSource(
    kind,
    { creds: stored.creds, version: stored.version },
    await entra(),
    connectionTokenStore(store, tenantId, projectId, kind, OAuthSourceCredentialsSchema),
    { tenantId, projectId, ...opts.logKeys },
    opts.interrupt,
  );
  return new AdoClient(
    {
      organization: stored.creds.organization_url,
      project: stored.creds.project,
      token: '',
      tokenKind: 'bearer',
    },
    { ...httpOptions(opts), authorization: tokens },
  );
}

export async function openTargetClient(
  store: Store,
  tenantId: string,
  projectId: string,
  stored: StoredTarget,
  opts: ClientOptions = {},
): Promise<JiraClient> {
  if (stored.method === 'token') return targetClient(stored.creds, httpOptions(opts));
  const kind = 'target';
  if (stored.refused) throw new TokenExchangeError(kind, 'reconnect_required');
  const provider = await atlassian();
  const tokens = new OAuthTokenSource(
    kind,
    { creds: stored.creds, version: stored.version },
    provider,
    connectionTokenStore(store, tenantId, projectId, kind, OAuthTargetCredentialsSchema),
    { tenantId, projectId, ...opts.logKeys },
    opts.interrupt,
  );
  // A 3LO token works only through Atlassian's gateway, never on the site's own host.
  return new JiraClient(
    { baseUrl: provider.apiBaseUrl(stored.creds.cloud_id), email: '', token: '', tokenKind: 'bearer' },
    { ...httpOptions(opts), authorization: tokens },
  );
}

/** Where a stored connection reads and writes, whatever its method (for run fingerprints and summaries). */
export const sourceWhere = (s: StoredSource) => ({
  organizationUrl: s.creds.organization_url,
  project: s.creds.project,
});
export const targetWhere = (t: StoredTarget) => ({
  baseUrl: t.creds.base_url,
  projectKey: t.creds.project_key,
});

/**
 * The site a connection's credentials (pasted or an OAuth grant's) name, as a run is bound to it
 * (domain/run-sites.ts): an organisation given by name resolved to its URL; a Jira grant's cloud id kept.
 */
export const sourceSiteOf = (c: { organization_url: string; project: string }): SourceSite => ({
  organizationUrl: resolveOrganizationUrl(c.organization_url),
  project: c.project,
});
export const targetSiteOf = (c: {
  base_url: string;
  project_key: string;
  cloud_id?: string;
}): TargetSite => ({
  siteUrl: c.base_url,
  ...(c.cloud_id ? { cloudId: c.cloud_id } : {}),
  projectKey: c.project_key,
});

/** The sites the project's stored connections name now: what the engine binds a run to, and checks. */
export const runSitesOf = (source: StoredSource, target: StoredTarget): RunSites => ({
  source: sourceSiteOf(source.creds),
  target: targetSiteOf(target.creds),
});
