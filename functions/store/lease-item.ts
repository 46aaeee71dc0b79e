/**
 * The writes both lease items take (a user's event streams, a tenant's running scans): the leases, read and
 * decided on, go back only if nobody wrote the item since it was read, so two instances admitting at once cannot
 * both take the last place. The item's TTL is its latest lease's expiry: it goes once every lease has lapsed.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Key } from './keys.ts';
import { type StoredEntity, storedEntity } from './stored-item.ts';
import { conditionHeld, type Table } from './table.ts';

/** A lease item as read: its leases by id (none once every lease was given back) and its write version. */
export interface LeaseItem<L> {
  leases: Record<string, L>;
  version: number;
}

/**
 * The lease item entity whose leases read as `lease`. Absent leases or version read as none and 0: `removeLease`
 * can leave an item without leases, and `ADD version` counts from 0.
 */
export function leaseItemEntity<L>(name: string, lease: z.ZodType<L>): StoredEntity<LeaseItem<L>> {
  return storedEntity(
    name,
    z.object({
      leases: z.record(z.string(), lease).default(() => ({})),
      version: z.number().default(0),
    }),
  );
}

/** True when written; false when another write came first (read again and decide anew). */
export function putLeasesIfUnchanged(
  table: Table,
  key: Key,
  read: { version: number } | undefined,
  leases: Record<string, unknown>,
  latestExpiry: number,
): Promise<boolean> {
  return conditionHeld(
    table.db.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...key, leases, version: (read?.version ?? 0) + 1, ttl: latestExpiry },
        ConditionExpression: read ? 'version = :v' : 'attribute_not_exists(pk)',
        ...(read ? { ExpressionAttributeValues: { ':v': read.version } } : {}),
      }),
    ),
  );
}

/** Gives one lease back (a lease already gone, or no item at all, is nothing to do). */
export async function removeLease(table: Table, key: Key, leaseId: string): Promise<void> {
  await conditionHeld(
    table.db.send(
      new UpdateCommand({
        TableName: table.name,
        Key: key,
        UpdateExpression: 'REMOVE leases.#id ADD version :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#id': leaseId },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    ),
  );
}
