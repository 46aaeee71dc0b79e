/** The source and target clients against the sandbox trackers over HTTP, as they would talk to the real ones. */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdoClient } from '../../functions/trackers/ado/client.ts';
import { TrackerHttpError } from '../../functions/trackers/http.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { loadConformance } from '../support/openapi-conformance.ts';

let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '400', SANDBOX_SEED: '11' });
let ado: AdoClient;
let jira: JiraClient;

async function control(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : null,
  });
  return res.status === 204 ? undefined : res.json();
}
const adoLog = async () =>
  (await control(sb.ado.url, 'GET', '/_sandbox/requests')) as {
    method: string;
    path: string;
    status: number;
  }[];

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  ado = new AdoClient({
    organization: `${sb.ado.url}/${config.ado.org}`,
    project: config.ado.project,
    token: config.ado.pat,
  });
  jira = new JiraClient({ baseUrl: sb.jira.url, email: config.jira.email, token: config.jira.apiToken });
});
afterAll(async () => sb.stop());

describe('the Azure DevOps client', () => {
  it('reads items 200 at a time, with relations', async () => {
    const ids = await ado.idsInScope();
    expect(ids).toHaveLength(400);
    await control(sb.ado.url, 'DELETE', '/_sandbox/requests');
    const items = await ado.workItems(ids.slice(0, 450));
    expect(items.map((i) => i.id)).toEqual(ids.slice(0, 400));
    expect((await adoLog()).filter((r) => r.path.includes('workitemsbatch'))).toHaveLength(2);
    expect(items.some((i) => i.relations?.some((r) => r.rel === 'System.LinkTypes.Hierarchy-Reverse'))).toBe(
      true,
    );
  });

  it('reads only the fields asked for, without relations or descriptions', async () => {
    const ids = (await ado.idsInScope()).slice(0, 250);
    const full = await ado.workItems(ids, { expand: 'none' });
    const states = await ado.workItems(ids, { fields: ['System.WorkItemType', 'System.State'] });
    expect(states.map((i) => i.id)).toEqual(ids);
    for (const [i, item] of states.entries()) {
      expect(Object.keys(item.fields).sort()).toEqual(['System.State', 'System.WorkItemType']);
      expect(item.fields['System.State']).toBe(full[i]?.fields['System.State']);
      expect(item.relations).toBeUndefined();
    }
    // The point: a state read does not download every item's descriptions.
    const size = (items: unknown) => JSON.stringify(items).length;
    expect(size(states) * 5).toBeLessThan(size(full));
  });

  it('reads the project revisions in spans of time side by side, each revision once', async () => {
    const key = (r: { id: number; rev: number }) => `${r.id}:${r.rev}`;
    const inOne: string[] = [];
    for await (const batch of ado.reportingRevisions()) inOne.push(...batch.map(key));
    await control(sb.ado.url, 'DELETE', '/_sandbox/requests');
    const sliced: string[] = [];
    for await (const batch of ado.reportingRevisions({ slices: 4 })) sliced.push(...batch.map(key));
    expect(inOne.length).toBeGreaterThan(400);
    expect(sliced.length).toBe(new Set(sliced).size);
    expect(sliced.sort()).toEqual(inOne.sort());
    // One stream from the beginning, the others from their span's start (startDateTime on their first call only).
    const calls = (await adoLog()).filter((r) => r.path.includes('/reporting/workitemrevisions'));
    const starts = calls.filter((r) => r.path.includes('startDateTime='));
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.length).toBeLessThanOrEqual(3);
    expect(starts.every((r) => !r.path.includes('continuationToken='))).toBe(true);
  });

  it('filters the scope by area and type', async () => {
    const items = await ado.workItems(await ado.idsInScope());
    const bugs = await ado.idsInScope({ types: ['Bug'] });
    expect(bugs).toEqual(items.filter((i) => i.fields['System.WorkItemType'] === 'Bug').map((i) => i.id));
    const area = String(
      items.find((i) => String(i.fields['System.AreaPath']).split('\\').length === 3)?.fields[
        'System.AreaPath'
      ],
    );
    const under = await ado.idsInScope({ areaPath: area });
    expect(under).toEqual(
      items
        .filter((i) => String(i.fields['System.AreaPath']).toLowerCase().startsWith(area.toLowerCase()))
        .map((i) => i.id),
    );
    expect(under.length).toBeGreaterThan(0);
  });

  it('reads only the items changed since an instant (incremental runs), with time precision', async () => {
    const items = await ado.workItems(await ado.idsInScope());
    const changed = items.map((i) => String(i.fields['System.ChangedDate'])).sort();
    const cut = changed[Math.floor(changed.length / 2)] as string;
    const since = await ado.idsInScope({ changedSince: cut });
    expect(since).toEqual(items.filter((i) => String(i.fields['System.ChangedDate']) > cut).map((i) => i.id));
    expect(since.length).toBeGreaterThan(0);
    expect(since.length).toBeLessThan(items.length);
  });

  it('pages through every comment of a busy item, oldest first', async () => {
    const items = await ado.workItems(await ado.idsInScope());
    const busy = [...items].sort(
      (a, b) => Number(b.fields['System.CommentCount'] ?? 0) - Number(a.fields['System.CommentCount'] ?? 0),
    )[0]!;
    const expected = Number(busy.fields['System.CommentCount']);
    expect(expected).toBeGreaterThan(200);
    const comments = [];
    for await (const c of ado.comments(busy.id)) comments.push(c);
    expect(comments).toHaveLength(expected);
    const dates = comments.map((c) => Date.parse(c.createdDate ?? ''));
    expect(dates).toEqual([...dates].sort((a, b) => a - b));
    expect(new Set(comments.map((c) => c.id)).size).toBe(expected);
  });

  it('streams an attachment byte for byte', async () => {
    const items = await ado.workItems(await ado.idsInScope());
    const rel = items
      .flatMap((i) => i.relations ?? [])
      .find((r) => r.rel === 'AttachedFile' && Number(r.attributes?.resourceSize) > 100_000)!;
    const res = await ado.openAttachment(rel.url);
    let size = 0;
    const hash = createHash('sha256');
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      hash.update(chunk);
    }
    expect(size).toBe(Number(rel.attributes?.resourceSize));
    const again = Buffer.from(await (await ado.openAttachment(rel.url)).arrayBuffer());
    expect(createHash('sha256').update(again).digest('hex')).toBe(hash.digest('hex'));
  });

  it('reads classification trees with sprint dates, types and states', async () => {
    const iterations = await ado.classificationNodes('iterations');
    const dated = JSON.stringify(iterations).match(/"startDate"/g) ?? [];
    expect(dated.length).toBeGreaterThan(2);
    expect((await ado.workItemTypes()).map((t) => t.name)).toEqual(
      expect.arrayContaining(['Epic', 'Feature', 'User Story', 'Task', 'Bug', 'Test Case']),
    );
    expect((await ado.states('User Story')).map((s) => s.category)).toEqual(
      expect.arrayContaining(['Proposed', 'InProgress', 'Completed', 'Removed']),
    );
  });

  it('slices WIQL under the 20,000 cap that an unsliced query hits', async () => {
    await control(sb.ado.url, 'POST', '/_sandbox/seed', { items: 25_000 });
    try {
      const unsliced = ado.wiql(
        'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project ORDER BY [System.Id]',
      );
      await expect(unsliced).rejects.toBeInstanceOf(TrackerHttpError);
      await expect(unsliced).rejects.toMatchObject({ status: 400 });
      expect(JSON.stringify(await unsliced.catch((e: TrackerHttpError) => e.body))).toContain('VS402337');
      await control(sb.ado.url, 'DELETE', '/_sandbox/requests');
      const ids = await ado.idsInScope();
      expect(ids).toHaveLength(25_000);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const wiql = (await adoLog()).filter((r) => r.path.includes('/wiql'));
      expect(wiql.length).toBe(3); // the max-id probe and two slices
      expect(wiql.every((r) => r.status === 200)).toBe(true);
    } finally {
      await control(sb.ado.url, 'POST', '/_sandbox/seed', { items: 400 });
    }
  });
});

