/**
 * What each function may do with the table and with the credentials key, as IAM can say it (issue 29): the
 * partitions it reads and writes (`dynamodb:LeadingKeys`, patterns from functions/store/keys.ts PARTITIONS),
 * whether it queries GSI1, and the kinds of secret it seals and opens (`kms:EncryptionContext:<key>`, from
 * functions/platform/secret-contexts.ts SECRET_KINDS). Pure: the statements are built here as plain data;
 * lib/data-grants.ts attaches them to the roles, and the test app holds every request the handlers make to their
 * function's grant (test/support/table-grants.ts), so a store access the stack would refuse fails the test.
 *
 * What IAM cannot say: which tenant. Every tenant's partition is `TENANT#<id>` and a function serves them all,
 * so within the partitions granted a function reaches every tenant's items; tenancy is the handlers' (every key
 * starts with the caller's tenant, functions/store/keys.ts).
 */
import type { LambdaName } from '../functions/platform/env.ts';
import { SECRET_KINDS, type SecretKind } from '../functions/platform/secret-contexts.ts';
import { PARTITIONS, type Partition, TABLE_KEYS } from '../functions/store/keys.ts';

export interface TableGrant {
  /** Partitions read (reads are granted on the written ones too). */
  read: readonly Partition[];
  /** Partitions written: items put, updated, deleted. */
  write: readonly Partition[];
  /** Queries GSI1 (a project's runs, most recent first). */
  queriesIndex: boolean;
}

export interface SecretGrant {
  /** Kinds sealed: a fresh data key (kms:GenerateDataKey) under the kind's context. */
  seal: readonly SecretKind[];
  /** Kinds opened: the data key decrypted (kms:Decrypt) under the kind's context. */
  open: readonly SecretKind[];
}

export interface DataAccess {
  /** None: no table access at all. */
  table: TableGrant | undefined;
  secrets: SecretGrant;
}

const NO_SECRETS: SecretGrant = { seal: [], open: [] };
/** A project's tracker credentials: opened to build clients, sealed again when an OAuth grant is refreshed. */
const TRACKER_CREDENTIALS: SecretGrant = { seal: ['trackerCredentials'], open: ['trackerCredentials'] };

/** A signed-in user's session is checked against the user record (tenant partition) on every request. */
export const DATA_ACCESS: Record<LambdaName, DataAccess> = {
  // Liveness: no I/O.
  health: { table: undefined, secrets: NO_SECRETS },
  // Login (the address's login entries, the user), accepting an invitation (it creates the user and its login
  // entry), refresh-token rotation, rate-limit windows.
  auth: {
    table: {
      read: [],
      write: ['tenant', 'loginEmail', 'invitation', 'refreshToken', 'rateWindow'],
      queriesIndex: false,
    },
    secrets: NO_SECRETS,
  },
  // Single sign-on: the configuration and its slug, sign-in attempts, users created or linked (an invitation
  // accepted by the first sign-in), sessions started.
  sso: {
    table: {
      read: [],
      write: ['tenant', 'ssoSlug', 'ssoAttempt', 'loginEmail', 'invitation', 'refreshToken', 'rateWindow'],
      queriesIndex: false,
    },
    secrets: { seal: ['ssoClientSecret'], open: ['ssoClientSecret'] },
  },
  // Projects (a deletion takes the project's partition with it, refused while one of its runs is being verified
  // or rolled back: the project's runs on GSI1), mappings and target metadata read both trackers with the stored
  // credentials (a refreshed OAuth grant is written back sealed).
  projects: {
    table: { read: [], write: ['tenant', 'project'], queriesIndex: true },
    secrets: TRACKER_CREDENTIALS,
  },
  // Connection tests and scans (credentials stored sealed, a background scan's inline ones sealed on the scan
  // for the worker), the OAuth start and callback (the attempt, then the grant; the public callback is rate
  // limited). A connection is not moved while a run of its project has not ended: the project's runs on GSI1.
  connectors: {
    table: { read: [], write: ['tenant', 'project', 'oauthAttempt', 'rateWindow'], queriesIndex: true },
    secrets: { seal: ['trackerCredentials', 'scanCredentials'], open: ['trackerCredentials'] },
  },
  // Members and invitations (a tenant's daily count in a rate window); removing a member ends their sessions and
  // closes their dashboard sockets.
  team: {
    table: {
      read: [],
      write: ['tenant', 'loginEmail', 'invitation', 'refreshToken', 'rateWindow', 'dashboardConnection'],
      queriesIndex: false,
    },
    secrets: NO_SECRETS,
  },
  // Quotes, payments and the provider's webhook (the project item, under the tenant).
  billing: { table: { read: [], write: ['tenant'], queriesIndex: false }, secrets: NO_SECRETS },
  // The tenant's enabled plugins: read only.
  plugins: { table: { read: ['tenant'], write: [], queriesIndex: false }, secrets: NO_SECRETS },
  // Runs: start (credentials sealed, an OAuth connection re-sealed with the run's project), lists, controls,
  // reports, failures, id map; run events posted to the tenant's dashboard sockets (gone ones removed).
  migrations: {
    table: { read: [], write: ['tenant', 'project', 'dashboardConnection'], queriesIndex: true },
    secrets: TRACKER_CREDENTIALS,
  },
  // The run's events (project partition), the user's stream leases (the only write).
  stream: { table: { read: ['project'], write: ['tenant'], queriesIndex: false }, secrets: NO_SECRETS },
  // The dashboard socket: the user's leases and the connection, both under the tenant and by its id.
  dashboard: {
    table: { read: [], write: ['tenant', 'dashboardConnection'], queriesIndex: false },
    secrets: NO_SECRETS,
  },
  // The migration engine: the run and everything of its project; the tenant's dashboard sockets; the Jira
  // sites' shared limits (functions/store/site-limits.ts); plugin configurations opened for their phases.
  engine: {
    table: { read: [], write: ['tenant', 'project', 'dashboardConnection', 'site'], queriesIndex: true },
    secrets: { seal: ['trackerCredentials'], open: ['trackerCredentials', 'pluginConfig'] },
  },
  // Large scans: the scan record, the project's stored credentials (or the scan's own, sealed on it).
  scanWorker: {
    table: { read: [], write: ['tenant', 'project'], queriesIndex: false },
    secrets: { seal: ['trackerCredentials'], open: ['trackerCredentials', 'scanCredentials'] },
  },
};

