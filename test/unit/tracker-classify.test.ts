/**
 * One decision per tracker response: what each answer a tracker can give (or each way an attempt can fail) means
 * for the request, decided by `classify` alone, before the HTTP layer's one loop acts on it.
 */
import { describe, expect, it } from 'vitest';
import { OutboundRefused } from '../../functions/outbound/fetch.ts';
import { type CallFacts, classify } from '../../functions/trackers/classify.ts';
import { TrackerHttpError, TrackerUnreachableError } from '../../functions/trackers/http.ts';

const read: CallFacts = {
  tracker: 'target',
  host: 'acme.atlassian.net',
  method: 'GET',
  path: '/rest/api/3/issue/MIG-1',
  key: { endpoint: 'GET /rest/api/3/issue/{}', issue: 'MIG-1', write: false },
  mayRefreshToken: false,
  throttles: 0,
};
const comment: CallFacts = {
  ...read,
  method: 'POST',
  path: '/rest/api/3/issue/MIG-1/comment',
  key: { endpoint: 'POST /rest/api/3/issue/{}/comment', issue: 'MIG-1', write: true },
  notIdempotent: true,
};
const bulkCreate: CallFacts = {
  ...comment,
  path: '/rest/api/3/issue/bulk',
  key: { endpoint: 'POST /rest/api/3/issue/bulk', write: true },
};
const answer = (status: number, headers: Record<string, string> = {}) =>
  new Response(status === 204 || status === 304 ? null : '{}', { status, headers });
/** undici's socket failure, as fetch throws it. */
const dropped = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
  });
const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

describe('an answer the request takes', () => {
  it('is a 2xx, a 3xx when the caller does not follow redirects, or a status it accepts', () => {
    expect(classify(answer(200), read)).toEqual({ kind: 'success' });
    expect(classify(answer(204), comment)).toEqual({ kind: 'success' });
    expect(classify(answer(303, { location: '/media/1' }), { ...read, manualRedirect: true })).toEqual({
      kind: 'success',
    });
    expect(classify(answer(404), { ...read, accept: [404] })).toEqual({ kind: 'success' });
    // Azure DevOps slowing the client down is still an answer (the loop slows what follows).
    expect(classify(answer(200, { 'x-ratelimit-delay': '1.5' }), read)).toEqual({ kind: 'success' });
  });

  it('is refused otherwise: a 3xx followed nowhere, a 4xx not accepted', () => {
    expect(classify(answer(303, { location: '/media/1' }), read)).toEqual({ kind: 'refused' });
    expect(classify(answer(404), read)).toEqual({ kind: 'refused' });
    expect(classify(answer(400), comment)).toEqual({ kind: 'refused' });
  });
});

describe('a 401', () => {
  it('under an OAuth token source asks it for a fresher token once, then stands', () => {
    expect(classify(answer(401), { ...read, mayRefreshToken: true })).toEqual({ kind: 'refresh-token' });
    expect(classify(answer(401), read)).toEqual({ kind: 'refused' });
    expect(classify(answer(401), { ...read, mayRefreshToken: true, accept: [401] })).toEqual({
      kind: 'success',
    });
  });
});

