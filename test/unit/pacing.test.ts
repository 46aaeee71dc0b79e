/**
 * The HTTP layer's pacing on a clock the test moves: a 429 pauses only the scope it names (issue, endpoint, or the
 * whole client), a burst 429 teaches the endpoint its rate, writes to one issue stay under Jira's per-issue windows,
 * and an endpoint's in-flight limit grows while requests queue for it.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  endpointOf,
  INITIAL_IN_FLIGHT,
  issueOf,
  JIRA_PER_ISSUE_WINDOWS,
  type PacingClock,
  REAL_CLOCK,
  type RequestKey,
  TrackerPacer,
} from '../../functions/trackers/pacing.ts';

function fakeClock(): PacingClock & { slept: number[]; at: number } {
  const clock = {
    at: 1_000_000,
    slept: [] as number[],
    now: () => clock.at,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.at += ms;
    },
  };
  return clock;
}
const comment = (issue: string): RequestKey => ({
  endpoint: 'POST /rest/api/3/issue/{}/comment',
  issue,
  write: true,
});
const read: RequestKey = { endpoint: 'GET /rest/api/3/issue/{}', issue: 'MIG-1', write: false };

describe('request keys', () => {
  it('names an endpoint by method and path template, and the issue a path is about', () => {
    expect(endpointOf('post', '/rest/api/3/issue/MIG-12/comment')).toBe('POST /rest/api/3/issue/{}/comment');
    expect(endpointOf('GET', '/org/Contoso/_apis/wit/workItems/123/comments')).toBe(
      'GET /org/Contoso/_apis/wit/workItems/{}/comments',
    );
    expect(issueOf('/rest/api/3/issue/mig-12/transitions')).toBe('MIG-12');
    expect(issueOf('/rest/api/3/issue/bulk')).toBeUndefined();
    expect(issueOf('/rest/api/3/issueLink')).toBeUndefined();
  });
});

describe('a 429 pauses only where it applies', () => {
  it('per-issue: that issue waits the Retry-After, another issue and reads of it do not', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock, perIssueWindows: JIRA_PER_ISSUE_WINDOWS });
    expect(
      pacer.onThrottle(comment('MIG-1'), { reason: 'jira-per-issue-on-write', retryAfterMs: 2000 }),
    ).toBe('issue');
    (await pacer.acquire(comment('MIG-2')))();
    (await pacer.acquire(read))();
    expect(clock.slept).toEqual([]);
    (await pacer.acquire(comment('MIG-1')))();
    expect(clock.slept).toEqual([2000]);
  });

  it('burst: that endpoint is paced at the rate it was told from then on, not stopped; others are not', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    expect(pacer.onThrottle(read, { reason: 'jira-burst-based', retryAfterMs: 1000, limit: 10 })).toBe(
      'endpoint',
    );
    (await pacer.acquire(comment('MIG-1')))();
    expect(clock.slept).toEqual([]);
    const start = clock.at;
    for (let i = 0; i < 20; i++) (await pacer.acquire(read))();
    // No pause of the whole lane for the Retry-After (only the refused request waits it, in the HTTP layer):
    // from an empty bucket, 20 requests at 9.5/s (a little under the 10/s it was told).
    expect(clock.slept.every((ms) => ms < 1000)).toBe(true);
    expect(clock.at - start).toBeGreaterThanOrEqual(20 * (1000 / 9.5) - 20);
    expect(clock.at - start).toBeLessThan(21 * (1000 / 9.5));
    expect(pacer.laneState(read.endpoint).rate).toBeCloseTo(9.5);
  });

  it("burst: the 429s of requests already in flight are one signal: the lane's in-flight limit is cut once", () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    const link: RequestKey = { endpoint: 'POST /rest/api/3/issueLink', write: true };
    const burst = { reason: 'jira-burst-based', retryAfterMs: 1000, limit: 100 };
    pacer.onThrottle(link, burst);
    expect(pacer.laneState(link.endpoint).limit).toBe(24);
    // Refusals of requests sent before the first one came back, within its Retry-After: no further cut.
    clock.at += 300;
    pacer.onThrottle(link, burst);
    clock.at += 400;
    pacer.onThrottle(link, burst);
    expect(pacer.laneState(link.endpoint).limit).toBe(24);
    // A refusal after that window is a new signal.
    clock.at += 400;
    pacer.onThrottle(link, burst);
    expect(pacer.laneState(link.endpoint).limit).toBe(18);
  });

  it('burst without a rate: that endpoint waits out the Retry-After; others do not', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    expect(pacer.onThrottle(read, { reason: 'jira-burst-based', retryAfterMs: 1000 })).toBe('endpoint');
    (await pacer.acquire(comment('MIG-1')))();
    expect(clock.slept).toEqual([]);
    (await pacer.acquire(read))();
    expect(clock.slept).toEqual([1000]);
  });

  it('quota or a 429 naming no limit: the whole client waits', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock });
    expect(pacer.onThrottle(read, { reason: 'jira-quota-global-based', retryAfterMs: 600_000 })).toBe(
      'client',
    );
    (await pacer.acquire(comment('MIG-9')))();
    expect(clock.slept).toEqual([600_000]);
    expect(pacer.onThrottle(read, { retryAfterMs: 3000 })).toBe('client');
  });
});

/** A pacer that has met Jira's per-issue limit once (on another issue): from then on it holds every issue to it. */
function perIssueLimited(clock: PacingClock): TrackerPacer {
  const pacer = new TrackerPacer({ clock, perIssueWindows: JIRA_PER_ISSUE_WINDOWS });
  pacer.onThrottle(comment('MIG-100'), { reason: 'jira-per-issue-on-write', retryAfterMs: 0 });
  return pacer;
}

