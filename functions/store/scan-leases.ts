/**
 * A tenant's running background scans, as leases in one item: `leases` maps a scan id to its place (what it
 * scans, and when the place lapses). Taking a place reads the item, drops lapsed leases, asks the caller's rule
 * (functions/domain/scan-slots.ts) and writes it back under a version condition, so two requests at once cannot
 * both take the last place, or both start a scan of one project. The worker gives the place back when the scan
 * ends; a crashed one's lapses by itself, and the item's TTL removes it once every lease has lapsed.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import type { ScanLease, ScanSlotDecision } from '#domain/scan-slots.ts';
import { keys } from './keys.ts';
import { type LeaseItem, leaseItemEntity, putLeasesIfUnchanged, removeLease } from './lease-item.ts';
import type { Table } from './table.ts';

type StoredLease = Omit<ScanLease, 'scanId'>;

const SCAN_LEASES = leaseItemEntity(
  'scanLeases',
  exactSchema<StoredLease>()(
    z.object({
      projectId: z.string().nullable(),
      credential: z.string().nullable(),
      scope: z.string(),
      expiresAt: z.number(),
    }),
  ),
);

/** Tries before giving up on a busy item (each retry means another start won a race: read again). */
const ATTEMPTS = 10;

export type ScanLeaseOutcome = Exclude<ScanSlotDecision, { kind: 'free' }> | { kind: 'taken' };

export class ScanLeaseRepository {
  constructor(private readonly table: Table) {}

  /** The tenant's leases still live at `now` (epoch seconds). */
  async live(tenantId: string, now: number): Promise<ScanLease[]> {
    return liveLeases(await this.read(tenantId), now);
  }

  /**
   * Takes a place for `lease` when `decide`, given the live leases, says `free`; otherwise answers its decision.
   * Several starts at once: one wins each write, the others read again and decide anew.
   */
  async acquire(
    tenantId: string,
    lease: ScanLease,
    decide: (live: ScanLease[]) => ScanSlotDecision,
    now: number,
  ): Promise<ScanLeaseOutcome> {
    const key = keys.scanLeases(tenantId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const item = await this.read(tenantId);
      const live = liveLeases(item, now);
      const decision = decide(live);
      if (decision.kind !== 'free') return decision;
      const { scanId, ...place } = lease;
      const leases: Record<string, StoredLease> = Object.fromEntries([
        ...live.map(({ scanId: id, ...rest }) => [id, rest] as const),
        [scanId, place],
      ]);
      const latestExpiry = Math.max(...Object.values(leases).map((l) => l.expiresAt));
      if (await putLeasesIfUnchanged(this.table, key, item, leases, latestExpiry)) return { kind: 'taken' };
    }
    throw new Error(`scan leases of tenant ${tenantId}: still contended after ${ATTEMPTS} attempts`);
  }

  /** Gives the scan's place back (a lease already gone, or no item at all, is nothing to do). */
  async release(tenantId: string, scanId: string): Promise<void> {
    await removeLease(this.table, keys.scanLeases(tenantId), scanId);
  }

  private async read(tenantId: string): Promise<LeaseItem<StoredLease> | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.scanLeases(tenantId), ConsistentRead: true }),
    );
    return out.Item ? SCAN_LEASES.parse(out.Item) : undefined;
  }
}

function liveLeases(item: LeaseItem<StoredLease> | undefined, now: number): ScanLease[] {
  return Object.entries(item?.leases ?? {})
    .filter(([, l]) => l.expiresAt > now)
    .map(([scanId, l]) => ({ scanId, ...l }));
}
