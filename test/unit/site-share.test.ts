/**
 * How runs of one Jira site share its limits, on a clock the test moves: a run's share is 1 / the runs holding a
 * live lease, a lease lapses once its expiry passes (a dead run drops out), and a pacer given the site's rates
 * paces each endpoint at its share from its first request, without a 429 of its own.
 */
import { describe, expect, it } from 'vitest';
import {
  lapsedLeases,
  liveLeases,
  SITE_LEASE_MS,
  SITE_SYNC_MS,
  sharedRate,
  shareOf,
} from '../../functions/domain/site-share.ts';
import { type PacingClock, type RequestKey, TrackerPacer } from '../../functions/trackers/pacing.ts';
import { leaseIdOf, SiteShare, type SiteSync, siteIdOf } from '../../functions/trackers/site-share.ts';

function fakeClock(): PacingClock & { at: number } {
  const clock = {
    at: 1_000_000,
    now: () => clock.at,
    sleep: async (ms: number) => {
      clock.at += ms;
    },
  };
  return clock;
}
const link: RequestKey = { endpoint: 'POST /rest/api/3/issueLink', write: true };

describe("a site's share", () => {
  it('is the rate divided by the runs holding a live lease, the run itself counted once', () => {
    const now = 5_000;
    const leases = { a: now + 1, b: now + SITE_LEASE_MS, c: now + 10 };
    expect(shareOf(leases, 'a', now)).toBeCloseTo(1 / 3);
    // A run not yet in the record counts itself.
    expect(shareOf(leases, 'd', now)).toBeCloseTo(1 / 4);
    expect(shareOf({}, 'a', now)).toBe(1);
    expect(sharedRate(100, shareOf(leases, 'a', now))).toBeCloseTo(100 / 3);
  });

  it('drops a run whose lease was not renewed: at its expiry it lapses, and the others take its share', () => {
    let now = 0;
    const leases = { alive: now + SITE_LEASE_MS, dead: now + SITE_LEASE_MS };
    expect(shareOf(leases, 'alive', now)).toBe(0.5);
    // The live run renews at each sync; the dead one never does.
    for (now = SITE_SYNC_MS; now < SITE_LEASE_MS; now += SITE_SYNC_MS) leases.alive = now + SITE_LEASE_MS;
    expect({ now, live: liveLeases(leases, now - 1), share: shareOf(leases, 'alive', now - 1) }).toEqual({
      now: SITE_LEASE_MS,
      live: ['alive', 'dead'],
      share: 0.5,
    });
    expect({ live: liveLeases(leases, now), lapsed: lapsedLeases(leases, now) }).toEqual({
      live: ['alive'],
      lapsed: ['dead'],
    });
    expect(shareOf(leases, 'alive', now)).toBe(1);
  });

  it('names a site by its origin and a run by an opaque id', () => {
    expect(siteIdOf('https://Acme.atlassian.net/')).toBe('https://acme.atlassian.net');
    expect(siteIdOf('https://acme.atlassian.net/jira')).toBe(siteIdOf('https://ACME.atlassian.net'));
    const lease = leaseIdOf('tenant-1', 'run-1');
    expect(lease).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(lease).not.toContain('tenant');
    expect(leaseIdOf('tenant-1', 'run-2')).not.toBe(lease);
  });
});

describe('a pacer given the site', () => {
  it('paces an endpoint at its share of the rate the site stated, from its first request', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    pacer.adoptSite({ [link.endpoint]: 100 }, 0.5);
    expect(pacer.laneState(link.endpoint).rate).toBeCloseTo(47.5);
    const start = clock.at;
    for (let i = 0; i < 95; i++) (await pacer.acquire(link))();
    // From an empty bucket, 95 requests at 47.5/s: two seconds, where an unpaced lane sends them at once.
    expect(clock.at - start).toBeGreaterThanOrEqual(1990);
    expect(clock.at - start).toBeLessThan(2030);
    expect(pacer.statedRates()).toEqual({ [link.endpoint]: 100 });
  });

  it('takes a new share of what it learnt itself, and a rate it learnt from a 429 at its share', () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    pacer.adoptSite({}, 1 / 3);
    pacer.onThrottle(link, { reason: 'jira-burst-based', retryAfterMs: 1000, limit: 90 });
    expect(pacer.laneState(link.endpoint).rate).toBeCloseTo((90 * 0.95) / 3);
    // Another run's lease lapsed: the share grows, the stated rate stays.
    pacer.adoptSite({ [link.endpoint]: 90 }, 1 / 2);
    expect(pacer.laneState(link.endpoint).rate).toBeCloseTo((90 * 0.95) / 2);
    expect(pacer.statedRates()).toEqual({ [link.endpoint]: 90 });
  });

  it('holds every request for a quota pause another run met', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    pacer.pauseClient(clock.at + 4000);
    const start = clock.at;
    (await pacer.acquire(link))();
    expect(clock.at - start).toBe(4000);
  });
});

describe('a run syncing with the site record', () => {
  it("writes only what is new, drops the lapsed leases it saw and gives its pacer the site's rates and share", async () => {
    let now = 0;
    const writes: unknown[] = [];
    const record = {
      leases: { other: SITE_LEASE_MS / 2 } as Record<string, number>,
      rates: { 'GET /x': 40 },
    };
    const store = {
      async sync(_site: string, sync: SiteSync) {
        writes.push({ rates: sync.rates, lapsed: sync.lapsed });
        for (const id of sync.lapsed) delete record.leases[id];
        record.leases[sync.lease.id] = sync.lease.expiresAt;
        Object.assign(record.rates, sync.rates);
        return { leases: { ...record.leases }, rates: { ...record.rates }, pausedUntil: 0 };
      },
      async release() {},
    };
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    const http = { pacer, holdForSite: () => undefined } as unknown as Parameters<SiteShare['join']>[0];
    const share = new SiteShare(store, 'https://site', 'me', () => now);
    await share.join(http);
    share.stop();
    expect(pacer.laneState('GET /x').rate).toBeCloseTo(40 * 0.95 * 0.5);
    pacer.onThrottle(link, { reason: 'jira-burst-based', retryAfterMs: 1000, limit: 100 });
    now = SITE_LEASE_MS; // the other run's lease lapsed
    await share.sync();
    await share.sync();
    expect(writes).toEqual([
      { rates: {}, lapsed: [] },
      { rates: { [link.endpoint]: 100 }, lapsed: ['other'] },
      { rates: {}, lapsed: [] },
    ]);
    expect(pacer.laneState('GET /x').rate).toBeCloseTo(40 * 0.95);
    expect(pacer.laneState(link.endpoint).rate).toBeCloseTo(100 * 0.95);
  });
});
