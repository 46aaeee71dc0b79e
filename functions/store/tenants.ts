import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import { nowIso } from '#platform/clock.ts';
import { keys, TABLE_KEYS } from './keys.ts';
import { queryAll, type Table, withoutKeys } from './table.ts';

export interface Tenant {
  id: string;
  name: string;
  /** Kept with the tenant so "the last owner cannot leave" is one conditional write, not a count query. */
  ownerCount: number;
  createdAt: string;
}

export class TenantRepository {
  constructor(private readonly table: Table) {}

  async create(name: string): Promise<Tenant> {
    const tenant: Tenant = { id: uuidv7(), name, ownerCount: 0, createdAt: nowIso() };
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: {
          ...keys.tenant(tenant.id),
          [TABLE_KEYS.gsi1.partitionKey]: keys.tenantIndex(),
          [TABLE_KEYS.gsi1.sortKey]: tenant.id,
          ...tenant,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return tenant;
  }

  async get(tenantId: string): Promise<Tenant | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.tenant(tenantId) }),
    );
    return out.Item ? (withoutKeys(out.Item) as unknown as Tenant) : undefined;
  }

  /** All tenants, oldest first (ids are time-ordered). */
  async list(): Promise<Tenant[]> {
    const items = await queryAll(this.table, {
      IndexName: TABLE_KEYS.gsi1.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.tenantIndex() },
    });
    return items.map((i) => withoutKeys(i) as unknown as Tenant);
  }
}
