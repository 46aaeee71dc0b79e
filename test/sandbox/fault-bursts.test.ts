/**
 * The sandboxes' counted fault bursts (`PUT /_sandbox/faults`), through real HTTP: 429s standing for each of
 * Jira's three limits and Azure DevOps' TF400733, bursts of 5xx, answers held past the client's timeout (the write
 * landed), and connections reset before or after the request was worked; each in the request log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
let jira = '';
let ado: AdoTestSandbox;

useJiraSandbox(config, (url) => {
  jira = url;
});
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 10 });
});
afterAll(() => ado?.close());

const call = (method: string, path: string, body?: unknown) =>
  http(jira, method, path, { body, headers: { Authorization: AUTH } });
const faults = async (base: string, body: unknown) => {
  const res = await http(base, 'PUT', '/_sandbox/faults', { body });
  expect(res.status).toBe(200);
  return res.body;
};
const requestLog = async (base: string) =>
  (await http(base, 'GET', '/_sandbox/requests')).body as {
    method: string;
    path: string;
    status: number;
    fault?: string;
    reason?: string;
  }[];
const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

async function newIssue(summary: string): Promise<string> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}
const commentsOf = async (key: string) =>
  ((await call('GET', `/rest/api/3/issue/${key}/comment`)).body.comments as { body: unknown }[]).map((c) =>
    JSON.stringify(c.body),
  );

/** Posts a comment with fetch under a timeout, as a client does: what it got, or the error it ended with. */
async function postComment(key: string, text: string, timeoutMs = 5_000) {
  try {
    const res = await fetch(`${jira}/rest/api/3/issue/${key}/comment`, {
      method: 'POST',
      headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ body: doc(text) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status };
  } catch (err) {
    return { error: (err as Error).name };
  }
}

describe("Jira's 429s by limit", () => {
  it('answers the next N requests 429 with the headers of the limit each reason stands for, then serves again', async () => {
    await faults(jira, { throttle: { count: 1, retryAfterSeconds: 4, reason: 'jira-per-issue-on-write' } });
    const perIssue = await call('GET', `/rest/api/3/project/${KEY}`);
    expect(perIssue.status).toBe(429);
    expect(perIssue.headers).toMatchObject({
      'retry-after': '4',
      'ratelimit-reason': 'jira-per-issue-on-write',
      'x-ratelimit-limit': '20',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(perIssue.body).toEqual({ errorMessages: ['Rate limit exceeded.'], errors: {} });
    expect((await call('GET', `/rest/api/3/project/${KEY}`)).status).toBe(200);

    await faults(jira, { throttle: { count: 2, retryAfterSeconds: 30, reason: 'jira-quota-global-based' } });
    for (let i = 0; i < 2; i++) {
      const quota = await call('GET', `/rest/api/3/project/${KEY}`);
      expect(quota.status).toBe(429);
      expect(quota.headers).toMatchObject({
        'retry-after': '30',
        'ratelimit-reason': 'jira-quota-global-based',
        'x-beta-ratelimit-reason': 'jira-quota-global-based',
        'beta-ratelimit-policy': '"global-app-quota";q=65000;w=3600',
        'beta-ratelimit': '"global-app-quota";r=0;t=30',
        'x-ratelimit-limit': '65000',
      });
    }
    expect((await call('GET', `/rest/api/3/project/${KEY}`)).status).toBe(200);

    // No reason: the burst limit, Jira's most common 429.
    await faults(jira, { throttle: { count: 1, retryAfterSeconds: 1 } });
    const burst = await call('GET', `/rest/api/3/project/${KEY}`);
    expect(burst.headers).toMatchObject({
      'ratelimit-reason': 'jira-burst-based',
      'x-ratelimit-limit': '100',
    });
    expect(burst.headers['x-beta-ratelimit-reason']).toBeUndefined();

    const log = (await requestLog(jira)).filter((e) => e.fault === 'throttle');
    expect(log.map((e) => e.reason)).toEqual([
      'jira-per-issue-on-write',
      'jira-quota-global-based',
      'jira-quota-global-based',
      'jira-burst-based',
    ]);
  });

  it('refuses a reason Jira does not have, naming the ones it has', async () => {
    const res = await http(jira, 'PUT', '/_sandbox/faults', {
      body: { throttle: { count: 1, retryAfterSeconds: 1, reason: 'TF400733' } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: [
        'throttle.reason: one of jira-burst-based, jira-per-issue-on-write, jira-quota-global-based (got TF400733)',
      ],
    });
    expect((await http(jira, 'GET', '/_sandbox/faults')).body.throttle).toBeNull();
  });
});

describe('bursts of 5xx', () => {
  it('answers the next N requests with the status, in the tracker error shape, before any work', async () => {
    const key = await newIssue('five hundreds');
    await faults(jira, { errors: { count: 2, status: 502 } });
    for (const text of ['first', 'second']) {
      const res = await call('POST', `/rest/api/3/issue/${key}/comment`, { body: doc(text) });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        errorMessages: ['Service unavailable. Please try again later.'],
        errors: {},
      });
    }
    expect(await commentsOf(key)).toEqual([]);
    expect((await call('POST', `/rest/api/3/issue/${key}/comment`, { body: doc('third') })).status).toBe(201);
    expect((await http(jira, 'GET', '/_sandbox/faults')).body.errors).toEqual({ count: 0, status: 502 });
    const injected = (await requestLog(jira)).filter((e) => e.fault === 'error');
    expect(injected.map((e) => [e.method, e.status])).toEqual([
      ['POST', 502],
      ['POST', 502],
    ]);
  });
});

describe('answers held past the client timeout', () => {
  it('works the request, so a write lands though its client gave up on it', async () => {
    const key = await newIssue('timed out');
    await faults(jira, { hangs: { count: 1, ms: 6_000 } });
    expect(await postComment(key, 'landed late', 2_000)).toEqual({ error: 'TimeoutError' });
    // Worked before the hold: the comment is there while the answer is still held back.
    expect(await commentsOf(key)).toEqual([JSON.stringify(doc('landed late'))]);
    // Once the hold is over, the abandoned request is in the log without an answer.
    await expect
      .poll(async () => (await requestLog(jira)).filter((e) => e.fault === 'hang'), { timeout: 10_000 })
      .toMatchObject([{ method: 'POST', path: `/rest/api/3/issue/${key}/comment`, status: 0 }]);
    expect(await postComment(key, 'next')).toEqual({ status: 201 });
  });

  it('answers after the hold a client that waits long enough', async () => {
    const key = await newIssue('slow');
    await faults(jira, { hangs: { count: 1, ms: 200 } });
    expect(await postComment(key, 'slow but answered')).toEqual({ status: 201 });
    const [entry] = (await requestLog(jira)).filter((e) => e.fault === 'hang');
    expect(entry).toMatchObject({ method: 'POST', status: 201 });
  });
});

describe('bursts for one endpoint', () => {
  it('counts only requests to the endpoint a burst names; the others pass untouched', async () => {
    const key = await newIssue('only comments');
    await faults(jira, {
      errors: { count: 1, status: 503, endpoint: 'POST /rest/api/3/issue/{issueIdOrKey}/comment' },
    });
    expect((await call('GET', `/rest/api/3/issue/${key}`)).status).toBe(200);
    expect((await call('PUT', `/rest/api/3/issue/${key}`, { fields: { summary: 'renamed' } })).status).toBe(
      204,
    );
    expect(await postComment(key, 'refused')).toEqual({ status: 503 });
    expect(await postComment(key, 'accepted')).toEqual({ status: 201 });
    const injected = (await requestLog(jira)).filter((e) => e.fault === 'error');
    expect(injected).toMatchObject([
      { method: 'POST', path: `/rest/api/3/issue/${key}/comment`, status: 503 },
    ]);
    expect(injected).toHaveLength(1);
  });
});

describe('connection resets', () => {
  it('resets the next N connections before the request is worked: nothing happened', async () => {
    const key = await newIssue('reset before');
    await faults(jira, { resets: { count: 1 } });
    expect(await postComment(key, 'never written')).toEqual({ error: 'TypeError' });
    expect(await commentsOf(key)).toEqual([]);
    expect((await http(jira, 'GET', '/_sandbox/faults')).body.resets).toEqual({ count: 0, landed: false });
    const [entry] = (await requestLog(jira)).filter((e) => e.fault === 'drop');
    expect(entry).toMatchObject({ method: 'POST', status: 0 });
    expect(entry?.reason).toBeUndefined();
  });

  it('resets them after the request is worked when `landed`: the write happened, the client saw a reset', async () => {
    const key = await newIssue('reset after');
    await faults(jira, { resets: { count: 1, landed: true } });
    expect(await postComment(key, 'written, unanswered')).toEqual({ error: 'TypeError' });
    expect(await commentsOf(key)).toEqual([JSON.stringify(doc('written, unanswered'))]);
    const [entry] = (await requestLog(jira)).filter((e) => e.fault === 'drop');
    expect(entry).toMatchObject({ method: 'POST', status: 0, reason: 'landed' });
    expect(await postComment(key, 'next')).toEqual({ status: 201 });
  });
});

describe("Azure DevOps' faults", () => {
  it("answers TF400733 for its only 429 reason and refuses Jira's", async () => {
    const refused = await http(ado.url, 'PUT', '/_sandbox/faults', {
      body: { throttle: { count: 1, retryAfterSeconds: 2, reason: 'jira-burst-based' } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: ['throttle.reason: one of TF400733 (got jira-burst-based)'],
    });
    await faults(ado.url, { throttle: { count: 1, retryAfterSeconds: 2, reason: 'TF400733' } });
    const blocked = await ado.call('wit/workitems/1');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBe('2');
    expect(((await blocked.json()) as { message: string }).message).toMatch(/^TF400733: /);
    expect((await ado.call('wit/workitems/1')).status).toBe(200);
  });

  it('answers a burst of 5xx in its own error shape', async () => {
    await faults(ado.url, { errors: { count: 1, status: 500 } });
    const failed = await ado.call('wit/workitems/1');
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ typeKey: 'ServiceUnavailableException' });
    expect((await ado.call('wit/workitems/1')).status).toBe(200);
  });
});