describe('the Jira client', () => {
  const fields = (summary: string, labels: string[]) => ({
    fields: { project: { key: config.jira.projectKey }, issuetype: { name: 'Task' }, summary, labels },
  });

  it('bulk-creates, reporting a failing element while creating the others', async () => {
    const res = await jira.bulkCreate([
      fields('one', ['src-id-1']),
      fields('two', ['has space']),
      fields('three', ['src-id-3']),
    ]);
    expect(res.issues).toHaveLength(2);
    expect(res.errors).toEqual([expect.objectContaining({ failedElementNumber: 1 })]);
    await expect(jira.bulkCreate(Array.from({ length: 51 }, (_, i) => fields(`x${i}`, [])))).rejects.toThrow(
      RangeError,
    );
  });

  it('finds issues by label through the index lag only when asked to reconcile', async () => {
    await control(sb.jira.url, 'PUT', '/_sandbox/faults', { searchLagMs: 600_000 });
    try {
      const created = await jira.bulkCreate([fields('lagging', ['src-id-900'])]);
      const id = Number(created.issues[0]?.id);
      expect(await jira.findByLabels(config.jira.projectKey, ['src-id-900'])).toEqual([]);
      const found = await jira.findByLabels(config.jira.projectKey, ['src-id-900'], [id]);
      expect(found.map((i) => i.key)).toEqual([created.issues[0]?.key]);
    } finally {
      await control(sb.jira.url, 'PUT', '/_sandbox/faults', { searchLagMs: 0 });
    }
    // 250 labels span several chunked queries and pages.
    const labels = Array.from({ length: 250 }, (_, i) => `src-id-${5000 + i}`);
    for (let i = 0; i < labels.length; i += 50)
      await jira.bulkCreate(labels.slice(i, i + 50).map((l) => fields(l, [l])));
    expect((await jira.findByLabels(config.jira.projectKey, labels)).length).toBe(250);
  });

  it('streams an attachment up and reads its media file id', async () => {
    const key = (await jira.bulkCreate([fields('with file', [])])).issues[0]!.key;
    const size = 3 * 1024 * 1024 + 17;
    let opened = 0;
    const open = async () => {
      opened++;
      async function* chunks() {
        for (let sent = 0; sent < size; sent += 65_536)
          yield Buffer.alloc(Math.min(65_536, size - sent), sent % 251);
      }
      return { stream: Readable.from(chunks()), contentType: 'application/octet-stream' };
    };
    const [attachment] = await jira.attach(key, 'big file.bin', open);
    expect(attachment).toMatchObject({ filename: 'big file.bin', size });
    expect(opened).toBe(1);
    expect(await jira.attachmentMediaId(String((attachment as { id: string }).id))).toMatch(
      /^[0-9a-f-]{36}$/,
    );
  });

  it('streams several files in one upload, opening each when the body reaches it, leaving out those it is told to', async () => {
    const key = (await jira.bulkCreate([fields('with files', [])])).issues[0]!.key;
    await control(sb.jira.url, 'DELETE', '/_sandbox/requests');
    const opened: string[] = [];
    const file = (name: string, bytes: number, leaveOut = false) => ({
      fileName: name,
      open: async () => {
        opened.push(name);
        if (leaveOut) return undefined;
        return { stream: Readable.from([Buffer.alloc(bytes, 7)]), contentType: 'text/plain' };
      },
    });
    const answers = await jira.attachFiles(key, [
      file('a.txt', 10),
      file('left out.bin', 5, true),
      file('a.txt', 20),
      file('c.txt', 30),
    ]);
    expect(answers.map((a) => a && `${a.filename}:${a.size}`)).toEqual([
      'a.txt:10',
      undefined,
      'a.txt:20',
      'c.txt:30',
    ]);
    expect(opened).toEqual(['a.txt', 'left out.bin', 'a.txt', 'c.txt']);
    const uploads = (
      (await control(sb.jira.url, 'GET', '/_sandbox/requests')) as { method: string }[]
    ).filter((r) => r.method === 'POST');
    expect(uploads).toHaveLength(1);
    // Nothing left to send: no request at all.
    expect(await jira.attachFiles(key, [file('gone.bin', 5, true)])).toEqual([undefined]);
    expect(
      ((await control(sb.jira.url, 'GET', '/_sandbox/requests')) as { method: string }[]).filter(
        (r) => r.method === 'POST',
      ),
    ).toHaveLength(1);
  });

  it('runs a sprint through its life: create, assign, start, close', async () => {
    const [board] = await jira.boards(config.jira.projectKey);
    const keys = (await jira.bulkCreate([fields('s1', []), fields('s2', [])])).issues.map((i) => i.key);
    const sprint = await jira.createSprint({
      name: 'Sprint 1',
      originBoardId: board!.id,
      startDate: '2026-01-05T09:00:00.000Z',
      endDate: '2026-01-16T17:00:00.000Z',
    });
    expect(sprint.state).toBe('future');
    await jira.moveToSprint(sprint.id, keys);
    expect((await jira.updateSprint(sprint.id, { state: 'active' })).state).toBe('active');
    expect((await jira.updateSprint(sprint.id, { state: 'closed' })).state).toBe('closed');
    await expect(jira.moveToSprint(sprint.id, keys)).rejects.toMatchObject({ status: 400 });
    expect((await jira.sprints(board!.id)).map((s) => s.id)).toContain(sprint.id);
  });

  it('reads comments page by page, remote links and resolutions, and links with a comment, as the spec says', async () => {
    // A client of its own whose every answer is kept, to be checked against Atlassian's OpenAPI description.
    const watched = new JiraClient({
      baseUrl: sb.jira.url,
      email: config.jira.email,
      token: config.jira.apiToken,
    });
    const exchanges: { method: string; path: string; status: number; body: unknown }[] = [];
    const request = watched.http.request.bind(watched.http);
    watched.http.request = (async (method: string, path: string, opts?: Parameters<typeof request>[2]) => {
      const res = await request(method, path, opts);
      const query = new URLSearchParams(
        Object.entries(opts?.query ?? {}).flatMap(([k, v]): [string, string][] =>
          v === undefined ? [] : [[k, String(v)]],
        ),
      );
      exchanges.push({
        method,
        path: `${path}${query.size ? `?${query}` : ''}`,
        status: res.status,
        body: res.body,
      });
      return res;
    }) as typeof request;
    const doc = (text: string) => ({
      type: 'doc',
      version: 1,
      content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
    });
    const [a, b] = (await jira.bulkCreate([fields('subject', []), fields('object', [])])).issues.map(
      (i) => i.key,
    ) as [string, string];

    // 250 comments come back in order over three pages of 100.
    for (let n = 1; n <= 250; n++) await jira.addComment(a, doc(`comment ${n}`));
    const read: string[] = [];
    for await (const c of watched.comments(a))
      read.push((c.body as { content: { content: { text: string }[] }[] }).content[0]!.content[0]!.text);
    expect(read).toEqual(Array.from({ length: 250 }, (_, i) => `comment ${i + 1}`));
    const pages = exchanges.filter((e) => e.path.includes('/comment'));
    expect(pages.map((e) => new URLSearchParams(e.path.split('?')[1]).get('startAt'))).toEqual([
      '0',
      '100',
      '200',
    ]);

    // Remote links, all at once. A globalId seen before updates its link (Jira answers 200, not 201), and the
    // client says which it was: the links phase counts on it instead of reading the links first.
    expect(
      await jira.addRemoteLink(b, {
        url: 'https://dev.azure.com/o/p/_workitems/edit/1',
        title: 'one',
        globalId: 'g-1',
      }),
    ).toBe('created');
    const two = { url: 'https://dev.azure.com/o/p/_workitems/edit/2', title: 'two', globalId: 'g-2' };
    expect(await jira.addRemoteLink(b, two)).toBe('created');
    expect(await jira.addRemoteLink(b, two)).toBe('updated');
    const remotes = await watched.remoteLinks(b);
    expect(remotes.map((r) => [r.globalId, r.object?.title])).toEqual([
      ['g-1', 'one'],
      ['g-2', 'two'],
    ]);
    expect(await watched.remoteLinks(a)).toEqual([]);

    // Resolutions from the paged search (the unpaged list is deprecated).
    expect((await watched.resolutions()).map((r) => r.name)).toEqual(
      expect.arrayContaining(['Done', "Won't Do", 'Duplicate']),
    );
    expect(exchanges.filter((e) => e.path.startsWith('/rest/api/3/resolution'))).toEqual([
      expect.objectContaining({ path: '/rest/api/3/resolution/search?startAt=0&maxResults=50' }),
    ]);

    // "a blocks b", its comment written with it; the same link again stays one link.
    await watched.createIssueLink({ type: 'Blocks', inwardKey: a, outwardKey: b, comment: doc('because') });
    const linked = await jira.getIssue(a, ['issuelinks']);
    expect(linked.fields?.issuelinks).toEqual([
      expect.objectContaining({
        type: expect.objectContaining({ name: 'Blocks' }),
        outwardIssue: expect.objectContaining({ key: b }),
      }),
    ]);
    const onB = await jira.getIssue(b, ['issuelinks']);
    expect(onB.fields?.issuelinks).toEqual([
      expect.objectContaining({ inwardIssue: expect.objectContaining({ key: a }) }),
    ]);
    const comments: unknown[] = [];
    for await (const c of watched.comments(a)) comments.push(c.body);
    expect(comments.at(-1)).toEqual(doc('because'));
    await watched.createIssueLink({ type: 'Blocks', inwardKey: a, outwardKey: b });
    expect((await jira.getIssue(a, ['issuelinks'])).fields?.issuelinks).toHaveLength(1);
    await expect(
      watched.createIssueLink({ type: 'Nope', inwardKey: a, outwardKey: b }),
    ).rejects.toMatchObject({
      status: 404,
    });

    // Every answer matches the spec. GET remotelink without globalId answers the array the service sends,
    // while the spec's schema describes one link: each element is checked against it.
    const conformance = await loadConformance(['jira-platform']);
    const problems = exchanges.flatMap((e) =>
      e.path.includes('/remotelink') && Array.isArray(e.body)
        ? e.body.flatMap((one) => conformance.checkResponse({ ...e, body: one }))
        : conformance.checkResponse(e),
    );
    expect(problems).toEqual([]);
    expect(
      new Set(exchanges.map((e) => `${e.method} ${e.path.split('?')[0]?.replace(/\/[A-Z]+-\d+/, '/{key}')}`)),
    ).toEqual(
      new Set([
        'GET /rest/api/3/issue/{key}/comment',
        'GET /rest/api/3/issue/{key}/remotelink',
        'GET /rest/api/3/resolution/search',
        'POST /rest/api/3/issueLink',
      ]),
    );
  });

  it('reads the metadata a migration maps to', async () => {
    expect((await jira.project(config.jira.projectKey)).issueTypes?.map((t) => t.name)).toEqual(
      expect.arrayContaining(['Epic', 'Story', 'Task', 'Bug']),
    );
    expect((await jira.linkTypes()).map((l) => l.name)).toEqual(
      expect.arrayContaining(['Blocks', 'Duplicate', 'Relates']),
    );
    expect((await jira.projectStatuses(config.jira.projectKey)).length).toBeGreaterThan(0);
    const key = (await jira.bulkCreate([fields('to move', [])])).issues[0]!.key;
    expect((await jira.transitions(key)).length).toBeGreaterThan(0);
    const both = sandboxPeople(config.seed).find((p) => p.on === 'both')!;
    expect((await jira.findUsersByEmail(both.email)).map((u) => u.accountId)).toEqual([both.jiraAccountId]);
    const adoOnly = sandboxPeople(config.seed).find((p) => p.on === 'ado')!;
    expect(await jira.findUsersByEmail(adoOnly.email)).toEqual([]);
    // The exact e-mail match, whatever its case; an accountId Jira knows, and one it does not.
    expect(await jira.accountIdByEmail(both.email.toUpperCase())).toBe(both.jiraAccountId);
    expect(await jira.accountIdByEmail(adoOnly.email)).toBeUndefined();
    expect(await jira.accountExists(both.jiraAccountId as string)).toBe(true);
    expect(await jira.accountExists('5b10ac8d82e05b22cc7d4ef5')).toBe(false);
  });
});
