/**
 * The sandboxes' rate limits as pure logic on a clock the test moves: Jira's burst buckets per endpoint, its
 * per-issue write windows and its OAuth points quota; Azure DevOps' throughput budget (delayed, then blocked);
 * the long-tailed latency draw.
 */
import { describe, expect, it } from 'vitest';
import { ADO_LIMITS, AdoRateLimits } from '../../local/sandbox/common/limits/ado.ts';
import {
  JIRA_LIMITS,
  JiraRateLimits,
  type JiraRequestFacts,
} from '../../local/sandbox/common/limits/jira.ts';
import { drawLatencyMs } from '../../local/sandbox/common/limits/latency.ts';
import { seededRandom } from '../../local/sandbox/common/random.ts';

const T0 = Date.parse('2026-11-26T13:59:58.000Z');
const read = (template: string, oauth = false): JiraRequestFacts => ({
  method: 'GET',
  template,
  issues: [],
  oauth,
  write: false,
});
const comment = (issue: string): JiraRequestFacts => ({
  method: 'POST',
  template: '/rest/api/3/issue/{issueIdOrKey}/comment',
  issues: [issue],
  oauth: false,
  write: true,
});
const only = (part: 'burst' | 'perIssue' | 'quota') => ({
  burst: { ...JIRA_LIMITS.burst, enabled: part === 'burst' },
  perIssue: { ...JIRA_LIMITS.perIssue, enabled: part === 'perIssue' },
  quota: { ...JIRA_LIMITS.quota, enabled: part === 'quota' },
});

describe('Jira burst limit', () => {
  it('gives each endpoint its own bucket at its documented rate, and refuses with all the headers', () => {
    const limits = new JiraRateLimits(only('burst'));
    // GET /issue/{key} is 150/s, the default GET 100/s; a full bucket is one second's worth.
    for (let i = 0; i < 150; i++)
      expect(limits.admit(read('/rest/api/3/issue/{issueIdOrKey}'), T0)).toBeUndefined();
    const refused = limits.admit(read('/rest/api/3/issue/{issueIdOrKey}'), T0);
    expect(refused).toEqual({
      reason: 'jira-burst-based',
      retryAfterMs: 1000,
      headers: {
        'Retry-After': '1',
        'X-RateLimit-Limit': '150',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '2026-11-26T13:59:59Z',
        'RateLimit-Reason': 'jira-burst-based',
      },
    });
    // Another endpoint is not slowed by it.
    for (let i = 0; i < 100; i++) expect(limits.admit(read('/rest/api/3/search/jql'), T0)).toBeUndefined();
    expect(limits.admit(read('/rest/api/3/search/jql'), T0)?.headers['X-RateLimit-Limit']).toBe('100');
    // Tokens come back at the rate: 10 ms later, 1.5 of them.
    expect(limits.admit(read('/rest/api/3/issue/{issueIdOrKey}'), T0 + 10)).toBeUndefined();
    expect(limits.admit(read('/rest/api/3/issue/{issueIdOrKey}'), T0 + 10)?.reason).toBe('jira-burst-based');
  });

  it('holds PUT and DELETE to 50/s and applies a setting override', () => {
    const limits = new JiraRateLimits(only('burst'));
    const put = { ...comment('MIG-1'), method: 'PUT', template: '/rest/api/3/issue/{issueIdOrKey}' };
    for (let i = 0; i < 50; i++) expect(limits.admit(put, T0)).toBeUndefined();
    expect(limits.admit(put, T0)?.headers['X-RateLimit-Limit']).toBe('50');
    limits.settings = { ...limits.settings, burst: { ...limits.settings.burst, overrides: { 'GET /x': 2 } } };
    expect(limits.admit(read('/x'), T0)).toBeUndefined();
    expect(limits.admit(read('/x'), T0)).toBeUndefined();
    expect(limits.admit(read('/x'), T0)?.headers['X-RateLimit-Limit']).toBe('2');
  });
});

describe('Jira per-issue write limit', () => {
  it('allows 20 writes to one issue in 2 s, then refuses that issue only', () => {
    const limits = new JiraRateLimits(only('perIssue'));
    for (let i = 0; i < 20; i++) expect(limits.admit(comment('MIG-1'), T0 + i)).toBeUndefined();
    const refused = limits.admit(comment('MIG-1'), T0 + 20);
    expect(refused?.reason).toBe('jira-per-issue-on-write');
    expect(refused?.headers).toMatchObject({
      'Retry-After': '2',
      'X-RateLimit-Limit': '20',
      'RateLimit-Reason': 'jira-per-issue-on-write',
    });
    expect(limits.admit(comment('MIG-2'), T0 + 20)).toBeUndefined();
    // Reads of the busy issue are not writes.
    expect(limits.admit(read('/rest/api/3/issue/{issueIdOrKey}'), T0 + 20)).toBeUndefined();
    // The first write leaves the 2 s window at T0 + 2000.
    expect(limits.admit(comment('MIG-1'), T0 + 1999)?.reason).toBe('jira-per-issue-on-write');
    expect(limits.admit(comment('MIG-1'), T0 + 2000)).toBeUndefined();
  });

  it('allows 100 writes to one issue in 30 s', () => {
    const limits = new JiraRateLimits(only('perIssue'));
    // 10 writes every 2 s stay under the 2 s window; the 101st in 30 s is refused.
    for (let i = 0; i < 100; i++)
      expect(limits.admit(comment('MIG-1'), T0 + Math.floor(i / 10) * 2000)).toBeUndefined();
    const refused = limits.admit(comment('MIG-1'), T0 + 20_000);
    expect(refused?.headers['X-RateLimit-Limit']).toBe('100');
    expect(refused?.retryAfterMs).toBe(10_000); // the first ten leave the window at T0 + 30 s
  });
});

