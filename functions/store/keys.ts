/**
 * THE key builders of the single table. Every partition key that holds tenant data starts with the tenant, so
 * no query can cross tenants; global lookups (e-mail, refresh token, rate window) hold no tenant data of their own.
 */
import { createHash } from 'node:crypto';

export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  ttlAttribute: 'ttl',
} as const;

export interface Key {
  pk: string;
  sk: string;
}

/** A tracker site's partition starts so (its identity is hashed: the pattern names the prefix). */
const SITE_PK = 'SITE#';
const tenantPk = (tenantId: string) => `TENANT#${tenantId}`;
const projectPk = (tenantId: string, projectId: string) => `TENANT#${tenantId}#PROJECT#${projectId}`;
/** An identity provider's account (issuer and subject) as a fixed-length key part. */
/** Where an item's journal records of a run start (zero-padded: key order is item order). */
const journalItemSk = (runId: string, sourceId: number) =>
  `JOURNAL#${runId}#${String(sourceId).padStart(10, '0')}#`;
const identityHash = (issuer: string, subject: string) =>
  createHash('sha256').update(`${issuer}\n${subject}`).digest('base64url');

export const keys = {
  tenant: (tenantId: string): Key => ({ pk: tenantPk(tenantId), sk: 'TENANT' }),
  /** GSI1 partition listing every tenant, for the operator. */
  tenantIndex: () => 'TENANTS',

  user: (tenantId: string, userId: string): Key => ({ pk: tenantPk(tenantId), sk: `USER#${userId}` }),
  userPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'USER#' }),
  /**
   * An address is unique within a tenant only: no tenant can claim or block another's addresses (docs/security.md).
   */
  tenantEmail: (tenantId: string, email: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `EMAIL#${email.toLowerCase()}`,
  }),
  /**
   * Where a password login that names no tenant goes: one entry per password user of the address, oldest first
   * (sort key = creation time, then tenant). Before per-tenant addresses the one entry was `sk: 'EMAIL'`
   * (legacyEmail): older than every dated entry, it is still honoured, and first.
   */
  loginEntry: (email: string, createdAt: string, tenantId: string): Key => ({
    pk: `EMAIL#${email.toLowerCase()}`,
    sk: `${createdAt}#${tenantId}`,
  }),
  loginEntries: (email: string) => ({ pk: `EMAIL#${email.toLowerCase()}` }),
  legacyEmail: (email: string): Key => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),

  /** A pending invitation by the SHA-256 of its one-time token (the accept link names no tenant). */
  invitation: (tokenHash: string): Key => ({ pk: `INVITE#${tokenHash}`, sk: 'INVITE' }),
  /** The same invitation as its tenant lists it. */
  tenantInvitation: (tenantId: string, invitationId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `INVITATION#${invitationId}`,
  }),
  tenantInvitationPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'INVITATION#' }),

  /** A tenant's single sign-on configuration (OpenID Connect provider), one per tenant. */
  ssoConfig: (tenantId: string): Key => ({ pk: tenantPk(tenantId), sk: 'SSO' }),
  /** The start URL's slug: unique across tenants, claimed with the configuration (slug -> tenant id). */
  ssoSlug: (slug: string): Key => ({ pk: `SSOSLUG#${slug}`, sk: 'SSOSLUG' }),
  /** A browser's sign-in attempt, by the SHA-256 of its `state`; consumed by the callback, expires by TTL. */
  ssoAttempt: (stateHash: string): Key => ({ pk: `SSOSTATE#${stateHash}`, sk: 'SSOSTATE' }),
  /** A provider identity (issuer and subject, hashed to a fixed length) linked to a user of the tenant. */
  ssoSubject: (tenantId: string, issuer: string, subject: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `SSOSUB#${identityHash(issuer, subject)}`,
  }),
  /**
   * A removed member's mark on their address in the tenant (no TTL: a removal holds until someone invites the
   * address again): single sign-on provisions nobody for it, an accepted invitation clears it.
   */
  removedAddress: (tenantId: string, email: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `REMOVED#EMAIL#${email.toLowerCase()}`,
  }),
  /** The same mark on the provider identity the removed member signed in with (a renamed mailbox keeps it). */
  removedIdentity: (tenantId: string, issuer: string, subject: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `REMOVED#SSOSUB#${identityHash(issuer, subject)}`,
  }),

  refreshToken: (tokenHash: string): Key => ({ pk: `REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  refreshFamily: (tenantId: string, familyId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `REFRESH_FAMILY#${familyId}`,
  }),
  refreshFamilyPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'REFRESH_FAMILY#' }),

  /** A user's open event streams (leases with their expiry), counted across every function instance. */
  streamLeases: (tenantId: string, userId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `STREAMS#${userId}`,
  }),

  /**
   * A user's open dashboard WebSockets, as leases (one per connection id) like `streamLeases`: counted apart
   * from the SSE streams, with their own cap.
   */
  dashboardLeases: (tenantId: string, userId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `DASHLEASES#${userId}`,
  }),
  /** An open dashboard WebSocket of the tenant: the engine's posts fan out over these (one query). */
  dashboardConnection: (tenantId: string, connectionId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `DASHCONN#${connectionId}`,
  }),
  dashboardConnectionPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'DASHCONN#' }),
  /**
   * The same connection by its id alone: `$disconnect` names only the connection, so this finds its tenant and
   * user (ids only, no tenant data of its own).
   */
  dashboardConnectionById: (connectionId: string): Key => ({
    pk: `DASHCONN#${connectionId}`,
    sk: 'DASHCONN',
  }),

  /**
   * A fixed-window counter: `subject` is a client address (an IPv6 /64), a user, or an e-mail address (and
   * tenant) as a SHA-256 (functions/domain/rate-limits.ts), never an address in clear.
   */
  rateWindow: (bucket: string, subject: string, windowStart: number): Key => ({
    pk: `RATE#${bucket}#${subject}`,
    sk: `WINDOW#${windowStart}`,
  }),
  /**
   * One tracker site's shared limits (functions/store/site-limits.ts): the runs working it and the rates it
   * stated. Global, as a site is (two tenants migrating into one Jira site share its buckets); keyed by the
   * SHA-256 of the site's identity (its cloud id or base URL, never a credential), and holding no tenant data.
   */
  site: (siteId: string): Key => ({
    pk: `${SITE_PK}${createHash('sha256').update(siteId).digest('base64url')}`,
    sk: 'LIMITS',
  }),

  project: (tenantId: string, projectId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `PROJECT#${projectId}`,
  }),
  projectPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'PROJECT#' }),
  /** Everything that belongs to one project (runs, mappings, scans, id map, events, credentials) lives here. */
  projectChildren: (tenantId: string, projectId: string) => ({ pk: projectPk(tenantId, projectId) }),

  /** A project's stored tracker connection (sealed credentials + last test), `kind` source or target. */
  connection: (tenantId: string, projectId: string, kind: 'source' | 'target'): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `CONNECTION#${kind}`,
  }),

  /**
   * A started OAuth connection (browser gone to the provider), by the SHA-256 of its state: global, since the
   * provider's redirect names no tenant; it holds only ids and the PKCE verifier, and is deleted on use.
   */
  oauthAttempt: (stateHash: string): Key => ({ pk: `OAUTH_ATTEMPT#${stateHash}`, sk: 'OAUTH_ATTEMPT' }),

  /** The project's mappings record (types, states, fields, users, link types), one per project. */
  mappings: (tenantId: string, projectId: string): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: 'MAPPINGS',
  }),
  /**
   * The mappings as last confirmed: what runs use. Kept apart from the working record so that saving edits
   * after a confirmation never changes what the next run does until they are confirmed too.
   */
  confirmedMappings: (tenantId: string, projectId: string): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: 'MAPPINGS#CONFIRMED',
  }),

  /** A run, found by its bare id within the caller's tenant. */
  run: (tenantId: string, runId: string): Key => ({ pk: tenantPk(tenantId), sk: `RUN#${runId}` }),
  /**
   * The project's one-active-run lock: created with the run in one conditional transaction, removed when the
   * run ends (and taken over by the next start if a crash left it behind a finished run).
   */
  runLock: (tenantId: string, projectId: string): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: 'RUNLOCK',
  }),
  /** GSI1 partition listing a project's runs, most recent first (run ids are UUIDv7). */
  projectRunsIndex: (tenantId: string, projectId: string) => `${projectPk(tenantId, projectId)}#RUNS`,
  /** The per-project id map: one item per source work item (zero-padded so key order is id order). */
  idMapEntry: (tenantId: string, projectId: string, sourceId: number): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `IDMAP#${String(sourceId).padStart(10, '0')}`,
  }),
  idMapPrefix: (tenantId: string, projectId: string) => ({
    pk: projectPk(tenantId, projectId),
    skPrefix: 'IDMAP#',
  }),
  /** A chunk whose Jira write may have happened without its outcome being recorded (written before the call). */
  pendingWrite: (tenantId: string, projectId: string, runId: string, phase: number): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `PENDING#${runId}#${phase}`,
  }),
  /**
   * One reason an item of a run failed in a phase (`reasonId` tells its reasons apart), so a later failure of
   * the same item never overwrites an earlier one. Key order is item, then phase: a report reads them grouped.
   */
  runFailure: (
    tenantId: string,
    projectId: string,
    runId: string,
    sourceId: number,
    phase: number,
    reasonId: string,
  ): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `FAIL#${runId}#${String(sourceId).padStart(10, '0')}#${String(phase).padStart(3, '0')}#${reasonId}`,
  }),
  runFailurePrefix: (tenantId: string, projectId: string, runId: string) => ({
    pk: projectPk(tenantId, projectId),
    skPrefix: `FAIL#${runId}#`,
  }),
  /**
   * One write a run made to an issue it did not create (the write journal, #domain/rollback/journal.ts), under the
   * run and the item, so a rollback reads an item's writes in one query; `ref` (which write: journalRef) hashed to
   * a fixed length, however long the name or globalId it holds.
   */
  journalRecord: (
    tenantId: string,
    projectId: string,
    runId: string,
    sourceId: number,
    ref: string,
  ): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `${journalItemSk(runId, sourceId)}${createHash('sha256').update(ref).digest('base64url').slice(0, 22)}`,
  }),
  journalItemPrefix: (tenantId: string, projectId: string, runId: string, sourceId: number) => ({
    pk: projectPk(tenantId, projectId),
    skPrefix: journalItemSk(runId, sourceId),
  }),
  /** Marks an item of a run as counted in its failureCount (an item counts once, however many units failed). */
  failedItem: (tenantId: string, projectId: string, runId: string, sourceId: number): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `FAILITEM#${runId}#${String(sourceId).padStart(10, '0')}`,
  }),
  /** A run event for the live stream, in order. */
  runEvent: (tenantId: string, projectId: string, runId: string, eventId: string): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `EVENT#${runId}#${eventId}`,
  }),
  runEventPrefix: (tenantId: string, projectId: string, runId: string) => ({
    pk: projectPk(tenantId, projectId),
    skPrefix: `EVENT#${runId}#`,
  }),
  /** The warnings of one checkpoint move, keyed by where the move started (its first event's id). */
  runWarnings: (tenantId: string, projectId: string, runId: string, moveId: string): Key => ({
    pk: projectPk(tenantId, projectId),
    sk: `WARN#${runId}#${moveId}`,
  }),
  runWarningsPrefix: (tenantId: string, projectId: string, runId: string) => ({
    pk: projectPk(tenantId, projectId),
    skPrefix: `WARN#${runId}#`,
  }),

  scan: (tenantId: string, scanId: string): Key => ({ pk: tenantPk(tenantId), sk: `SCAN#${scanId}` }),
  /**
   * The tenant's running background scans, as leases in one item (functions/store/scan-leases.ts): its cap, and
   * one running scan per project and per credential, are decided on it under a version condition.
   */
  scanLeases: (tenantId: string): Key => ({ pk: tenantPk(tenantId), sk: 'SCANLEASES' }),
  scanPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'SCAN#' }),

  plugin: (tenantId: string, pluginKey: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `PLUGIN#${pluginKey}`,
  }),
  pluginPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'PLUGIN#' }),

  /** Quotes and payments live under the tenant, not the project: the account's books outlive a deleted project. */
  quote: (tenantId: string, quoteId: string): Key => ({ pk: tenantPk(tenantId), sk: `QUOTE#${quoteId}` }),
  quotePrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'QUOTE#' }),
  /** A payment by the provider's id (a Stripe Checkout Session id): the webhook finds it directly. */
  payment: (tenantId: string, paymentId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `PAYMENT#${paymentId}`,
  }),
  paymentPrefix: (tenantId: string) => ({ pk: tenantPk(tenantId), skPrefix: 'PAYMENT#' }),
  /** A provider event already acted on: a redelivered webhook finds it and changes nothing. */
  paymentEvent: (tenantId: string, provider: string, eventId: string): Key => ({
    pk: tenantPk(tenantId),
    sk: `PAYEVENT#${provider}#${eventId}`,
  }),
};

/**
 * The kinds of partition, as IAM `dynamodb:LeadingKeys` patterns (`*` any text): the stack grants each function
 * the kinds it touches (lib/data-access.ts). Built with the key builders above, so a changed prefix changes them.
 * `tenant` matches a tenant's project partitions too (`TENANT#<t>#PROJECT#<p>`); a grant without `project` is
 * kept off them by a condition of its own.
 */
export const PARTITIONS = {
  tenant: tenantPk('*'),
  project: projectPk('*', '*'),
  loginEmail: keys.loginEntries('*').pk,
  invitation: keys.invitation('*').pk,
  refreshToken: keys.refreshToken('*').pk,
  rateWindow: keys.rateWindow('*', '*', 0).pk,
  site: `${SITE_PK}*`,
  ssoSlug: keys.ssoSlug('*').pk,
  ssoAttempt: keys.ssoAttempt('*').pk,
  oauthAttempt: keys.oauthAttempt('*').pk,
  dashboardConnection: keys.dashboardConnectionById('*').pk,
} as const;

export type Partition = keyof typeof PARTITIONS;
