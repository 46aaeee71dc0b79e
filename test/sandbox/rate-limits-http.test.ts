/**
 * The sandboxes' rate limits through real HTTP, set through GET|PUT /_sandbox/limits: Jira's 429s with their
 * headers and reasons (burst per endpoint, per-issue writes, the OAuth quota, API-token traffic exempt), Azure
 * DevOps' delay headers then TF400733, the request log's reasons, and reset back to the start profile (off).
 * Rates are set so low that no refill can happen during a test: nothing here depends on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
let base = '';
useJiraSandbox(config, (url) => {
  base = url;
});
const call = (method: string, path: string, body?: unknown, auth = AUTH) =>
  http(base, method, path, { body, headers: { Authorization: auth } });
const limits = (body: unknown) => http(base, 'PUT', '/_sandbox/limits', { body });
const OFF = { burst: { enabled: false }, perIssue: { enabled: false }, quota: { enabled: false } };
const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

async function create(summary: string): Promise<string> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

describe('Jira sandbox limits', () => {
  it('starts off in tests, and refuses settings it does not know', async () => {
    const start = await http(base, 'GET', '/_sandbox/limits');
    expect(start.body).toMatchObject({ profile: 'off', limits: OFF, latency: { read: { medianMs: 0 } } });
    const bad = await limits({ limits: { burst: { perMethod: { GET: -1 } } }, speed: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual([
      'limits.burst.perMethod.GET: Too small: expected number to be >0',
      'speed: unknown setting',
    ]);
  });

  it("holds a read's answer for its transfer time at the set pace, by the answer's size", async () => {
    // 60 s a MiB: the priority list's kilobyte or two "arrives" in about a tenth of a second.
    expect((await limits({ latency: { transferMsPerMiB: 60_000 } })).status).toBe(200);
    const read = await call('GET', '/rest/api/3/priority');
    expect(read.status).toBe(200);
    const log = (await http(base, 'GET', '/_sandbox/requests')).body as { endpoint?: string; ms: number }[];
    const entry = log.find((r) => r.endpoint === 'GET /rest/api/3/priority');
    // A lower bound only (less a millisecond of timer rounding): a loaded machine only adds to it.
    const transfer = (60_000 * Buffer.byteLength(read.text)) / 1024 ** 2;
    expect(transfer).toBeGreaterThan(50);
    expect(entry?.ms).toBeGreaterThanOrEqual(transfer - 1);
  });

  it('refuses an endpoint past its bucket with the burst headers, leaves other endpoints alone, logs the reason', async () => {
    await limits({ limits: { burst: { enabled: true, perMethod: { GET: 0.001 }, burstSeconds: 1 } } });
    expect((await call('GET', '/rest/api/3/myself')).status).toBe(200);
    const refused = await call('GET', '/rest/api/3/myself');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ errorMessages: ['Rate limit exceeded.'], errors: {} });
    expect(refused.headers).toMatchObject({
      'retry-after': '1000',
      'x-ratelimit-limit': '0.001',
      'x-ratelimit-remaining': '0',
      'ratelimit-reason': 'jira-burst-based',
    });
    expect(String(refused.headers['x-ratelimit-reset'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await call('GET', '/rest/api/3/priority')).status).toBe(200);
    const log = (await http(base, 'GET', '/_sandbox/requests')).body;
    expect(log.filter((r: { status: number }) => r.status === 429)).toEqual([
      expect.objectContaining({
        endpoint: 'GET /rest/api/3/myself',
        fault: 'rate-limit',
        reason: 'jira-burst-based',
      }),
    ]);
  });

  it('refuses writes to one issue past its window, not to another, and resets to the start profile', async () => {
    const [busy, calm] = [await create('busy'), await create('calm')];
    await limits({ limits: { perIssue: { enabled: true, windows: [{ writes: 2, seconds: 3600 }] } } });
    for (const n of [1, 2])
      expect((await call('POST', `/rest/api/3/issue/${busy}/comment`, { body: doc(`c${n}`) })).status).toBe(
        201,
      );
    const refused = await call('POST', `/rest/api/3/issue/${busy}/comment`, { body: doc('c3') });
    expect(refused.status).toBe(429);
    expect(refused.headers).toMatchObject({
      'ratelimit-reason': 'jira-per-issue-on-write',
      'x-ratelimit-limit': '2',
    });
    expect((await call('POST', `/rest/api/3/issue/${calm}/comment`, { body: doc('c1') })).status).toBe(201);
    expect((await call('GET', `/rest/api/3/issue/${busy}/comment`)).status).toBe(200);
    await http(base, 'POST', '/_sandbox/reset');
    expect((await http(base, 'GET', '/_sandbox/limits')).body.limits).toMatchObject(OFF);
  });

  it('counts an upload of several files as one write to its issue, as Jira does', async () => {
    const key = await create('files');
    await limits({ limits: { perIssue: { enabled: true, windows: [{ writes: 2, seconds: 3600 }] } } });
    const upload = (names: string[]) => {
      const form = new FormData();
      for (const name of names) form.append('file', new Blob([`bytes of ${name}`]), name);
      return fetch(`${base}/rest/api/3/issue/${key}/attachments`, {
        method: 'POST',
        headers: { Authorization: AUTH, 'X-Atlassian-Token': 'no-check' },
        body: form,
      });
    };
    const first = await upload(['a.txt', 'b.txt', 'c.txt']);
    expect(first.status).toBe(200);
    expect(await first.json()).toHaveLength(3);
    expect((await upload(['d.txt', 'e.txt'])).status).toBe(200);
    const refused = await upload(['f.txt']);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-reason')).toBe('jira-per-issue-on-write');
    await http(base, 'POST', '/_sandbox/reset');
  });

  it('spends the points quota of OAuth traffic only, then refuses it until the window turns', async () => {
    const redirect = 'http://127.0.0.1:9/oauth/callback';
    const authorize = await fetch(
      `${base}/authorize?${new URLSearchParams({
        audience: 'api.atlassian.com',
        client_id: 'sandbox-atlassian-client',
        scope: 'read:jira-work write:jira-work read:jira-user',
        redirect_uri: redirect,
        state: 's',
        response_type: 'code',
      })}`,
      { redirect: 'manual' },
    );
    const code = new URL(authorize.headers.get('location') ?? '').searchParams.get('code');
    const token = await http(base, 'POST', '/oauth/token', {
      body: {
        grant_type: 'authorization_code',
        client_id: 'sandbox-atlassian-client',
        client_secret: 'sandbox-atlassian-secret',
        code,
        redirect_uri: redirect,
      },
    });
    const bearer = `Bearer ${token.body.access_token}`;
    const cloudId = (await http(base, 'GET', '/_sandbox/jira/oauth')).body.cloudId;
    await limits({ limits: { quota: { enabled: true, points: 3, windowSeconds: 86_400 } } });
    const first = await call('GET', `/ex/jira/${cloudId}/rest/api/3/myself`, undefined, bearer);
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({
      'beta-ratelimit-policy': '"global-app-quota";q=3;w=86400',
      'beta-ratelimit': expect.stringMatching(/^"global-app-quota";r=1;t=\d+$/),
    });
    await call('GET', `/ex/jira/${cloudId}/rest/api/3/myself`, undefined, bearer); // 4 points of 3
    const refused = await call('GET', `/ex/jira/${cloudId}/rest/api/3/priority`, undefined, bearer);
    expect(refused.status).toBe(429);
    const nextDay = `${new Date(Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000).toISOString().slice(0, 19)}Z`;
    expect(refused.headers).toMatchObject({
      'ratelimit-reason': 'jira-quota-global-based',
      'x-ratelimit-reset': nextDay,
      'x-ratelimit-limit': '3',
      'beta-ratelimit': expect.stringMatching(/^"global-app-quota";r=0;t=\d+$/),
    });
    const secondsLeft = (Date.parse(nextDay) - Date.now()) / 1000;
    expect(Math.abs(Number(refused.headers['retry-after']) - secondsLeft)).toBeLessThanOrEqual(2);
    // API-token traffic is exempt.
    expect((await call('GET', '/rest/api/3/priority')).status).toBe(200);
  });
});

describe('Azure DevOps sandbox limits', () => {
  let ado: AdoTestSandbox;
  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 5 });
  });
  afterAll(() => ado.close());

  it('delays an identity past its budget with the rate-limit headers, then blocks it with TF400733', async () => {
    const put = await fetch(`${ado.url}/_sandbox/limits`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        limits: { enabled: true, budget: 2, blockAtFactor: 2, maxDelayMs: 1, costs: { read: 1 } },
      }),
    });
    expect(put.status).toBe(200);
    for (const _ of [1, 2])
      expect((await ado.call('wit/workitems/1')).headers.get('x-ratelimit-delay')).toBeNull();
    const delayed = await ado.call('wit/workitems/1');
    expect(delayed.status).toBe(200);
    expect(Object.fromEntries([...delayed.headers].filter(([k]) => k.startsWith('x-ratelimit')))).toEqual({
      'x-ratelimit-resource': 'WorkItemTrackingResource',
      'x-ratelimit-delay': '0.001',
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
    });
    await ado.call('wit/workitems/1');
    const blocked = await ado.call('wit/workitems/1');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(200);
    expect(((await blocked.json()) as { message: string }).message).toMatch(/^TF400733: /);
    const log = (await (await fetch(`${ado.url}/_sandbox/requests`)).json()) as {
      status: number;
      reason?: string;
    }[];
    expect(log.map((r) => r.reason ?? r.status)).toEqual([
      200,
      200,
      'ado-tstu-delayed',
      'ado-tstu-delayed',
      'ado-tstu-blocked',
    ]);
  });
});
