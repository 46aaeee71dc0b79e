/** A project's tracker connections: sealed credentials, a non-secret summary and the last test's outcome. */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SealedSecret } from '#platform/credentials-cipher.ts';
import { keys } from './keys.ts';
import type { Table } from './table.ts';

export type ConnectionKind = 'source' | 'target';

export interface StoredConnection {
  kind: ConnectionKind;
  ok: boolean;
  message: string;
  testedAt: string | null;
  /** What may be shown: organisation, project, base URL, e-mail, key, item count. Never a token. */
  summary: Record<string, string | number>;
  sealed?: SealedSecret;
}

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
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ...rest } = out.Item;
    return rest as StoredConnection;
  }

  async delete(tenantId: string, projectId: string, kind: ConnectionKind): Promise<void> {
    await this.table.db.send(
      new DeleteCommand({ TableName: this.table.name, Key: keys.connection(tenantId, projectId, kind) }),
    );
  }
}