describe('pacing writes to one issue', () => {
  it('does not pace a site that never answered a per-issue 429', async () => {
    const clock = fakeClock();
    const pacer = new TrackerPacer({ clock, perIssueWindows: JIRA_PER_ISSUE_WINDOWS });
    for (let i = 0; i < 150; i++) (await pacer.acquire(comment('MIG-1')))();
    expect(clock.slept).toEqual([]);
  });

  it('keeps one issue under 20 writes in 2 s while other issues go on', async () => {
    const clock = fakeClock();
    const pacer = perIssueLimited(clock);
    for (let i = 0; i < 20; i++) (await pacer.acquire(comment('MIG-1')))();
    (await pacer.acquire(comment('MIG-2')))();
    expect(clock.slept).toEqual([]);
    (await pacer.acquire(comment('MIG-1')))();
    // The window, held 5% longer plus 50 ms than Jira's: requests are timed at the client.
    expect(clock.slept).toEqual([2150]);
  });

  it('keeps one issue under 100 writes in 30 s', async () => {
    const clock = fakeClock();
    const pacer = perIssueLimited(clock);
    const start = clock.at;
    for (let i = 0; i < 101; i++) (await pacer.acquire(comment('MIG-1')))();
    expect(clock.at - start).toBeGreaterThanOrEqual(31_550);
  });
});

describe('in-flight requests per endpoint', () => {
  it('grows while requests queue for the endpoint, never running more than its limit', async () => {
    const pacer = new TrackerPacer({ initialConcurrency: 2, maxConcurrency: 5 });
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        const release = await pacer.acquire(read);
        running++;
        peak = Math.max(peak, running);
        expect(running).toBeLessThanOrEqual(pacer.laneState(read.endpoint).limit);
        await new Promise((r) => setImmediate(r));
        running--;
        pacer.onSuccess(read);
        release();
      }),
    );
    expect(pacer.laneState(read.endpoint).limit).toBe(5);
    expect(peak).toBe(5);
    expect(pacer.laneState(read.endpoint).active).toBe(0);
  });

  it('starts a lane at about what the endpoint takes: 32 for GET and POST, 16 for PUT, DELETE and PATCH', () => {
    const pacer = new TrackerPacer();
    expect(pacer.laneState('GET /rest/api/3/issue/{}').limit).toBe(INITIAL_IN_FLIGHT.default);
    expect(pacer.laneState('POST /rest/api/3/issueLink').limit).toBe(32);
    expect(pacer.laneState('PUT /rest/api/3/issue/{}').limit).toBe(INITIAL_IN_FLIGHT.slowerMethods);
    expect(pacer.laneState('DELETE /rest/api/3/attachment/{}').limit).toBe(16);
    // Never above the ceiling; a given start wins.
    expect(new TrackerPacer({ maxConcurrency: 5 }).laneState('GET /x').limit).toBe(5);
    expect(new TrackerPacer({ initialConcurrency: 3 }).laneState('PUT /x').limit).toBe(3);
  });
});

describe('a request on an ordered chain (urgent) goes ahead of its lane', () => {
  const thread: RequestKey = { ...comment('MIG-9'), urgent: true };

  it('takes the next free slot before the requests already queued', async () => {
    const pacer = new TrackerPacer({ initialConcurrency: 1, maxConcurrency: 1 });
    const order: string[] = [];
    const held = await pacer.acquire(comment('MIG-1'));
    const take = (name: string, key: RequestKey) =>
      pacer.acquire(key).then((release) => {
        order.push(name);
        release();
      });
    const all = [take('a', comment('MIG-2')), take('b', comment('MIG-3')), take('thread', thread)];
    held();
    await Promise.all(all);
    expect(order).toEqual(['thread', 'a', 'b']);
  });

  it('in a paced lane, takes the next token before the requests already waiting on the pace', async () => {
    vi.useFakeTimers();
    try {
      const pacer = new TrackerPacer({ clock: REAL_CLOCK });
      // Told 10/s: paced at 9.5/s from an empty bucket, about 105 ms a request.
      pacer.onThrottle(read, { reason: 'jira-burst-based', retryAfterMs: 1000, limit: 10 });
      const order: string[] = [];
      const take = (name: string, key: RequestKey) =>
        pacer.acquire(key).then((release) => {
          order.push(name);
          release();
        });
      const ordinary = Array.from({ length: 6 }, (_, i) => take(`r${i}`, read));
      await vi.advanceTimersByTimeAsync(150);
      const urgent = take('thread', { ...read, urgent: true });
      await vi.advanceTimersByTimeAsync(2_000);
      await Promise.all([...ordinary, urgent]);
      // One ordinary request had its token before the urgent one arrived; the urgent one takes the next.
      expect(order.indexOf('thread')).toBe(1);
      expect(order).toHaveLength(7);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an ordinary lane with no urgent request keeps its order', async () => {
    const pacer = new TrackerPacer({ initialConcurrency: 1, maxConcurrency: 1 });
    const order: string[] = [];
    const held = await pacer.acquire(read);
    const all = ['a', 'b', 'c'].map((name) =>
      pacer.acquire(read).then((release) => {
        order.push(name);
        release();
      }),
    );
    held();
    await Promise.all(all);
    expect(order).toEqual(['a', 'b', 'c']);
  });
});
