/**
 * Two runs working one Jira site share its limits through the site's record in DynamoDB: the first run learns an
 * endpoint's rate from the site's burst 429s and writes it; the second, joining the site, paces that endpoint at
 * its share from its first request and meets no 429 of its own. Real HTTP to the Jira sandbox (its burst bucket
 * per endpoint is the site's), DynamoDB Local, one TrackerHttp and SiteShare per run as two Lambda containers have.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, ThrottleWaitDeferred, TrackerHttp } from '../../functions/trackers/http.ts';
import { leaseIdOf, SiteShare, siteIdOf } from '../../functions/trackers/site-share.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';
import { freshTable, type TestTable } from '../support/table.ts';

const config = sandboxConfigFromEnv({});
const MYSELF = 'GET /rest/api/3/myself';
/** The site's bucket for the endpoint: 10 a second, a second's worth held. */
const RATE = 10;
let jira = '';
let table: TestTable;

useJiraSandbox(config, (url) => {
  jira = url;
});
beforeAll(async () => {
  table = await freshTable();
});

const runClient = (waitBudgetMs?: number) =>
  new TrackerHttp({
    tracker: 'target',
    baseUrl: jira,
    authorization: basicAuth(config.jira.email, config.jira.apiToken),
    ...(waitBudgetMs ? { waitBudgetMs: () => waitBudgetMs } : {}),
  });
const joinSite = async (client: TrackerHttp, runId: string, on: TestTable = table) => {
  const site = new SiteShare(on.store.siteLimits, siteIdOf(jira), leaseIdOf('tenant-1', runId));
  await site.join(client);
  return site;
};
const myselfLog = async () =>
  ((await http(jira, 'GET', '/_sandbox/requests')).body as { path: string; status: number }[]).filter(
    (r) => r.path === '/rest/api/3/myself',
  );
const statuses = (log: { status: number }[]) => {
  const counts: Record<number, number> = {};
  for (const r of log) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

describe('runs of one Jira site', () => {
  it("start the second run's pacer from the rate the first learnt, at its share, without a burst 429 of its own", async () => {
    const limits = await http(jira, 'PUT', '/_sandbox/limits', {
      body: { limits: { burst: { enabled: true, overrides: { [MYSELF]: RATE }, burstSeconds: 1 } } },
    });
    expect(limits.status).toBe(200);

    // Run A sends 30 at once into a bucket of 10: the site refuses the rest, and A learns the endpoint's rate.
    const a = runClient();
    const siteA = await joinSite(a, 'run-a');
    const answersA = await Promise.all(
      Array.from({ length: 30 }, () => a.request('GET', '/rest/api/3/myself')),
    );
    expect(answersA.map((r) => r.status)).toEqual(Array(30).fill(200));
    const refusedA = statuses(await myselfLog())[429] ?? 0;
    expect(refusedA).toBeGreaterThan(0);
    expect(a.pacer.statedRates()).toEqual({ [MYSELF]: RATE });
    await siteA.sync(); // A's next sync writes the rate to the site's record

    // Run B joins while A still holds its lease: the record's rate at half, from its first request.
    const b = runClient();
    const siteB = await joinSite(b, 'run-b');
    expect(b.pacer.laneState(MYSELF).rate).toBeCloseTo(RATE * 0.95 * 0.5);
    const before = (await myselfLog()).length;
    const answersB = await Promise.all(
      Array.from({ length: 20 }, () => b.request('GET', '/rest/api/3/myself')),
    );
    const logB = (await myselfLog()).slice(before);
    expect({
      answers: answersB.map((r) => r.status),
      site: statuses(logB),
      throttled: b.stats.throttled,
    }).toEqual({
      answers: Array(20).fill(200),
      site: { 200: 20 },
      throttled: 0,
    });
    // A's own pacer takes its half at its next sync.
    await siteA.sync();
    expect(a.pacer.laneState(MYSELF).rate).toBeCloseTo(RATE * 0.95 * 0.5);
    siteA.stop();
    siteB.stop();
  });

  it("hold a run for the site's hourly quota another run met: the wait is handed back and nothing is sent", async () => {
    const own = await freshTable();
    const faults = await http(jira, 'PUT', '/_sandbox/faults', {
      body: { throttle: { count: 1, retryAfterSeconds: 30, reason: 'jira-quota-global-based' } },
    });
    expect(faults.status).toBe(200);
    // Run A meets the quota; its invocation has a second left, so it hands the wait back.
    const a = runClient(1000);
    const siteA = await joinSite(a, 'run-a', own);
    await expect(a.request('GET', '/rest/api/3/myself')).rejects.toBeInstanceOf(ThrottleWaitDeferred);
    await siteA.sync();
    // Run B, joining the site, hands the same wait back before sending anything.
    const before = (await myselfLog()).length;
    const b = runClient(1000);
    const siteB = await joinSite(b, 'run-b', own);
    const handedBack = await b.request('GET', '/rest/api/3/myself').catch((err: unknown) => err);
    expect(handedBack).toBeInstanceOf(ThrottleWaitDeferred);
    const { notice } = handedBack as ThrottleWaitDeferred;
    expect({
      sent: (await myselfLog()).length - before,
      reason: notice.reason,
      until: notice.until.getTime(),
    }).toEqual({ sent: 0, reason: 'jira-quota-global-based', until: a.pacer.clientPause });
    siteA.stop();
    siteB.stop();
  });

  it("keep the later of two quota pauses written at once: a run's earlier reset never shortens another's pause", async () => {
    const own = await freshTable();
    const siteId = siteIdOf(jira);
    const now = Date.now();
    const sync = (run: string, pausedUntil: number) =>
      own.store.siteLimits.sync(siteId, {
        lease: { id: run, expiresAt: now + 60_000 },
        rates: {},
        pausedUntil,
        lapsed: [],
        now,
      });
    // Both runs read the record before either wrote (each saw no pause): A met an hour's reset, B half of it.
    await sync('run-a', now + 3_600_000);
    const after = await sync('run-b', now + 1_800_000);
    expect(after.pausedUntil).toBe(now + 3_600_000);
    expect(Object.keys(after.leases).sort()).toEqual(['run-a', 'run-b']);
    // A later pause still moves it on.
    expect((await sync('run-b', now + 7_200_000)).pausedUntil).toBe(now + 7_200_000);
  });
});
