/**
 * OAuth 2.0 connections to the trackers: Jira through Atlassian's authorization-code flow (3LO), Azure DevOps
 * through Microsoft Entra ID. The request bodies, what a connection stores (sealed), and when a token is due
 * for refresh. Pure.
 */
import * as z from 'zod';
import type { ConnectionKind } from '#domain/connectors.ts';

export const OAUTH_PROVIDERS = ['atlassian', 'entra'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

/** Which provider connects which side: the source is Azure DevOps (Entra ID), the target Jira (Atlassian). */
export const PROVIDER_OF: Record<ConnectionKind, OAuthProvider> = { source: 'entra', target: 'atlassian' };

/**
 * Atlassian's classic scopes for issues, users and project configuration, the Jira Software scopes for boards
 * and sprints, and offline_access for a refresh token.
 */
export const ATLASSIAN_SCOPES = [
  'read:jira-work',
  'write:jira-work',
  'read:jira-user',
  'manage:jira-project',
  'manage:jira-configuration',
  'read:board-scope:jira-software',
  'read:sprint:jira-software',
  'write:sprint:jira-software',
  'offline_access',
].join(' ');

/** Azure DevOps' resource id in Entra ID, with the user's delegated rights; offline_access for a refresh token. */
export const ENTRA_ADO_SCOPE = '499b84ac-1321-427f-aa17-267ca6975798/.default offline_access';

/** A token this close to its expiry is refreshed before use: a request must not start on a dying token. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** How long a started connection may take to come back from the provider. */
export const OAUTH_ATTEMPT_TTL_SECONDS = 10 * 60;

/**
 * Due for refresh: within the margin of its expiry. The margin is at most half the token's lifetime (when
 * known), so a provider that issues short tokens is not asked again on every request.
 */
export function needsRefresh(expiresAt: string, nowMs: number, obtainedAt?: string): boolean {
  const expires = Date.parse(expiresAt);
  const lifetime = obtainedAt ? expires - Date.parse(obtainedAt) : Number.POSITIVE_INFINITY;
  return expires - nowMs <= Math.min(REFRESH_MARGIN_MS, lifetime / 2);
}

/** An ISO expiry from a token response's `expires_in` (seconds). */
export const expiryOf = (expiresInSeconds: number, nowMs: number) =>
  new Date(nowMs + expiresInSeconds * 1000).toISOString();

const returnTo = z.string().trim().min(1).max(2000).optional();

/** Starting a source connection: where the work items are; the Entra grant says who may read them. */
export const StartSourceOAuthSchema = z.strictObject({
  organization_url: z.string().trim().min(1).max(500),
  project: z.string().trim().min(1).max(256),
  returnTo,
});

/**
 * Starting a target connection: the project key, and the site when the account can reach several. Without a
 * site, a project whose target is connected already asks for that site (services/tracker-oauth.ts).
 */
export const StartTargetOAuthSchema = z.strictObject({
  project_key: z
    .string()
    .trim()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,9}$/, 'must be a Jira project key')
    .transform((k) => k.toUpperCase()),
  site: z
    .url({ protocol: /^https?$/ })
    .max(500)
    .optional(),
  returnTo,
});

export const OAuthCallbackSchema = z.object({
  state: z.string().min(1).max(200),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});

/** The token half every OAuth connection stores (sealed, never shown). */
const tokens = {
  method: z.literal('oauth'),
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: z.string(),
  /** When the access token was issued (absent on grants stored before it was recorded). */
  obtainedAt: z.string().optional(),
  scope: z.string().default(''),
};

export const OAuthSourceCredentialsSchema = z.object({
  ...tokens,
  provider: z.literal('entra'),
  organization_url: z.string().min(1),
  project: z.string().min(1),
});
export type OAuthSourceCredentials = z.infer<typeof OAuthSourceCredentialsSchema>;

export const OAuthTargetCredentialsSchema = z.object({
  ...tokens,
  provider: z.literal('atlassian'),
  /** The Jira site the grant is for, and its id on Atlassian's API gateway. */
  base_url: z.string().min(1),
  cloud_id: z.string().min(1),
  project_key: z.string().min(1),
});
export type OAuthTargetCredentials = z.infer<typeof OAuthTargetCredentialsSchema>;

export type OAuthCredentials = OAuthSourceCredentials | OAuthTargetCredentials;

export const isOAuthCredentials = (raw: unknown): boolean =>
  typeof raw === 'object' && raw !== null && (raw as { method?: unknown }).method === 'oauth';

/** An Atlassian site the grant reaches (accessible-resources). */
export interface AtlassianSite {
  id: string;
  url: string;
  name: string;
}

/** Two site or organisation URLs name the same place (case and trailing slashes aside). */
export const sameSite = (a: string, b: string) =>
  a.replace(/\/+$/, '').toLowerCase() === b.replace(/\/+$/, '').toLowerCase();

/**
 * The site a target connection uses: the one asked for, else the only one. A refusal is a sentence for the
 * admin (which sites there are, what to do); `uncovered`: the grant does not reach the site asked for.
 */
export function chooseSite(
  sites: AtlassianSite[],
  wanted: string | undefined,
): { site: AtlassianSite } | { refusal: string; reason: 'no-site' | 'several' | 'uncovered' } {
  if (sites.length === 0)
    return {
      refusal: 'the Atlassian account granted access to no Jira site: connect again and pick a site',
      reason: 'no-site',
    };
  if (wanted) {
    const site = sites.find((s) => sameSite(s.url, wanted));
    return site
      ? { site }
      : {
          refusal: `the grant does not cover ${wanted}; it covers ${sites.map((s) => s.url).join(', ')}: sign in with an Atlassian account that reaches ${wanted}`,
          reason: 'uncovered',
        };
  }
  if (sites.length > 1)
    return {
      refusal: `the grant covers ${sites.length} Jira sites (${sites.map((s) => s.url).join(', ')}): start again with "site" naming one`,
      reason: 'several',
    };
  return { site: sites[0]! };
}

/** The message a refused exchange leaves on the connection and the run (the spec's wording first). */
export function tokenExchangeFailedMessage(kind: ConnectionKind): string {
  const tracker = kind === 'source' ? 'Azure DevOps (source)' : 'Jira (target)';
  return `Token exchange failed: the ${tracker} OAuth connection was refused; reconnect the ${kind} tracker`;
}

/** The reason a run pauses when a provider's token endpoint cannot be reached: the grant itself is fine. */
export function tokenRefreshUnreachableMessage(kind: ConnectionKind): string {
  const tracker = kind === 'source' ? 'Azure DevOps (source)' : 'Jira (target)';
  return `Token refresh failed: the ${tracker} sign-in service could not be reached; resume the run later`;
}

/** Entra access tokens are JWTs; Azure DevOps PATs never contain a dot. A pasted JWT is sent as a Bearer token. */
export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
