/**
 * Jira sandbox search through real HTTP: the enhanced JQL search with token paging, explicit fields (ids only
 * without them), the JQL subset, index lag with and without reconcileIssues (what is found, and the fields it
 * is answered with), and the removed search's 410.
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

const control = (method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function create(
  summary: string,
  labels: string[] = [],
  type = 'Story',
): Promise<{ id: string; key: string }> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: type }, summary, labels },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

const search = (params: Record<string, string | string[]>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) q.append(k, one);
  return call('GET', `/rest/api/3/search/jql?${q}`);
};

useJiraSandbox(config, (url) => {
  base = url;
});

describe('enhanced search', () => {
  it('pages with nextPageToken until isLast, in ORDER BY order', async () => {
    for (let i = 1; i <= 7; i++) await create(`issue ${i}`);
    const keys: string[] = [];
    let token: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await search({
        jql: `project = ${KEY} ORDER BY key ASC`,
        maxResults: '3',
        fields: 'key',
        ...(token ? { nextPageToken: token } : {}),
      });
      expect(page.status).toBe(200);
      pages++;
      keys.push(...page.body.issues.map((i: { key: string }) => i.key));
      if (page.body.isLast) {
        expect(page.body.nextPageToken).toBeUndefined();
        break;
      }
      token = page.body.nextPageToken;
      expect(token).toEqual(expect.any(String));
    }
    expect(pages).toBe(3);
    expect(keys).toEqual(Array.from({ length: 7 }, (_, i) => `${KEY}-${i + 1}`));
    const desc = await search({ jql: `project = ${KEY} ORDER BY created DESC`, fields: 'summary' });
    expect(desc.body.issues[0].key).toBe(`${KEY}-7`);
    const bogus = await search({ jql: `project = ${KEY}`, nextPageToken: 'not-a-token' });
    expect(bogus.status).toBe(400);
  });

  it('returns only ids without fields, and exactly the named fields with them (GET and POST)', async () => {
    await create('needle', ['src-id-1']);
    const idsOnly = await search({ jql: `project = ${KEY}` });
    expect(idsOnly.body.issues).toEqual([{ id: expect.any(String) }]);
    const named = await call('POST', '/rest/api/3/search/jql', {
      jql: `labels = "src-id-1"`,
      fields: ['summary', 'labels', 'status'],
    });
    expect(named.status).toBe(200);
    const issue = named.body.issues[0];
    expect(issue.key).toBe(`${KEY}-1`);
    expect(Object.keys(issue.fields).sort()).toEqual(['labels', 'status', 'summary']);
    expect(issue.fields.status.statusCategory.key).toBe('new');
  });

  it('evaluates the JQL subset: labels =/IN, key IN, issuetype, AND, OR, parentheses', async () => {
    const a = await create('a', ['src-id-1']);
    const b = await create('b', ['src-id-2'], 'Bug');
    await create('c', ['src-id-3'], 'Task');
    const keysOf = async (jql: string) => {
      const res = await search({ jql, fields: 'key' });
      expect(res.status).toBe(200);
      return res.body.issues.map((i: { key: string }) => i.key).sort();
    };
    expect(await keysOf(`project = ${KEY} AND labels IN ("src-id-1", "src-id-2") ORDER BY key`)).toEqual([
      a.key,
      b.key,
    ]);
    expect(await keysOf(`key IN (${a.key}, ${b.key}) AND issuetype = Bug`)).toEqual([b.key]);
    expect(await keysOf(`project = ${KEY} AND (issuetype = Bug OR labels = src-id-1)`)).toEqual([
      a.key,
      b.key,
    ]);
    expect(await keysOf(`project = ${KEY} AND labels NOT IN (src-id-1)`)).toEqual([b.key, `${KEY}-3`]);
  });

  it('answers 400 with Jira messages for bad JQL, unknown fields and values, and unbounded queries', async () => {
    await create('x');
    const msg = async (jql: string) => {
      const res = await search({ jql });
      expect(res.status).toBe(400);
      return res.body.errorMessages[0] as string;
    };
    expect(await msg('foo = bar')).toBe(
      "Field 'foo' does not exist or you do not have permission to view it.",
    );
    expect(await msg('project = NOPE')).toBe("The value 'NOPE' does not exist for the field 'project'.");
    expect(await msg(`key IN (${KEY}-99)`)).toBe(
      `An issue with key '${KEY}-99' does not exist for field 'key'.`,
    );
    expect(await msg('project = ')).toMatch(/^Error in the JQL Query/);
    expect(await msg(`project = ${KEY} AND`)).toMatch(/^Error in the JQL Query/);
    expect(await msg('ORDER BY key')).toMatch(/Unbounded JQL/);
  });

  it('hides writes from search for searchLagMs unless the issue is reconciled', async () => {
    await control('PUT', '/_sandbox/faults', { searchLagMs: 600_000 });
    const issue = await create('lagging', ['src-id-lag']);
    const jql = 'labels = "src-id-lag"';
    expect((await search({ jql })).body.issues).toEqual([]);
    const reconciled = await search({ jql, reconcileIssues: issue.id });
    expect(reconciled.body.issues).toEqual([{ id: issue.id }]);
    const reconciledPost = await call('POST', '/rest/api/3/search/jql', {
      jql,
      reconcileIssues: [Number(issue.id)],
    });
    expect(reconciledPost.body.issues).toEqual([{ id: issue.id }]);

    // Moving past the lag (the index catches up) makes the write visible to everyone.
    await control('PUT', '/_sandbox/faults', { searchLagMs: 0 });
    expect((await search({ jql })).body.issues).toEqual([{ id: issue.id }]);

    // An edit is also lagged: the index keeps the old label until it catches up.
    await control('PUT', '/_sandbox/faults', { searchLagMs: 600_000 });
    const edit = await call('PUT', `/rest/api/3/issue/${issue.key}`, {
      fields: { labels: ['src-id-moved'] },
    });
    expect(edit.status).toBe(204);
    expect((await search({ jql })).body.issues).toEqual([{ id: issue.id }]);
    expect((await search({ jql: 'labels = "src-id-moved"' })).body.issues).toEqual([]);
    expect((await search({ jql: 'labels = "src-id-moved"', reconcileIssues: issue.id })).body.issues).toEqual(
      [{ id: issue.id }],
    );
    await control('PUT', '/_sandbox/faults', { searchLagMs: 0 });
    expect((await search({ jql })).body.issues).toEqual([]);
  });

  it("answers an edited issue's fields as the index holds them until the lag passes; reconciled ones as they are", async () => {
    const issue = await create('before', ['src-id-fields']);
    const other = await create('other');
    await control('PUT', '/_sandbox/faults', { searchLagMs: 600_000 });
    expect(
      (
        await call('PUT', `/rest/api/3/issue/${issue.key}`, {
          fields: { summary: 'after', labels: ['src-id-fields', 'extra'] },
          update: { comment: [{ add: { body: doc('a comment') } }] },
        })
      ).status,
    ).toBe(204);
    const linked = await call('POST', '/rest/api/3/issueLink', {
      type: { name: 'Blocks' },
      inwardIssue: { key: issue.key },
      outwardIssue: { key: other.key },
    });
    expect(linked.status).toBe(201);
    const fields = ['summary', 'labels', 'issuelinks', 'comment'];
    const answer = async (reconcile: boolean) => {
      const res = await call('POST', '/rest/api/3/search/jql', {
        jql: `key = ${issue.key}`,
        fields,
        ...(reconcile ? { reconcileIssues: [Number(issue.id)] } : {}),
      });
      expect(res.status).toBe(200);
      expect(res.body.issues).toHaveLength(1);
      const f = res.body.issues[0].fields;
      return {
        summary: f.summary,
        labels: f.labels,
        links: f.issuelinks.map((l: { outwardIssue?: { key: string } }) => l.outwardIssue?.key),
        comments: f.comment.total,
      };
    };
    const before = { summary: 'before', labels: ['src-id-fields'], links: [], comments: 0 };
    const after = { summary: 'after', labels: ['src-id-fields', 'extra'], links: [other.key], comments: 1 };
    expect(await answer(false)).toEqual(before);
    expect(await answer(true)).toEqual(after);
    // Reading the issue itself is never stale.
    expect((await call('GET', `/rest/api/3/issue/${issue.key}?fields=summary`)).body.fields.summary).toBe(
      'after',
    );
    // JQL matches the indexed values too: the new label finds nothing yet.
    expect((await search({ jql: 'labels = "extra"' })).body.issues).toEqual([]);

    await control('PUT', '/_sandbox/faults', { searchLagMs: 0 });
    expect(await answer(false)).toEqual(after);
    expect((await search({ jql: 'labels = "extra"' })).body.issues).toEqual([{ id: issue.id }]);
  });

  it('becomes visible by itself once a short lag has passed', async () => {
    await control('PUT', '/_sandbox/faults', { searchLagMs: 200 });
    const issue = await create('short lag', ['src-id-short']);
    let seen = false;
    for (let i = 0; i < 200 && !seen; i++) {
      const res = await search({ jql: 'labels = "src-id-short"' });
      seen = res.body.issues.length === 1;
      if (!seen) await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe(true);
    expect((await search({ jql: `key = ${issue.key}` })).body.issues).toEqual([{ id: issue.id }]);
  });

  it('answers 410 Gone on the removed /rest/api/3/search', async () => {
    const get = await call('GET', `/rest/api/3/search?jql=project=${KEY}`);
    expect(get.status).toBe(410);
    expect(get.body.errorMessages[0]).toContain('/rest/api/3/search/jql');
    expect((await call('POST', '/rest/api/3/search', { jql: `project = ${KEY}` })).status).toBe(410);
  });
});
