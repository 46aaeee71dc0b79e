/**
 * A run's place among the runs working one Jira site (docs/engine-and-limits.md, "Several runs into one site"):
 * at the invocation's start and every SITE_SYNC_MS after, one write to the site's record renews the run's lease,
 * adds the rates this run's pacer learnt and a quota pause it met, and answers the record; the pacer then paces
 * each endpoint the site stated a rate for at its share (rate / live leases), and a pause another run met holds
 * this client too. DynamoDB is not asked per request. A failed sync changes nothing: the pacer keeps what it knows.
 */
import { createHash } from 'node:crypto';
import {
  EMPTY_SITE,
  lapsedLeases,
  SITE_LEASE_MS,
  SITE_SYNC_MS,
  type SiteState,
  type SiteSync,
  shareOf,
} from '#domain/site-share.ts';
import { logger } from '#platform/logger.ts';
import type { TrackerHttp } from './http.ts';

export type { SiteSync };

/** The site record's reads and writes (functions/store/site-limits.ts). */
export interface SiteLimitsStore {
  sync(siteId: string, sync: SiteSync): Promise<SiteState>;
  release(siteId: string, leaseId: string): Promise<void>;
}

/** A site's identity: its origin, lower-cased (a credential is never part of it). */
export function siteIdOf(baseUrl: string): string {
  return new URL(baseUrl).origin.toLowerCase();
}

/** A run's lease id: opaque, so the global record holds no tenant's ids. */
export function leaseIdOf(tenantId: string, runId: string): string {
  return createHash('sha256').update(`${tenantId}\n${runId}`).digest('base64url').slice(0, 16);
}

export class SiteShare {
  private known: SiteState = EMPTY_SITE;
  private timer: NodeJS.Timeout | undefined;
  private http: TrackerHttp | undefined;
  /** Syncs made (the bench prices them). */
  syncs = 0;

  constructor(
    private readonly store: SiteLimitsStore,
    readonly siteId: string,
    readonly leaseId: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads the site for `http`'s pacer now, then every SITE_SYNC_MS until stop(). */
  async join(http: TrackerHttp): Promise<void> {
    this.http = http;
    await this.sync();
    this.timer = setInterval(() => void this.sync(), SITE_SYNC_MS);
    this.timer.unref();
  }

  /** One sync: the lease renewed, what is new written, the pacer given the site's rates and this run's share. */
  async sync(): Promise<void> {
    const http = this.http;
    if (!http) return;
    const now = this.now();
    const stated = http.pacer.statedRates();
    const rates = Object.fromEntries(
      Object.entries(stated).filter(([endpoint, rate]) => this.known.rates[endpoint] !== rate),
    );
    const pause = http.pacer.clientPause;
    try {
      this.known = await this.store.sync(this.siteId, {
        lease: { id: this.leaseId, expiresAt: now + SITE_LEASE_MS },
        rates,
        ...(pause > Math.max(now, this.known.pausedUntil) ? { pausedUntil: pause } : {}),
        // Its own lease, lapsed or not, is renewed by this very write.
        lapsed: lapsedLeases(this.known.leases, now).filter((id) => id !== this.leaseId),
        now,
      });
      this.syncs++;
    } catch (err) {
      logger.warn('site limits not synced', { error: err instanceof Error ? err.name : String(err) });
      return;
    }
    http.pacer.adoptSite(this.known.rates, shareOf(this.known.leases, this.leaseId, now));
    if (this.known.pausedUntil > now) http.holdForSite(this.known.pausedUntil);
  }

  /** Stops the syncs (the invocation ends); the lease lapses by itself unless renewed by the next invocation. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The run is over: its place is given back at once. */
  async leave(): Promise<void> {
    this.stop();
    await this.store.release(this.siteId, this.leaseId).catch(() => undefined);
  }
}
