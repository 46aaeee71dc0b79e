/**
 * THE route table. The local gateway serves it and the CDK stack builds API Gateway resources from it, so a
 * route exists in both places or in neither. Pure data: no handler code is imported here.
 */
import type { Role } from '#platform/tokens.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A route group is one Lambda function: `functions/api/<group>.ts` exporting `handler`. */
export type RouteGroup =
  | 'health'
  | 'auth'
  | 'projects'
  | 'connectors'
  | 'team'
  | 'billing'
  | 'plugins'
  | 'migrations'
  | 'stream'
  | 'sso';

/**
 * What a rate-limited route's requests are counted against, each route in its own window
 * (functions/api/handler.ts; the limits are configuration):
 * - `sign-in`: per client address (an IPv6 client by its /64): login and the other ways in without a token;
 * - `session`: per client address, larger: refresh and logout, which present a session cookie and guess
 *   nothing, so a whole office behind one NAT address keeps its sessions;
 * - `scan`: per user: each scan request reads the source tracker before anything else.
 */
export type RateLimitBudget = 'sign-in' | 'session' | 'scan';

export interface Route {
  method: HttpMethod;
  /** API Gateway resource path; `{name}` segments become path parameters. */
  path: string;
  group: RouteGroup;
  /** The operation within the group's handler. */
  operation: string;
  /** `public` needs no token; otherwise the roles allowed (the spec's role table). */
  access: 'public' | readonly Role[];
  /** The budget its requests count against, per minute (the spec's auth limits, and ours); none: not counted. */
  rateLimit?: RateLimitBudget;
  /**
   * A response-streaming handler (`awslambda.streamifyResponse`, Server-Sent Events) instead of a proxy result.
   * It authenticates itself from the `token` query parameter: an EventSource cannot send headers.
   */
  streaming?: boolean;
}

const everyone = ['owner', 'admin', 'member'] as const;
const managers = ['owner', 'admin'] as const;
const ownerOnly = ['owner'] as const;