describe('a 429 is throttled, in the scope it names, for as long as the tracker asks', () => {
  /** A 429 as Jira sends it. */
  const jira429 = (reason: string, seconds: number, limit: number) =>
    answer(429, {
      'retry-after': String(seconds),
      'ratelimit-reason': reason,
      'x-ratelimit-limit': String(limit),
    });

  it("Jira's burst limit: the endpoint, with its rate", () => {
    expect(classify(jira429('jira-burst-based', 2, 100), read)).toEqual({
      kind: 'throttled',
      scope: 'endpoint',
      retryAfterMs: 2000,
      reason: 'jira-burst-based',
      limit: 100,
    });
  });

  it("Jira's per-issue limit: the issue written to, or the endpoint of a write to no one issue", () => {
    expect(classify(jira429('jira-per-issue-on-write', 1, 20), comment)).toEqual({
      kind: 'throttled',
      scope: 'issue',
      retryAfterMs: 1000,
      reason: 'jira-per-issue-on-write',
      limit: 20,
    });
    expect(classify(jira429('jira-per-issue-on-write', 1, 20), bulkCreate)).toMatchObject({
      kind: 'throttled',
      scope: 'endpoint',
    });
  });

  it("Jira's hourly quota: the whole client, until its reset", () => {
    expect(classify(jira429('jira-quota-global-based', 1800, 65_000), comment)).toEqual({
      kind: 'throttled',
      scope: 'client',
      retryAfterMs: 1_800_000,
      reason: 'jira-quota-global-based',
      limit: 65_000,
    });
  });

  it("Azure DevOps' TF400733 block (Retry-After) and its X-RateLimit-Delay: the whole client", () => {
    const blocked = answer(429, {
      'retry-after': '30',
      'x-ratelimit-resource': 'WorkItemTrackingResource',
      'x-ratelimit-limit': '200',
    });
    expect(classify(blocked, read)).toEqual({
      kind: 'throttled',
      scope: 'client',
      retryAfterMs: 30_000,
      reason: null,
      limit: 200,
    });
    expect(classify(answer(429, { 'x-ratelimit-delay': '2.5' }), read)).toEqual({
      kind: 'throttled',
      scope: 'client',
      retryAfterMs: 2500,
      reason: null,
    });
  });

  it('without a hint: 1 s, doubling with each 429 of the request, at most 30 s; a write too', () => {
    const waits = [0, 1, 3, 5, 9].map(
      (throttles) =>
        (classify(answer(429), { ...comment, throttles }) as { retryAfterMs: number }).retryAfterMs,
    );
    expect(waits).toEqual([1000, 2000, 8000, 30_000, 30_000]);
  });
});

describe('a 5xx', () => {
  it('is retried for a request that may be sent twice, after the hint if any, ending in its status', () => {
    const decision = classify(answer(503, { 'retry-after': '3' }), read);
    expect(decision).toMatchObject({ kind: 'retry', retryAfterMs: 3000 });
    const { error } = decision as { error: TrackerHttpError };
    expect(error).toBeInstanceOf(TrackerHttpError);
    expect(error).toMatchObject({ status: 503, method: 'GET', path: '/rest/api/3/issue/MIG-1' });
    expect(classify(answer(500), read)).toMatchObject({ kind: 'retry', retryAfterMs: undefined });
  });

  it('stands for a write that must not happen twice (it may have happened)', () => {
    expect(classify(answer(503), comment)).toEqual({ kind: 'refused' });
    expect(classify(answer(502), bulkCreate)).toEqual({ kind: 'refused' });
  });
});

describe('an attempt that threw', () => {
  it('is retried when the network failed or timed out, ending as unreachable', () => {
    const decision = classify(dropped(), read);
    expect(decision).toMatchObject({ kind: 'retry', retryAfterMs: undefined });
    const { error } = decision as { error: TrackerUnreachableError };
    expect(error).toBeInstanceOf(TrackerUnreachableError);
    expect(error).toMatchObject({ host: 'acme.atlassian.net', reason: 'UND_ERR_SOCKET' });
    expect(classify(timedOut(), read)).toMatchObject({ kind: 'retry', error: { reason: 'timed out' } });
  });

  it('fails at once as unreachable for a write that must not happen twice', () => {
    for (const err of [dropped(), timedOut()]) {
      const decision = classify(err, comment);
      expect(decision.kind).toBe('fail');
      expect((decision as { error: unknown }).error).toBeInstanceOf(TrackerUnreachableError);
    }
  });

  it('fails with what it threw otherwise (the outbound policy refusing, a token refresh refused)', () => {
    const refused = new OutboundRefused('loopback');
    expect(classify(refused, read)).toEqual({ kind: 'fail', error: refused });
    const other = new Error('Token exchange failed');
    expect(classify(other, comment)).toEqual({ kind: 'fail', error: other });
  });
});
