/**
 * Started OAuth connections, one-time: the callback reads its attempt (to check the browser binding first), then
 * takes (deletes) it, so a replayed state finds none.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { CONNECTION_KINDS, type ConnectionKind } from '#domain/connectors.ts';
import { exactSchema } from '#domain/exact-schema.ts';
import { OAUTH_PROVIDERS, type OAuthProvider } from '#domain/tracker-oauth.ts';
import { ROLES, type Role } from '#platform/tokens.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import type { Table } from './table.ts';

export interface OAuthAttempt {
  stateHash: string;
  /** SHA-256 of the value in the starting browser's cookie: the callback must come from that browser. */
  bindingHash: string;
  tenantId: string;
  projectId: string;
  userId: string;
  /** The starter's role then: the grant's maker (absent on attempts started before it was kept: a member). */
  role?: Role;
  kind: ConnectionKind;
  provider: OAuthProvider;
  /** PKCE: only useful with the provider's code, and gone within minutes. */
  codeVerifier: string;
  redirectUri: string;
  returnTo: string;
  /** What the start asked for: source organisation and project, or target project key and site. */
  request: Record<string, string>;
  /** Epoch seconds; also the table's TTL (whose deletion is lazy, so the callback checks it too). */
  expiresAt: number;
}

const OAUTH_ATTEMPT = storedEntity(
  'oauthAttempt',
  exactSchema<OAuthAttempt>()(
    z.object({
      stateHash: z.string(),
      bindingHash: z.string(),
      tenantId: z.string(),
      projectId: z.string(),
      userId: z.string(),
      role: z.enum(ROLES).optional(),
      kind: z.enum(CONNECTION_KINDS),
      provider: z.enum(OAUTH_PROVIDERS),
      codeVerifier: z.string(),
      redirectUri: z.string(),
      returnTo: z.string(),
      request: z.record(z.string(), z.string()),
      expiresAt: z.number(),
    }),
  ),
);

export class OAuthAttemptRepository {
  constructor(private readonly table: Table) {}

  async put(attempt: OAuthAttempt): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.oauthAttempt(attempt.stateHash), ...attempt, ttl: attempt.expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** The attempt, unspent (a strongly consistent read): the callback checks its binding before taking it. */
  async get(stateHash: string): Promise<OAuthAttempt | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.oauthAttempt(stateHash), ConsistentRead: true }),
    );
    return out.Item ? OAUTH_ATTEMPT.parse(out.Item) : undefined;
  }

  /** Deletes and returns the attempt: of two callbacks with one state, only one gets it. */
  async take(stateHash: string): Promise<OAuthAttempt | undefined> {
    const out = await this.table.db.send(
      new DeleteCommand({
        TableName: this.table.name,
        Key: keys.oauthAttempt(stateHash),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes ? OAUTH_ATTEMPT.parse(out.Attributes) : undefined;
  }
}