export const TABLE_READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
] as const;
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

/** An IAM statement as plain data (lib/data-grants.ts makes a PolicyStatement of it). */
export interface StatementData {
  actions: string[];
  resources: string[];
  conditions?: Record<string, Record<string, string | string[]>>;
}

/**
 * The partitions a request may name: one of `allowed`, and none of a tenant's project partitions unless they
 * are allowed (the tenant pattern matches them too). `Null: false` refuses a request naming no partition at all,
 * which ForAllValues would let through (an empty set matches everything).
 */
function leadingKeys(allowed: readonly Partition[]): StatementData['conditions'] {
  return {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...new Set(allowed)].map((p) => PARTITIONS[p]) },
    ...(allowed.includes('tenant') && !allowed.includes('project')
      ? { 'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': [PARTITIONS.project] } }
      : {}),
    Null: { 'dynamodb:LeadingKeys': 'false' },
  };
}

/** The table statements of a grant: reads, writes, the index. No Scan, no table or stream management. */
export function tableStatements(grant: TableGrant, tableArn: string): StatementData[] {
  const readable = [...grant.write, ...grant.read];
  return [
    ...(readable.length
      ? [{ actions: [...TABLE_READ_ACTIONS], resources: [tableArn], conditions: leadingKeys(readable) }]
      : []),
    ...(grant.write.length
      ? [{ actions: [...TABLE_WRITE_ACTIONS], resources: [tableArn], conditions: leadingKeys(grant.write) }]
      : []),
    // The index holds run records (and the operator's tenant list): Query only, on this index only.
    ...(grant.queriesIndex
      ? [{ actions: ['dynamodb:Query'], resources: [`${tableArn}/index/${TABLE_KEYS.gsi1.name}`] }]
      : []),
  ];
}

/** The key statements of a grant: each action on the kinds' contexts only, one statement per context key. */
export function keyStatements(grant: SecretGrant, keyArn: string): StatementData[] {
  const statements = (action: string, kinds: readonly SecretKind[]): StatementData[] => {
    const valuesByKey = new Map<string, string[]>();
    for (const kind of kinds) {
      const { key, values } = SECRET_KINDS[kind];
      valuesByKey.set(key, [...(valuesByKey.get(key) ?? []), ...values]);
    }
    return [...valuesByKey].map(([key, values]) => ({
      actions: [action],
      resources: [keyArn],
      conditions: { StringEquals: { [`kms:EncryptionContext:${key}`]: values } },
    }));
  };
  return [...statements('kms:GenerateDataKey', grant.seal), ...statements('kms:Decrypt', grant.open)];
}
