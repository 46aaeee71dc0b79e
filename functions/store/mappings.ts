/** A project's mappings record: one item under the project's partition. */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MappingsRecord } from '#domain/mappings.ts';
import { keys } from './keys.ts';
import { type Table, withoutKeys } from './table.ts';

export class MappingsRepository {
  constructor(private readonly table: Table) {}

  async get(tenantId: string, projectId: string): Promise<MappingsRecord | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.mappings(tenantId, projectId),
        ConsistentRead: true,
      }),
    );
    return out.Item ? (withoutKeys(out.Item) as unknown as MappingsRecord) : undefined;
  }

  async put(tenantId: string, record: MappingsRecord): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.mappings(tenantId, record.projectId), ...record },
      }),
    );
  }
}
