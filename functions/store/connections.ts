/** A project's tracker connections: sealed credentials, a non-secret summary and the last test's outcome. */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ConnectionMaker } from '#domain/connection-use.ts';
import { CONNECTION_KINDS, type ConnectionKind } from '#domain/connectors.ts';
import { exactSchema } from '#domain/exact-schema.ts';
import { OAUTH_PROVIDERS, type OAuthProvider } from '#domain/tracker-oauth.ts';
import type { SealedSecret } from '#platform/credentials-cipher.ts';
import { ROLES } from '#platform/tokens.ts';
import { keys } from './keys.ts';
import { SealedSecretSchema } from './sealed-secret.ts';
import { storedEntity } from './stored-item.ts';
import { conditionHeld, type Table } from './table.ts';

export interface StoredConnection {
  kind: ConnectionKind;
  ok: boolean;
  message: string;
  testedAt: string | null;
  /** What may be shown: organisation, project, base URL, e-mail, key, item count. Never a token. */
  summary: Record<string, string | number>;
  sealed?: SealedSecret;
  /** How it authenticates: a pasted token (absent on older records) or an OAuth grant the service refreshes. */
  method?: 'token' | 'oauth';
  provider?: OAuthProvider;
  /** Bumped by every write of the sealed value: refreshes of an OAuth token are conditional on it. */
  version?: number;
  /** The provider refused the grant ("Token exchange failed"): nothing works until the tracker is reconnected. */
  reconnectRequired?: boolean;
  /**
   * Who pasted the token or consented the grant, in the role they had then (absent on records written before it
   * was kept, and on the demo seed's): what a member may pair it with (domain/connection-use.ts).
   */
  connectedBy?: ConnectionMaker;
}

const CONNECTION = storedEntity(
  'connection',
  exactSchema<StoredConnection>()(
    z.object({
      kind: z.enum(CONNECTION_KINDS),
      ok: z.boolean(),
      message: z.string(),
      testedAt: z.string().nullable(),
      summary: z.record(z.string(), z.union([z.string(), z.number()])),
      sealed: SealedSecretSchema.optional(),
      method: z.enum(['token', 'oauth']).optional(),
      provider: z.enum(OAUTH_PROVIDERS).optional(),
      version: z.number().optional(),
      reconnectRequired: z.boolean().optional(),
      connectedBy: z.object({ userId: z.string(), role: z.enum(ROLES) }).optional(),
    }),
  ),
);

export class ConnectionRepository {
  constructor(private readonly table: Table) {}

  async put(tenantId: string, projectId: string, connection: StoredConnection): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.connection(tenantId, projectId, connection.kind), ...connection },
      }),
    );
  }

  async get(
    tenantId: string,
    projectId: string,
    kind: ConnectionKind,
  ): Promise<StoredConnection | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.connection(tenantId, projectId, kind),
        ConsistentRead: true,
      }),
    );
    return out.Item ? CONNECTION.parse(out.Item) : undefined;
  }

  /**
   * A test of the stored connection: its outcome (and, when an owner or admin adopts a record that names no
   * maker, who made it), the sealed value and version untouched.
   */
  async recordTest(
    tenantId: string,
    projectId: string,
    kind: ConnectionKind,
    outcome: Pick<StoredConnection, 'ok' | 'message' | 'testedAt' | 'summary' | 'connectedBy'>,
  ): Promise<void> {
    const fields = Object.entries(outcome).filter(([, v]) => v !== undefined);
    await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.connection(tenantId, projectId, kind),
        UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :f${i}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(fields.map(([k], i) => [`#f${i}`, k])),
        ExpressionAttributeValues: Object.fromEntries(fields.map(([, v], i) => [`:f${i}`, v])),
      }),
    );
  }

  /**
   * Replaces the sealed value (a refreshed OAuth token) if nobody wrote it since `version` was read; false
   * when somebody did (their newer tokens stay).
   */
  async replaceSealed(
    tenantId: string,
    projectId: string,
    kind: ConnectionKind,
    sealed: SealedSecret,
    version: number,
  ): Promise<boolean> {
    return this.updateAt(tenantId, projectId, kind, version, { sealed });
  }

  /** The grant was refused: the connection shows `message` and asks to reconnect (unless rewritten meanwhile). */
  async markReconnectRequired(
    tenantId: string,
    projectId: string,
    kind: ConnectionKind,
    message: string,
    version: number,
  ): Promise<boolean> {
    return this.updateAt(tenantId, projectId, kind, version, { ok: false, message, reconnectRequired: true });
  }

  private async updateAt(
    tenantId: string,
    projectId: string,
    kind: ConnectionKind,
    version: number,
    fields: Partial<StoredConnection>,
  ): Promise<boolean> {
    const names: Record<string, string> = { '#version': 'version' };
    const values: Record<string, unknown> = { ':next': version + 1 };
    const sets = ['#version = :next'];
    Object.entries(fields).forEach(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:f${i}`] = v;
      sets.push(`#f${i} = :f${i}`);
    });
    if (version !== 0) values[':version'] = version;
    return conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.connection(tenantId, projectId, kind),
          UpdateExpression: `SET ${sets.join(', ')}`,
          // A record written before versions existed counts as version 0.
          ConditionExpression:
            version === 0 ? 'attribute_exists(pk) AND attribute_not_exists(#version)' : '#version = :version',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  async delete(tenantId: string, projectId: string, kind: ConnectionKind): Promise<void> {
    await this.table.db.send(
      new DeleteCommand({ TableName: this.table.name, Key: keys.connection(tenantId, projectId, kind) }),
    );
  }
}
