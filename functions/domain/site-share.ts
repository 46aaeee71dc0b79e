/**
 * How the runs working one Jira site share its limits (docs/engine-and-limits.md, "Several runs into one site").
 * A site's burst buckets and hourly quota are the site's, not a run's: runs that each paced to the whole learnt
 * rate overran it together. So each run holds a lease on the site's record while it works it, and paces each
 * endpoint the site has shown a rate for at its share: the rate divided by the runs holding a live lease. Pure:
 * the clock is the caller's.
 */

/** How often a run reads and renews the site's record while it works (an invocation also reads it at its start). */
export const SITE_SYNC_MS = 10_000;
/**
 * How long a lease outlives its last renewal: three missed renewals. A run between two invocations (a state
 * transition) keeps its place; a run that stopped (killed, waiting for a reset, ended) drops out within this.
 */
export const SITE_LEASE_MS = 3 * SITE_SYNC_MS;
/** How long the site's learnt rates are kept after the last write: a site's limits seldom change. */
export const SITE_RECORD_TTL_SECONDS = 24 * 3600;

/** What a site's record holds: each run's lease expiry (epoch ms), the rates it showed, its quota pause. */
export interface SiteState {
  /** Lease id -> expiry, epoch ms. */
  leases: Record<string, number>;
  /** Endpoint (method + path template) -> requests per second the site stated in a burst 429. */
  rates: Record<string, number>;
  /** Until when the whole site refused (its hourly quota), epoch ms; 0: no pause. */
  pausedUntil: number;
}

/** What a run writes to the site's record at a sync. */
export interface SiteSync {
  lease: { id: string; expiresAt: number };
  /** Rates this run learnt that the record did not hold when last read. */
  rates: Readonly<Record<string, number>>;
  /** A quota pause this run met, when later than the record's. */
  pausedUntil?: number;
  /** Leases seen lapsed at the last read: removed. */
  lapsed: readonly string[];
  now: number;
}

export const EMPTY_SITE: SiteState = Object.freeze({ leases: {}, rates: {}, pausedUntil: 0 });

/** The leases still live at `now`. */
export function liveLeases(leases: Record<string, number>, now: number): string[] {
  return Object.entries(leases)
    .filter(([, expiry]) => expiry > now)
    .map(([id]) => id);
}

/** The leases lapsed at `now` (dropped from the record at the next write). */
export function lapsedLeases(leases: Record<string, number>, now: number): string[] {
  return Object.entries(leases)
    .filter(([, expiry]) => expiry <= now)
    .map(([id]) => id);
}

/** The share of the site's rates one run takes: 1 / the runs holding a live lease (itself counted once). */
export function shareOf(leases: Record<string, number>, own: string, now: number): number {
  const live = new Set(liveLeases(leases, now));
  live.add(own);
  return 1 / live.size;
}

/** A run's pace for one endpoint: its share of the rate the site stated. */
export function sharedRate(siteRate: number, share: number): number {
  return siteRate * share;
}