describe('Jira points quota', () => {
  it('charges OAuth traffic only and refuses it until the top of the UTC hour, with Beta-RateLimit headers', () => {
    const limits = new JiraRateLimits({
      ...only('quota'),
      quota: { enabled: true, points: 5, windowSeconds: 3600, apiTokenExempt: true },
    });
    const at = Date.parse('2026-11-26T13:40:00.000Z');
    expect(limits.admit(read('/rest/api/3/myself', true), at)).toBeUndefined();
    limits.charge(true, 2, at); // a read of one object
    limits.charge(false, 1000, at); // API-token traffic is exempt
    expect(limits.quotaHeaders(at)).toEqual({
      'Beta-RateLimit-Policy': '"global-app-quota";q=5;w=3600',
      'Beta-RateLimit': '"global-app-quota";r=3;t=1200',
    });
    limits.charge(true, 3, at);
    const refused = limits.admit(read('/rest/api/3/myself', true), at);
    expect(refused).toEqual({
      reason: 'jira-quota-global-based',
      retryAfterMs: 1_200_000,
      headers: {
        'Retry-After': '1200',
        'X-RateLimit-Limit': '5',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '2026-11-26T14:00:00Z',
        'RateLimit-Reason': 'jira-quota-global-based',
        'X-Beta-RateLimit-Reason': 'jira-quota-global-based',
        'Beta-RateLimit-Policy': '"global-app-quota";q=5;w=3600',
        'Beta-RateLimit': '"global-app-quota";r=0;t=1200',
      },
    });
    expect(limits.admit(read('/rest/api/3/myself', false), at)).toBeUndefined();
    expect(
      limits.admit(read('/rest/api/3/myself', true), Date.parse('2026-11-26T14:00:00.000Z')),
    ).toBeUndefined();
  });
});

describe('Azure DevOps throughput limit', () => {
  it('delays an identity past its budget, then blocks it with Retry-After; others go on', () => {
    const limits = new AdoRateLimits({ ...ADO_LIMITS, budget: 10, blockAtFactor: 2, windowSeconds: 300 });
    for (let i = 0; i < 10; i++)
      expect(limits.admit('alice', 1, T0)).toEqual({ kind: 'go', delayMs: 0, headers: {} });
    const delayed = limits.admit('alice', 1, T0 + 1000);
    expect(delayed).toEqual({
      kind: 'go',
      delayMs: 1,
      headers: {
        'X-RateLimit-Resource': 'WorkItemTrackingResource',
        'X-RateLimit-Delay': '0.001',
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '0',
        // The first unit leaves the 5-minute window at T0 + 300 s.
        'X-RateLimit-Reset': String(Math.ceil((T0 + 300_000) / 1000)),
      },
    });
    for (let i = 0; i < 8; i++) limits.admit('alice', 1, T0 + 1000);
    const later = limits.admit('alice', 1, T0 + 1000);
    expect(later.kind === 'go' && later.delayMs).toBe(27_000); // 9 of the 10 units between budget and block
    const blocked = limits.admit('alice', 1, T0 + 2000);
    expect(blocked).toEqual({
      kind: 'blocked',
      retryAfterMs: 298_000,
      headers: {
        'Retry-After': '298',
        'X-RateLimit-Resource': 'WorkItemTrackingResource',
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(Math.ceil((T0 + 300_000) / 1000)),
      },
    });
    expect(limits.admit('bob', 1, T0 + 2000)).toEqual({ kind: 'go', delayMs: 0, headers: {} });
    expect(limits.admit('alice', 1, T0 + 300_000).kind).toBe('go');
  });
});

describe('latency', () => {
  it('draws a long tail around the median and p95 it is given', () => {
    const random = seededRandom(7);
    const draws = Array.from({ length: 4000 }, () =>
      drawLatencyMs({ medianMs: 300, p95Ms: 900 }, random),
    ).sort((a, b) => a - b);
    expect(draws[2000]).toBeGreaterThan(270);
    expect(draws[2000]).toBeLessThan(330);
    expect(draws[3800]).toBeGreaterThan(780);
    expect(draws[3800]).toBeLessThan(1020);
    expect(drawLatencyMs({ medianMs: 0, p95Ms: 0 }, random)).toBe(0);
  });
});
