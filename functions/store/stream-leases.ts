/**
 * A user's open event streams, as leases in one item: `leases` maps a lease id to its expiry (epoch seconds).
 * Taking a lease reads the item, drops lapsed leases and writes it back under a version condition, so two
 * function instances admitting at once cannot both take the last place. A lease lapses by itself when the
 * invocation that holds it must have ended, so a killed instance never holds a place for long; the item's TTL
 * removes it once every lease has lapsed.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { type Key, keys } from './keys.ts';
import { leaseItemEntity, putLeasesIfUnchanged, removeLease } from './lease-item.ts';
import type { Table } from './table.ts';

/** A lease id -> its expiry (epoch seconds). */
const STREAM_LEASES = leaseItemEntity('streamLeases', z.number());

/** Tries before giving up on a busy item (each retry means another admission won a race: read again). */
const ATTEMPTS = 10;

export class StreamLeaseRepository {
  /** `keyOf`: whose leases (the SSE streams' by default; the dashboard's WebSockets keep their own item). */
  constructor(
    private readonly table: Table,
    private readonly keyOf: (tenantId: string, userId: string) => Key = keys.streamLeases,
  ) {}

  /** Takes a place for `leaseId` until `expiresAt` unless `max` live leases exist; false when full. */
  async acquire(
    tenantId: string,
    userId: string,
    lease: { id: string; expiresAt: number },
    max: number,
    now: number,
  ): Promise<boolean> {
    const key = this.keyOf(tenantId, userId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const out = await this.table.db.send(
        new GetCommand({ TableName: this.table.name, Key: key, ConsistentRead: true }),
      );
      const item = out.Item ? STREAM_LEASES.parse(out.Item) : undefined;
      const live = Object.entries(item?.leases ?? {}).filter(([, expiry]) => expiry > now);
      if (live.length >= max) return false;
      const leases = Object.fromEntries([...live, [lease.id, lease.expiresAt]]);
      if (await putLeasesIfUnchanged(this.table, key, item, leases, Math.max(...Object.values(leases))))
        return true;
    }
    return false;
  }

  /** Gives the place back (a lease already gone is nothing to do). */
  async release(tenantId: string, userId: string, leaseId: string): Promise<void> {
    await removeLease(this.table, this.keyOf(tenantId, userId), leaseId);
  }
}
