/**
 * One tracker site's shared limits, one item per site (keys.site): each run's lease (`lease:<id>` = expiry, epoch
 * ms), each endpoint's stated rate (`rate:<endpoint>`) and the site's quota pause (`pausedUntil`). A run renews
 * its lease, adds what it learnt and drops the leases it saw lapsed in one UpdateItem that answers the whole
 * record: no read before it, no condition (each run writes its own lease; two runs writing one endpoint's rate
 * write what the site stated to both). A quota pause is the exception: two runs may each have met a reset since
 * they last read the record, so it is written on its own, only if later than the one stored (the later wins, never
 * the last written). The item's TTL keeps the rates a day past the last write.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { SITE_RECORD_TTL_SECONDS, type SiteState, type SiteSync } from '#domain/site-share.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { conditionHeld, type Table } from './table.ts';

const LEASE = 'lease:';
const RATE = 'rate:';

/** The record as the pacer reads it: every lease expiry, stated rate and the pause a number (never paced at NaN). */
const SITE_RECORD = storedEntity<SiteState>(
  'site limits',
  z.looseObject({ pausedUntil: z.number().optional() }).transform((item, ctx) => {
    const state: SiteState = { leases: {}, rates: {}, pausedUntil: item.pausedUntil ?? 0 };
    for (const [name, value] of Object.entries(item)) {
      const into = name.startsWith(LEASE) ? state.leases : name.startsWith(RATE) ? state.rates : undefined;
      if (!into) continue;
      if (typeof value === 'number') into[name.slice(name.indexOf(':') + 1)] = value;
      else ctx.issues.push({ code: 'invalid_type', expected: 'number', input: value, path: [name] });
    }
    return state;
  }),
);

export class SiteLimitsRepository {
  constructor(private readonly table: Table) {}

  /** Renews the lease, writes what is new, answers the site's record as it is after the write. */
  async sync(siteId: string, sync: SiteSync): Promise<SiteState> {
    const names: Record<string, string> = { '#ttl': 'ttl', '#own': `${LEASE}${sync.lease.id}` };
    const values: Record<string, unknown> = {
      ':own': sync.lease.expiresAt,
      ':ttl': Math.ceil(sync.now / 1000) + SITE_RECORD_TTL_SECONDS,
    };
    const sets = ['#own = :own', '#ttl = :ttl'];
    Object.entries(sync.rates).forEach(([endpoint, rate], i) => {
      names[`#r${i}`] = `${RATE}${endpoint}`;
      values[`:r${i}`] = rate;
      sets.push(`#r${i} = :r${i}`);
    });
    if (sync.pausedUntil) await this.extendPause(siteId, sync.pausedUntil);
    const removes = sync.lapsed
      .filter((id) => id !== sync.lease.id)
      .map((id, i) => {
        names[`#l${i}`] = `${LEASE}${id}`;
        return `#l${i}`;
      });
    const out = await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.site(siteId),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return SITE_RECORD.parse(out.Attributes ?? {});
  }

  /** Sets the site's quota pause to `until` unless the record holds a later one (which then stands). */
  private async extendPause(siteId: string, until: number): Promise<void> {
    await conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.site(siteId),
          UpdateExpression: 'SET #paused = :paused',
          ConditionExpression: 'attribute_not_exists(#paused) OR #paused < :paused',
          ExpressionAttributeNames: { '#paused': 'pausedUntil' },
          ExpressionAttributeValues: { ':paused': until },
        }),
      ),
    );
  }

  /** Gives the run's place back (its run ended): the others take its share at their next read. */
  async release(siteId: string, leaseId: string): Promise<void> {
    await conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.site(siteId),
          UpdateExpression: 'REMOVE #own',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#own': `${LEASE}${leaseId}` },
        }),
      ),
    );
  }
}
