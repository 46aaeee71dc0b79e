/**
 * Jira sandbox issue activity through real HTTP: issue links and link types, remote links, comments (ADF,
 * ordering, paging) and worklogs (format of `started`, estimates).
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
let base = '';

const call = (method: string, path: string, body?: unknown) =>
  http(base, method, path, { body, headers: { Authorization: AUTH } });

const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

async function create(
  summary: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; key: string }> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body;
}

useJiraSandbox(config, (url) => {
  base = url;
});

describe('issue links', () => {
  it('lists the link types including Tests', async () => {
    const types = await call('GET', '/rest/api/3/issueLinkType');
    expect(types.status).toBe(200);
    const byName = Object.fromEntries(
      types.body.issueLinkTypes.map((t: { name: string; inward: string; outward: string }) => [
        t.name,
        [t.outward, t.inward],
      ]),
    );
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(['Blocks', 'Cloners', 'Duplicate', 'Relates', 'Tests']),
    );
    expect(byName.Tests).toEqual(['tests', 'is tested by']);
  });

  it('links two issues (201) and shows the link on both, once even if posted twice', async () => {
    const test = await create('the test');
    const story = await create('the story');
    const body = {
      type: { name: 'Tests' },
      inwardIssue: { key: test.key },
      outwardIssue: { key: story.key },
    };
    const first = await call('POST', '/rest/api/3/issueLink', body);
    expect(first.status).toBe(201);
    expect((await call('POST', '/rest/api/3/issueLink', body)).status).toBe(201);
    const onTest = (await call('GET', `/rest/api/3/issue/${test.key}?fields=issuelinks`)).body.fields
      .issuelinks;
    expect(onTest).toHaveLength(1);
    expect(onTest[0].type.name).toBe('Tests');
    expect(onTest[0].outwardIssue.key).toBe(story.key);
    const onStory = (await call('GET', `/rest/api/3/issue/${story.key}?fields=issuelinks`)).body.fields
      .issuelinks;
    expect(onStory).toHaveLength(1);
    expect(onStory[0].inwardIssue.key).toBe(test.key);
    const link = await call('GET', `/rest/api/3/issueLink/${onTest[0].id}`);
    expect(link.body.inwardIssue.key).toBe(test.key);

    expect((await call('POST', '/rest/api/3/issueLink', { ...body, type: { name: 'Nope' } })).status).toBe(
      404,
    );
    expect(
      (await call('POST', '/rest/api/3/issueLink', { ...body, outwardIssue: { key: `${KEY}-999` } })).status,
    ).toBe(404);
  });
});

describe('remote links', () => {
  it('creates, updates by globalId and lists remote links', async () => {
    const issue = await create('with a link');
    const path = `/rest/api/3/issue/${issue.key}/remotelink`;
    const link = {
      globalId: 'ado:workitem:123',
      application: { type: 'com.microsoft.ado', name: 'Azure DevOps' },
      object: { url: 'https://dev.azure.com/org/p/_workitems/edit/123', title: 'ADO 123' },
    };
    const created = await call('POST', path, link);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), self: expect.stringContaining('/remotelink/') });
    const updated = await call('POST', path, {
      ...link,
      object: { ...link.object, title: 'ADO 123 (moved)' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.id).toBe(created.body.id);
    const list = await call('GET', path);
    expect(list.body).toHaveLength(1);
    expect(list.body[0].object.title).toBe('ADO 123 (moved)');
    const one = await call('GET', `${path}?globalId=${encodeURIComponent(link.globalId)}`);
    expect(one.body.globalId).toBe(link.globalId);
    const invalid = await call('POST', path, { object: { title: 'no url' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.url).toBeDefined();
  });
});

describe('comments', () => {
  it('adds ADF comments, refuses invalid bodies, and pages/orders the list', async () => {
    const issue = await create('discussed');
    const path = `/rest/api/3/issue/${issue.key}/comment`;
    for (const text of ['first', 'second', 'third']) {
      const res = await call('POST', path, { body: doc(text) });
      expect(res.status).toBe(201);
      expect(res.body.body).toEqual(doc(text));
      expect(res.body.author.emailAddress).toBe(config.jira.email);
    }
    const invalid = await call('POST', path, { body: 'plain text' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.comment).toBeDefined();
    const badNode = await call('POST', path, {
      body: {
        type: 'doc',
        version: 1,
        content: [{ type: 'paragraph', content: [{ type: 'heading', attrs: { level: 9 } }] }],
      },
    });
    expect(badNode.status).toBe(400);

    const text = (c: { body: { content: { content: { text: string }[] }[] } }) =>
      c.body.content[0]?.content[0]?.text;
    const asc = await call('GET', `${path}?orderBy=created&maxResults=2`);
    expect(asc.body.total).toBe(3);
    expect(asc.body.comments.map(text)).toEqual(['first', 'second']);
    const next = await call('GET', `${path}?orderBy=created&startAt=2&maxResults=2`);
    expect(next.body.comments.map(text)).toEqual(['third']);
    const desc = await call('GET', `${path}?orderBy=-created`);
    expect(desc.body.comments.map(text)).toEqual(['third', 'second', 'first']);
    expect((await call('GET', `${path}?orderBy=author`)).status).toBe(400);
    const fields = await call('GET', `/rest/api/3/issue/${issue.key}?fields=comment`);
    expect(fields.body.fields.comment.total).toBe(3);
  });
});

describe('worklogs', () => {
  it('logs work in Jira formats and reduces the remaining estimate', async () => {
    const issue = await create('worked on', { timetracking: { originalEstimate: '1d' } });
    const path = `/rest/api/3/issue/${issue.key}/worklog`;
    const logged = await call('POST', path, {
      started: '2024-05-01T09:00:00.000+0000',
      timeSpentSeconds: 7200,
      comment: doc('pairing'),
    });
    expect(logged.status).toBe(201);
    expect(logged.body).toMatchObject({
      timeSpent: '2h',
      timeSpentSeconds: 7200,
      started: '2024-05-01T09:00:00.000+0000',
    });
    expect(
      (await call('POST', path, { started: '2024-05-02T09:00:00.000+0000', timeSpent: '1h 30m' })).status,
    ).toBe(201);
    const isoZ = await call('POST', path, { started: '2024-05-01T09:00:00Z', timeSpentSeconds: 60 });
    expect(isoZ.status).toBe(400);
    expect(isoZ.body.errors.started).toBeDefined();
    expect(
      (await call('POST', path, { started: '2024-05-01T09:00:00.000+0000' })).body.errors.timeLogged,
    ).toBeDefined();
    const list = await call('GET', path);
    expect(list.body.total).toBe(2);
    expect(list.body.worklogs.map((w: { timeSpentSeconds: number }) => w.timeSpentSeconds)).toEqual([
      7200, 5400,
    ]);
    const tt = (await call('GET', `/rest/api/3/issue/${issue.key}?fields=timetracking`)).body.fields
      .timetracking;
    expect(tt).toMatchObject({ originalEstimate: '1d', remainingEstimate: '4h 30m', timeSpent: '3h 30m' });
  });

  it('deletes a worklog (204), adjusting the estimate as asked; an unknown one is 404', async () => {
    const issue = await create('worked on, then not', { timetracking: { originalEstimate: '1d' } });
    const path = `/rest/api/3/issue/${issue.key}/worklog`;
    const first = await call('POST', path, {
      started: '2024-05-01T09:00:00.000+0000',
      timeSpentSeconds: 3600,
    });
    const second = await call('POST', path, {
      started: '2024-05-01T11:00:00.000+0000',
      timeSpentSeconds: 1800,
    });
    expect((await call('DELETE', `${path}/${first.body.id}?adjustEstimate=leave`)).status).toBe(204);
    const list = await call('GET', path);
    expect(list.body.worklogs.map((w: { id: string }) => w.id)).toEqual([second.body.id]);
    let tt = (await call('GET', `/rest/api/3/issue/${issue.key}?fields=timetracking`)).body.fields
      .timetracking;
    expect(tt).toMatchObject({ remainingEstimate: '6h 30m', timeSpent: '30m' });
    expect(
      (await call('DELETE', `${path}/${second.body.id}?adjustEstimate=manual&increaseBy=1h`)).status,
    ).toBe(204);
    tt = (await call('GET', `/rest/api/3/issue/${issue.key}?fields=timetracking`)).body.fields.timetracking;
    expect(tt).toMatchObject({ remainingEstimate: '7h 30m' });
    expect((await call('DELETE', `${path}/${second.body.id}`)).status).toBe(404);
    expect((await call('DELETE', `/rest/api/3/issue/NOPE-1/worklog/1`)).status).toBe(404);
  });
});