export const routes: readonly Route[] = [
  { method: 'GET', path: '/api/health', group: 'health', operation: 'health', access: 'public' },
  // The published contract (functions/api/openapi.ts), generated from this table: served by the same small function.
  { method: 'GET', path: '/api/openapi.json', group: 'health', operation: 'openapi', access: 'public' },

  {
    method: 'POST',
    path: '/api/auth/login',
    group: 'auth',
    operation: 'login',
    access: 'public',
    rateLimit: 'sign-in',
  },
  {
    // The invitation link's holder sets a password and is signed in: no token (the link's one-time token is it).
    method: 'POST',
    path: '/api/invitations/accept',
    group: 'auth',
    operation: 'acceptInvitation',
    access: 'public',
    rateLimit: 'sign-in',
  },
  {
    method: 'POST',
    path: '/api/auth/refresh',
    group: 'auth',
    operation: 'refresh',
    access: 'public',
    rateLimit: 'session',
  },
  {
    method: 'POST',
    path: '/api/auth/logout',
    group: 'auth',
    operation: 'logout',
    access: 'public',
    rateLimit: 'session',
  },

  // Enterprise single sign-on: the owner configures the tenant's OpenID Connect provider; the browser legs are
  // public (no token exists yet) and counted like login.
  { method: 'GET', path: '/api/sso', group: 'sso', operation: 'getConfig', access: ownerOnly },
  { method: 'PUT', path: '/api/sso', group: 'sso', operation: 'saveConfig', access: ownerOnly },
  { method: 'DELETE', path: '/api/sso', group: 'sso', operation: 'deleteConfig', access: ownerOnly },
  {
    method: 'GET',
    path: '/api/auth/sso/{tenantSlug}/start',
    group: 'sso',
    operation: 'start',
    access: 'public',
    rateLimit: 'sign-in',
  },
  {
    method: 'GET',
    path: '/api/auth/sso/callback',
    group: 'sso',
    operation: 'callback',
    access: 'public',
    rateLimit: 'sign-in',
  },

  { method: 'POST', path: '/api/projects', group: 'projects', operation: 'create', access: managers },
  { method: 'GET', path: '/api/projects', group: 'projects', operation: 'list', access: everyone },
  { method: 'GET', path: '/api/projects/{projectId}', group: 'projects', operation: 'get', access: everyone },
  {
    method: 'DELETE',
    path: '/api/projects/{projectId}',
    group: 'projects',
    operation: 'delete',
    access: managers,
  },
  {
    // REST or Jira's JSON importer (functions/domain/delivery.ts): a choice like the mappings, for the same roles.
    method: 'PUT',
    path: '/api/projects/{projectId}/delivery',
    group: 'projects',
    operation: 'setDelivery',
    access: managers,
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/mappings',
    group: 'projects',
    operation: 'getMappings',
    access: everyone,
  },
  {
    method: 'PUT',
    path: '/api/projects/{projectId}/mappings',
    group: 'projects',
    operation: 'saveMappings',
    access: managers,
  },
  {
    // The mappings editor's pickers: what the connected Jira project offers (roles as reading the mappings).
    method: 'GET',
    path: '/api/projects/{projectId}/target-metadata',
    group: 'projects',
    operation: 'targetMetadata',
    access: everyone,
  },
  {
    method: 'POST',
    path: '/api/projects/{projectId}/mappings/confirm',
    group: 'projects',
    operation: 'confirmMappings',
    access: managers,
  },

  { method: 'POST', path: '/api/connectors/test', group: 'connectors', operation: 'test', access: everyone },
  {
    method: 'POST',
    path: '/api/connectors/scan',
    group: 'connectors',
    operation: 'scan',
    access: everyone,
    rateLimit: 'scan',
  },
  { method: 'GET', path: '/api/audit/{scanId}', group: 'connectors', operation: 'audit', access: everyone },
  {
    method: 'POST',
    path: '/api/projects/{projectId}/connections/{kind}/oauth',
    group: 'connectors',
    operation: 'oauthStart',
    access: everyone,
  },
  {
    // The provider's redirect back: no token (identified by its one-time state), counted like the auth routes.
    method: 'GET',
    path: '/api/connections/oauth/callback',
    group: 'connectors',
    operation: 'oauthCallback',
    access: 'public',
    rateLimit: 'sign-in',
  },

  { method: 'GET', path: '/api/team/members', group: 'team', operation: 'list', access: managers },
  // Adding a member sends an invitation (202): nothing is created until its link is accepted.
  { method: 'POST', path: '/api/team/members', group: 'team', operation: 'add', access: managers },
  { method: 'GET', path: '/api/team/invitations', group: 'team', operation: 'invitations', access: managers },
  {
    method: 'DELETE',
    path: '/api/team/invitations/{invitationId}',
    group: 'team',
    operation: 'revokeInvitation',
    access: managers,
  },
  {
    method: 'PATCH',
    path: '/api/team/members/{userId}',
    group: 'team',
    operation: 'changeRole',
    access: managers,
  },
  {
    method: 'DELETE',
    path: '/api/team/members/{userId}',
    group: 'team',
    operation: 'remove',
    access: managers,
  },

  { method: 'GET', path: '/api/billing', group: 'billing', operation: 'view', access: ownerOnly },
  // Everyone sees the price (the project detail shows it too); only the owner commits the account's money.
  {
    method: 'GET',
    path: '/api/projects/{projectId}/quote',
    group: 'billing',
    operation: 'getQuote',
    access: everyone,
  },
  {
    method: 'POST',
    path: '/api/projects/{projectId}/quote/accept',
    group: 'billing',
    operation: 'acceptQuote',
    access: ownerOnly,
  },
  // The payment provider's events: no token, the provider's signature over the raw body is checked instead.
  {
    method: 'POST',
    path: '/api/billing/webhooks/payments',
    group: 'billing',
    operation: 'webhook',
    access: 'public',
  },

  { method: 'GET', path: '/api/plugins', group: 'plugins', operation: 'list', access: everyone },

  // Every role runs migrations (members start them: they hold the credentials); cancel is final, so managers only.
  // Pause and resume of a rollback are managers' too, as the rollback's routes: the use case's answer (the run's
  // status decides), #domain/rollback/request.ts steersRollback.
  {
    method: 'POST',
    path: '/api/migrations/project/{projectId}/start',
    group: 'migrations',
    operation: 'start',
    access: everyone,
  },
  { method: 'GET', path: '/api/migrations', group: 'migrations', operation: 'list', access: everyone },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/status',
    group: 'migrations',
    operation: 'status',
    access: everyone,
  },
  {
    method: 'POST',
    path: '/api/migrations/{runId}/pause',
    group: 'migrations',
    operation: 'pause',
    access: everyone,
  },
  {
    method: 'POST',
    path: '/api/migrations/{runId}/resume',
    group: 'migrations',
    operation: 'resume',
    access: everyone,
  },
  {
    method: 'POST',
    path: '/api/migrations/{runId}/cancel',
    group: 'migrations',
    operation: 'cancel',
    access: managers,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/failures',
    group: 'migrations',
    operation: 'failures',
    access: everyone,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/preview',
    group: 'migrations',
    operation: 'preview',
    access: everyone,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/id-map',
    group: 'migrations',
    operation: 'idMap',
    access: everyone,
  },

  // Verification reads Jira and writes nothing there: every role, as any run control but cancel.
  {
    method: 'POST',
    path: '/api/migrations/{runId}/verification',
    group: 'migrations',
    operation: 'verify',
    access: everyone,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/verification',
    group: 'migrations',
    operation: 'verification',
    access: everyone,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/verification/audit',
    group: 'migrations',
    operation: 'verificationAudit',
    access: everyone,
  },

  // A rollback deletes issues from Jira (its preview lists them): managers only, as cancel.
  {
    method: 'POST',
    path: '/api/migrations/{runId}/rollback',
    group: 'migrations',
    operation: 'rollback',
    access: managers,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/rollback',
    group: 'migrations',
    operation: 'rollbackStatus',
    access: managers,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/rollback/list',
    group: 'migrations',
    operation: 'rollbackList',
    access: managers,
  },

  {
    // The files a Jira admin uploads: every issue's text and people's accounts, so managers only (docs/api.md).
    method: 'GET',
    path: '/api/migrations/{runId}/import-files',
    group: 'migrations',
    operation: 'importFiles',
    access: managers,
  },
  {
    method: 'GET',
    path: '/api/migrations/{runId}/import-files/{batch}',
    group: 'migrations',
    operation: 'importFile',
    access: managers,
  },

  {
    method: 'GET',
    path: '/api/migrations/{runId}/stream',
    group: 'stream',
    operation: 'events',
    access: everyone,
    streaming: true,
  },
];

export const routeGroups = (): RouteGroup[] => [...new Set(routes.map((r) => r.group))];
export const routesOf = (group: RouteGroup): Route[] => routes.filter((r) => r.group === group);
export const routeKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;
