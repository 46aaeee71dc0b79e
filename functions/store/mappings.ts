/** A project's mappings: the working record and the confirmed copy runs use, two items under the project. */
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type MappingsRecord, MappingsRecordSchema } from '#domain/mappings.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import type { Table } from './table.ts';

const MAPPINGS = storedEntity('mappings', MappingsRecordSchema);

export class MappingsRepository {
  constructor(private readonly table: Table) {}

  /** The working record (saved or confirmed), as GET shows it. */
  async get(tenantId: string, projectId: string): Promise<MappingsRecord | undefined> {
    return this.read(keys.mappings(tenantId, projectId));
  }

  /** The record as last confirmed, what a run maps with; undefined before the first confirmation. */
  async confirmed(tenantId: string, projectId: string): Promise<MappingsRecord | undefined> {
    return this.read(keys.confirmedMappings(tenantId, projectId));
  }

  async put(tenantId: string, record: MappingsRecord): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.mappings(tenantId, record.projectId), ...record },
      }),
    );
  }

  /** Writes the confirmed record as both the working record and the copy runs use, in one transaction. */
  async putConfirmed(tenantId: string, record: MappingsRecord): Promise<void> {
    await this.table.db.send(
      new TransactWriteCommand({
        TransactItems: [keys.mappings, keys.confirmedMappings].map((key) => ({
          Put: { TableName: this.table.name, Item: { ...key(tenantId, record.projectId), ...record } },
        })),
      }),
    );
  }

  private async read(key: { pk: string; sk: string }): Promise<MappingsRecord | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: key, ConsistentRead: true }),
    );
    return out.Item ? MAPPINGS.parse(out.Item) : undefined;
  }
}
