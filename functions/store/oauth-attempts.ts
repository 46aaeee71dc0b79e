/**
 * Started OAuth connections, one-time: the callback reads its attempt (to check the browser binding first), then
 * takes (deletes) it, so a replayed state finds none.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ConnectionKind } from '#domain/connectors.ts';
import type { OAuthProvider } from '#domain/tracker-oauth.ts';
import type { Role } from '#platform/tokens.ts';
import { keys } from './keys.ts';
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
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ttl: _ttl, ...attempt } = out.Item;
    return attempt as OAuthAttempt;
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
    if (!out.Attributes) return undefined;
    const { pk: _pk, sk: _sk, ttl: _ttl, ...attempt } = out.Attributes;
    return attempt as OAuthAttempt;
  }
}
