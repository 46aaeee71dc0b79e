/**
 * The Jira sandbox's priorities: Jira's five by default, a custom list set through PUT /_sandbox/jira/priorities
 * (with its default for new issues), served by GET /priority and the paged GET /priority/search, and the only
 * values an issue's `priority` takes; reset restores Jira's five.
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
let base = '';
const AUTH = {
  Authorization: `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`,
};
const call = (method: string, path: string, body?: unknown) =>
  http(base, method, path, { body, headers: AUTH });
const control = (method: string, path: string, body?: unknown) => http(base, method, path, { body });

useJiraSandbox(config, (url) => {
  base = url;
});

const CUSTOM = {
  priorities: [{ name: 'Blocker' }, { name: 'Major' }, { name: 'High' }, { name: 'Minor' }],
  default: 'Major',
};

describe('priorities', () => {
  it("serves Jira's five by default, Medium the default", async () => {
    const all = await call('GET', '/rest/api/3/priority');
    expect(all.status).toBe(200);
    const list = all.body as { name: string; isDefault: boolean }[];
    expect(list.map((p) => p.name)).toEqual(['Highest', 'High', 'Medium', 'Low', 'Lowest']);
    expect(list.filter((p) => p.isDefault).map((p) => p.name)).toEqual(['Medium']);
  });

  it('serves a custom list, paged and filtered by /priority/search, and new issues get its default', async () => {
    const set = await control('PUT', '/_sandbox/jira/priorities', CUSTOM);
    expect(set.status).toBe(200);
    const names = async (path: string) =>
      ((await call('GET', path)).body as { values: { name: string }[] }).values.map((p) => p.name);
    expect(
      ((await call('GET', '/rest/api/3/priority')).body as { name: string }[]).map((p) => p.name),
    ).toEqual(CUSTOM.priorities.map((p) => p.name));
    const first = await call('GET', '/rest/api/3/priority/search?maxResults=3&projectId=10000');
    expect(first.body).toMatchObject({ startAt: 0, maxResults: 3, total: 4, isLast: false });
    expect(await names('/rest/api/3/priority/search?startAt=3')).toEqual(['Minor']);
    expect(await names('/rest/api/3/priority/search?onlyDefault=true')).toEqual(['Major']);
    expect(await names('/rest/api/3/priority/search?priorityName=m')).toEqual(['Major', 'Minor']);

    const story = (priority?: unknown) => ({
      fields: {
        project: { key: KEY },
        issuetype: { name: 'Story' },
        summary: 'p',
        ...(priority ? { priority } : {}),
      },
    });
    const highest = await call('POST', '/rest/api/3/issue', story({ name: 'Highest' }));
    expect(highest.status).toBe(400);
    expect(highest.body).toEqual({
      errorMessages: [],
      errors: { priority: 'The priority selected is invalid.' },
    });
    const blocker = await call('POST', '/rest/api/3/issue', story({ name: 'Blocker' }));
    expect(blocker.status).toBe(201);
    const plain = await call('POST', '/rest/api/3/issue', story());
    const read = async (key: string) =>
      (
        (await call('GET', `/rest/api/3/issue/${key}?fields=priority`)).body as {
          fields: { priority: { name: string } };
        }
      ).fields.priority.name;
    expect(await read((blocker.body as { key: string }).key)).toBe('Blocker');
    expect(await read((plain.body as { key: string }).key)).toBe('Major');

    await control('POST', '/_sandbox/reset');
    expect((await call('GET', '/rest/api/3/priority')).body).toHaveLength(5);
  });

  it('refuses a list with repeated names or an unknown default', async () => {
    expect(
      (await control('PUT', '/_sandbox/jira/priorities', { priorities: [{ name: 'A' }, { name: 'a' }] }))
        .status,
    ).toBe(400);
    expect(
      (await control('PUT', '/_sandbox/jira/priorities', { priorities: [{ name: 'A' }], default: 'B' }))
        .status,
    ).toBe(400);
    expect((await control('PUT', '/_sandbox/jira/priorities', { priorities: [] })).status).toBe(400);
  });
});
