import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { nowIso } from '#platform/clock.ts';
import { keys, TABLE_KEYS } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { queryAll, type Table } from './table.ts';

export interface Tenant {
  id: string;
  name: string;
  /** Kept with the tenant so "the last owner cannot leave" is one conditional write, not a count query. */
  ownerCount: number;
  createdAt: string;
}

const TENANT = storedEntity(
  'tenant',
  exactSchema<Tenant>()(
    z.object({ id: z.string(), name: z.string(), ownerCount: z.number(), createdAt: z.string() }),
  ),
);

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
    return out.Item ? TENANT.parse(out.Item) : undefined;
  }

  /** All tenants, oldest first (ids are time-ordered). */
  async list(): Promise<Tenant[]> {
    const items = await queryAll(this.table, {
      IndexName: TABLE_KEYS.gsi1.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.tenantIndex() },
    });
    return items.map((i) => TENANT.parse(i));
  }
}
