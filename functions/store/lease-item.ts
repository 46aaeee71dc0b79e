/**
 * The writes both lease items take (a user's event streams, a tenant's running scans): the leases, read and
 * decided on, go back only if nobody wrote the item since it was read, so two instances admitting at once cannot
 * both take the last place. The item's TTL is its latest lease's expiry: it goes once every lease has lapsed.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Key } from './keys.ts';
import { conditionHeld, type Table } from './table.ts';

/** True when written; false when another write came first (read again and decide anew). */
export function putLeasesIfUnchanged(
  table: Table,
  key: Key,
  read: { version?: number } | undefined,
  leases: Record<string, unknown>,
  latestExpiry: number,
): Promise<boolean> {
  return conditionHeld(
    table.db.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...key, leases, version: (read?.version ?? 0) + 1, ttl: latestExpiry },
        ConditionExpression: read ? 'version = :v' : 'attribute_not_exists(pk)',
        ...(read ? { ExpressionAttributeValues: { ':v': read.version ?? 0 } } : {}),
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
