/**
 * The Jira sandbox's JSON importer (local/sandbox/jira/importer.ts) through real HTTP: a file built by the
 * service's own builders (functions/domain/jira-import) is uploaded by a Jira administrator, its job followed
 * to the end, and the issues read back through the REST API, with jira.js and against the official spec: their
 * created, updated and resolution dates, reporters, comments with their authors and dates, changelogs with
 * the file's history, worklogs with their authors and start dates, parents, components; the wiki markup
 * rendered as ADF. A non-admin is refused, an invalid file is refused with every problem and nothing created,
 * a file imported twice gives two copies, and the import takes time in proportion to its size.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCloudClient } from 'jira.js';
import { createClient } from 'jira.js/core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  batchesOf,
  defaultBody,
  escapeWiki,
  type ImportFile,
  type ImportMapping,
  issueOf,
  type SourceComment,
  type SourceItem,
  type SourceRevision,
  serialiseImportFile,
} from '../../functions/domain/jira-import/index.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { adfProblems } from '../../local/sandbox/jira/adf.ts';
import { NOT_A_JIRA_ADMIN, REALISTIC_MS_PER_ISSUE } from '../../local/sandbox/jira/importer.ts';
import { buildJiraSandbox } from '../../local/sandbox/jira/index.ts';
import { wikiToAdf } from '../../local/sandbox/jira/wiki.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';
import { type Conformance, loadConformance } from '../support/openapi-conformance.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const basic = (email: string, token: string) =>
  `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
const SERVICE = basic(config.jira.email, config.jira.apiToken);
const ADMIN_EMAIL = 'site.admin@sandbox.example.com';
const ADMIN = basic(ADMIN_EMAIL, 'admin-token');
let base = '';
let conformance: Conformance;

useJiraSandbox(config, (url) => {
  base = url;
});
beforeAll(async () => {
  conformance = await loadConformance(['jira-platform']);
});

const call = (method: string, path: string, auth = SERVICE, body?: unknown) =>
  http(base, method, path, { headers: { Authorization: auth }, ...(body === undefined ? {} : { body }) });

/** A site admin account (a Jira administrator), the one the importer lets in. */
async function siteAdmin(): Promise<string> {
  const res = await http(base, 'PUT', '/_sandbox/jira/accounts', {
    body: {
      email: ADMIN_EMAIL,
      apiToken: 'admin-token',
      projectAdmin: true,
      siteAdmin: true,
      displayName: 'Site Admin',
    },
  });
  expect(res.status).toBe(200);
  return res.body.accountId;
}

const upload = (text: string, auth = ADMIN) =>
  http(base, 'POST', '/_sandbox/jira/import/json', {
    rawBody: text,
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
  });

interface Job {
  id: string;
  status: string;
  total: number;
  done: number;
  issues: { externalId: string; id: string; key: string }[];
  errors: string[];
  warnings: string[];
  createdComponents: string[];
  started: string;
  finished?: string;
}

async function finished(id: string): Promise<Job> {
  for (let i = 0; i < 500; i++) {
    const res = await http(base, 'GET', `/_sandbox/jira/import/json/${id}`, {
      headers: { Authorization: ADMIN },
    });
    expect(res.status).toBe(200);
    if (res.body.status === 'finished') return res.body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`import ${id} did not finish`);
}

async function imported(text: string): Promise<Job> {
  const res = await upload(text);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return finished(res.body.id);
}

// The people: two of the sandbox's Jira users, as Azure DevOps identities with the same e-mail.
const jiraUsers = sandboxPeople(config.seed).filter((p) => p.on !== 'ado');
const [ana, ben] = jiraUsers as [(typeof jiraUsers)[number], (typeof jiraUsers)[number]];
const identity = (p: { displayName: string; email: string }) => ({
  displayName: p.displayName,
  uniqueName: p.email,
  id: `id-${p.email}`,
});
/** No Jira account. */
const carla = { displayName: 'Carla Diaz', uniqueName: 'carla.diaz@fabrikam.example.com', id: 'id-carla' };

const status = (id: string, name: string) => ({ status: { id, name } });
const states = {
  New: status('10000', 'To Do'),
  Active: status('3', 'In Progress'),
  Resolved: status('10001', 'In Review'),
  Closed: status('10002', 'Done'),
};
const mapping: ImportMapping = {
  projectKey: KEY,
  typeMap: {
    Bug: { id: '10003', name: 'Bug' },
    Task: { id: '10004', name: 'Sub-task' },
  },
  typeLevels: { Bug: 0, 'Sub-task': -1 },
  states: { Bug: states, Task: states },
  doneStatuses: { bug: ['Done'], 'sub-task': ['Done'] },
  doneResolution: 'Done',
  priorityNames: ['Highest', 'High', 'Medium', 'Low', 'Lowest'],
  users: { [ana.email]: ana.jiraAccountId, [ben.email]: ben.jiraAccountId },
  storyPoints: { name: 'Story Points', typeKey: 'com.atlassian.jira.plugin.system.customfieldtypes:float' },
  components: [
    { name: 'Web', areaPaths: ['Fabrikam\\Web'] },
    { name: 'Web / API', areaPaths: ['Fabrikam\\Web\\API'] },
  ],
};

const revision = (
  id: number,
  rev: number,
  date: string,
  by: unknown,
  fields: Record<string, unknown>,
): SourceRevision => ({
  id,
  rev,
  fields: {
    'System.Id': id,
    'System.Rev': rev,
    'System.CreatedDate': '2024-03-04T09:15:02.37Z',
    'System.CreatedBy': identity(ana),
    'System.ChangedDate': date,
    'System.ChangedBy': by,
    ...fields,
  },
});

const opened = {
  'System.WorkItemType': 'Bug',
  'System.Title': 'Login fails',
  'System.State': 'New',
  'System.AreaPath': 'Fabrikam\\Web',
  'Microsoft.VSTS.Common.Priority': 2,
  'Microsoft.VSTS.Scheduling.StoryPoints': 3,
  'System.Tags': 'auth',
  'System.Description':
    '<h2>Steps</h2><ul><li>Open <i>app</i></li><li>Sign in<ul><li>as admin</li></ul></li></ul><pre>x = {a}</pre><p>See <a href="https://example.com/r?id=1">the report</a>: *nothing* [happens].</p>',
};
const active = { ...opened, 'System.State': 'Active', 'System.AssignedTo': identity(ben) };
const closed = {
  ...active,
  'System.State': 'Closed',
  'System.Title': 'Login fails on Safari',
  'System.AreaPath': 'Fabrikam\\Web\\API',
  'Microsoft.VSTS.Scheduling.StoryPoints': 5,
  'Microsoft.VSTS.Common.ClosedDate': '2024-03-08T16:30:00Z',
};
const bugRevisions = [
  revision(412, 1, '2024-03-04T09:15:02.37Z', identity(ana), opened),
  revision(412, 2, '2024-03-05T14:07:09.123Z', identity(ben), active),
  revision(412, 3, '2024-03-08T16:30:00Z', carla, closed),
];
const bug: SourceItem = { ...(bugRevisions[2] as SourceRevision) };
const bugComments: SourceComment[] = [
  {
    id: 901,
    text: '<p>Repro on <b>Safari</b> 17</p>',
    createdBy: identity(ana),
    createdDate: '2024-03-05T10:00:00.5Z',
  },
  { id: 902, text: '<p>Fixed in build 2024.3</p>', createdBy: carla, createdDate: '2024-03-06T07:59:00Z' },
];
const taskFields = {
  'System.WorkItemType': 'Task',
  'System.Title': 'Check Safari 16',
  'System.State': 'New',
  'System.Parent': 412,
  'System.CreatedBy': identity(ben),
  'System.CreatedDate': '2024-03-05T08:00:00Z',
};
const task: SourceItem = {
  id: 413,
  fields: { ...taskFields, 'System.Id': 413, 'System.ChangedDate': '2024-03-05T08:00:00Z' },
};

/** The builders' file: the bug with its sub-task, in one batch, with two worklogs added (the builder has none). */
function builtFile(): { file: ImportFile; label: string } {
  const issues = [issueOf(bug, bugRevisions, bugComments, mapping), issueOf(task, [], [], mapping)];
  const { batches } = batchesOf(issues, { projectKey: KEY });
  const batch = batches[0];
  if (!batch || batches.length !== 1) throw new Error('expected one batch');
  const first = batch.file.projects[0]?.issues[0];
  if (!first) throw new Error('no issue');
  first.worklogs = [
    { author: ben.jiraAccountId, startDate: '2024-03-06T09:00:00.000+0100', timeSpent: 'PT1H30M' },
    { startDate: '2024-03-07T13:00:00.000+0000', timeSpent: 'PT45M', comment: 'Pairing with *QA*' },
  ];
  return { file: batch.file, label: batch.label };
}

const iso = (value: unknown) => new Date(value as string).toISOString();

describe('the JSON importer', () => {
  it('imports a built file as its admin: dates, people, comments, history and worklogs as Jira answers them', async () => {
    const adminId = await siteAdmin();
    const { file, label } = builtFile();
    const job = await imported(serialiseImportFile(file));
    expect(job).toMatchObject({ status: 'finished', total: 2, done: 2, errors: [] });
    expect(job.issues.map((i) => i.externalId)).toEqual(['412', '413']);
    expect(job.issues.map((i) => i.key)).toEqual([`${KEY}-1`, `${KEY}-2`]);
    expect(job.createdComponents).toEqual([`${KEY}: Web / API`]);
    const bugKey = `${KEY}-1`;
    const built = file.projects[0]?.issues[0];
    if (!built) throw new Error('no issue');

    // Through jira.js, which checks every answer against its schemas.
    const mismatches: string[] = [];
    const jira = createCloudClient(
      createClient({
        host: base,
        auth: { type: 'basic', email: config.jira.email, apiToken: config.jira.apiToken },
        onSchemaMismatch: (report) => mismatches.push(`${report.endpoint}: ${JSON.stringify(report.issues)}`),
      }),
    );
    const issue = await jira.issues.getIssue({ issueIdOrKey: bugKey });
    const f = issue.fields as unknown as Record<string, unknown>;
    expect(iso(f.created)).toBe('2024-03-04T09:15:02.370Z');
    expect(iso(f.updated)).toBe('2024-03-08T16:30:00.000Z');
    expect(iso(f.resolutiondate)).toBe('2024-03-08T16:30:00.000Z');
    expect(f.reporter).toMatchObject({ accountId: ana.jiraAccountId, displayName: ana.displayName });
    expect(f.creator).toMatchObject({ accountId: ana.jiraAccountId });
    expect(f.assignee).toMatchObject({ accountId: ben.jiraAccountId });
    expect(f.status).toMatchObject({ name: 'Done' });
    expect(f.resolution).toMatchObject({ name: 'Done' });
    expect(f.summary).toBe('Login fails on Safari');
    expect(f.labels).toEqual(['auth', 'src-id-412', label]);
    expect((f.components as { name: string }[]).map((c) => c.name)).toEqual(['Web / API']);
    expect(f.customfield_10016).toBe(5);
    expect(f.timespent).toBe(8100);
    expect(f.subtasks).toEqual([expect.objectContaining({ key: `${KEY}-2` })]);
    const sub = await jira.issues.getIssue({ issueIdOrKey: `${KEY}-2` });
    expect((sub.fields as unknown as Record<string, unknown>).parent).toMatchObject({ key: bugKey });
    expect(iso((sub.fields as unknown as Record<string, unknown>).created)).toBe('2024-03-05T08:00:00.000Z');

    // The changelog: the file's history, group by group and item by item.
    const changelog = await jira.issues.getChangeLogs({ issueIdOrKey: bugKey });
    expect(changelog.total).toBe(built.history?.length);
    expect(changelog.isLast).toBe(true);
    expect(
      (changelog.values ?? []).map((h) => ({
        author: h.author?.accountId,
        created: iso(h.created),
        items: (h.items ?? []).map((i) => [i.field, i.fieldtype, i.from, i.fromString, i.to, i.toString]),
      })),
    ).toEqual(
      (built.history ?? []).map((h) => ({
        author: h.author,
        created: iso(h.created.replace(/([+-]\d\d)(\d\d)$/, '$1:$2')),
        items: h.items.map((i) => [i.field, i.fieldType, i.from, i.fromString, i.to, i.toString]),
      })),
    );
    // Carla has no account: her change has no author, as the file says.
    expect(changelog.values?.[1]?.author).toBeUndefined();
    expect(changelog.values?.[0]?.items?.find((i) => i.field === 'status')).toMatchObject({
      fieldId: 'status',
      from: '10000',
      fromString: 'To Do',
      to: '3',
      toString: 'In Progress',
    });
    // Paged.
    const second = await jira.issues.getChangeLogs({ issueIdOrKey: bugKey, startAt: 1, maxResults: 1 });
    expect(second).toMatchObject({ startAt: 1, maxResults: 1, total: 2, isLast: true });
    expect(second.values?.[0]?.id).toBe(changelog.values?.[1]?.id);
    const expanded = await jira.issues.getIssue({ issueIdOrKey: bugKey, expand: 'changelog' });
    expect(expanded.changelog?.histories?.map((h) => h.id)).toEqual(changelog.values?.map((h) => h.id));

    // Comments with their authors and dates; the one without an account says who wrote it.
    const comments = await jira.issueComments.getComments({ issueIdOrKey: bugKey });
    expect(
      (comments.comments ?? []).map((c) => ({ author: c.author?.accountId, created: iso(c.created) })),
    ).toEqual([
      { author: ana.jiraAccountId, created: '2024-03-05T10:00:00.500Z' },
      { author: undefined, created: '2024-03-06T07:59:00.000Z' },
    ]);
    expect(JSON.stringify(comments.comments?.[1]?.body)).toContain('Originally posted by Carla Diaz');

    // Worklogs with their authors and start dates (the importer's offset turned to UTC).
    const worklogs = await jira.issueWorklogs.getIssueWorklog({ issueIdOrKey: bugKey });
    expect(
      (worklogs.worklogs ?? []).map((w) => ({
        author: w.author?.accountId,
        started: iso(w.started),
        seconds: w.timeSpentSeconds,
      })),
    ).toEqual([
      { author: ben.jiraAccountId, started: '2024-03-06T08:00:00.000Z', seconds: 5400 },
      { author: undefined, started: '2024-03-07T13:00:00.000Z', seconds: 2700 },
    ]);
    expect(mismatches).toEqual([]);
    expect(adminId).not.toBe(ana.jiraAccountId);

    // The same answers against the official spec: conformant, except the changelog's null values, which Jira
    // sends (the spec's own example has `"from": null`) where the schema says string.
    const problems: string[] = [];
    for (const path of [
      `/rest/api/3/issue/${bugKey}`,
      `/rest/api/3/issue/${bugKey}/comment`,
      `/rest/api/3/issue/${bugKey}/worklog`,
    ]) {
      const res = await call('GET', path);
      problems.push(
        ...conformance.checkResponse({ method: 'GET', path, status: res.status, body: res.body }),
      );
    }
    expect(problems).toEqual([]);
    const path = `/rest/api/3/issue/${bugKey}/changelog`;
    const raw = await call('GET', path);
    const changelogProblems = conformance.checkResponse({ method: 'GET', path, status: 200, body: raw.body });
    expect(changelogProblems.length).toBeGreaterThan(0);
    expect(
      changelogProblems.every((p) => /\/values\/\d+\/items\/\d+\/(from|to)\w* must be string$/.test(p)),
    ).toBe(true);
  });

  it('renders the wiki markup into ADF, as Jira stores an imported text', async () => {
    await siteAdmin();
    const { file } = builtFile();
    await imported(serialiseImportFile(file));
    const res = await call('GET', `/rest/api/3/issue/${KEY}-1?fields=description,comment`);
    const description = res.body.fields.description;
    expect(adfProblems(description)).toEqual([]);
    expect(description.content.map((n: { type: string }) => n.type)).toEqual([
      'heading',
      'bulletList',
      'codeBlock',
      'paragraph',
    ]);
    expect(description.content[2]).toEqual({
      type: 'codeBlock',
      attrs: {},
      content: [{ type: 'text', text: 'x = {a}' }],
    });
    // Escaped markup shows as the characters written; the link keeps its target.
    expect(description.content[3]).toEqual({
      type: 'paragraph',
      content: [
        { type: 'text', text: 'See ' },
        {
          type: 'text',
          text: 'the report',
          marks: [{ type: 'link', attrs: { href: 'https://example.com/r?id=1' } }],
        },
        { type: 'text', text: ': *nothing* [happens].' },
      ],
    });
    for (const c of res.body.fields.comment.comments) expect(adfProblems(c.body)).toEqual([]);
  });

  it('renders the notation as Jira’s wiki parser does: blocks, marks, tables, colours, mentions, cards, images, emoticons', () => {
    const doc = wikiToAdf(
      [
        'h1. Title \\*',
        '* one',
        '** one.a',
        '**# one.a.1',
        '# two',
        '',
        '',
        'Line one',
        'line two \\\\ three *bold* _em_ -gone- {{code}} [https://x.example/a] a\\_b well-known 2*3*4 C:\\temp x{+}u{+}y',
        '----',
        '{code:java}',
        'int x;',
        '{code}',
        'bq. quoted',
        '||a||b||',
        '|{color:#ff0000}c{color}|[~accountid:abc]|',
        '|* i1',
        '* i2| |',
        '',
        '',
        '!pic.png|alt="P"! [https://j.example/browse/MIG-1|https://j.example/browse/MIG-1|smart-link] (y) &#92;',
      ].join('\n'),
      { attachment: (name) => (name === 'pic.png' ? 'file-1' : undefined), displayName: () => 'Ava' },
    );
    expect(adfProblems(doc)).toEqual([]);
    const t = (text: string, ...marks: string[]) =>
      marks.length > 0
        ? { type: 'text', text, marks: marks.map((type) => ({ type })) }
        : { type: 'text', text };
    const item = (text: string, ...nested: unknown[]) => ({
      type: 'listItem',
      content: [{ type: 'paragraph', content: [t(text)] }, ...nested],
    });
    const cell = (type: string, ...content: unknown[]) => ({ type, attrs: {}, content });
    expect(doc.content).toEqual([
      { type: 'heading', attrs: { level: 1 }, content: [t('Title *')] },
      {
        type: 'bulletList',
        content: [
          item('one', {
            type: 'bulletList',
            content: [
              item('one.a', { type: 'orderedList', attrs: { order: 1 }, content: [item('one.a.1')] }),
            ],
          }),
        ],
      },
      { type: 'orderedList', attrs: { order: 1 }, content: [item('two')] },
      {
        type: 'paragraph',
        content: [
          t('Line one'),
          { type: 'hardBreak' },
          t('line two '),
          { type: 'hardBreak' },
          t(' three '),
          t('bold', 'strong'),
          t(' '),
          t('em', 'em'),
          t(' '),
          t('gone', 'strike'),
          t(' '),
          t('code', 'code'),
          t(' '),
          {
            type: 'text',
            text: 'https://x.example/a',
            marks: [{ type: 'link', attrs: { href: 'https://x.example/a' } }],
          },
          // `\\_` is an escape; `\\t` is not one, and the backslash stays; a braced mark holds inside a word.
          t(' a_b well-known 2*3*4 C:\\temp x'),
          t('u', 'underline'),
          t('y'),
        ],
      },
      { type: 'rule' },
      { type: 'codeBlock', attrs: { language: 'java' }, content: [t('int x;')] },
      { type: 'blockquote', content: [{ type: 'paragraph', content: [t('quoted')] }] },
      {
        type: 'table',
        attrs: { isNumberColumnEnabled: false, layout: 'default' },
        content: [
          // Jira makes a header cell's text strong.
          {
            type: 'tableRow',
            content: [
              cell('tableHeader', { type: 'paragraph', content: [t('a', 'strong')] }),
              cell('tableHeader', { type: 'paragraph', content: [t('b', 'strong')] }),
            ],
          },
          {
            type: 'tableRow',
            content: [
              cell('tableCell', {
                type: 'paragraph',
                content: [
                  { type: 'text', text: 'c', marks: [{ type: 'textColor', attrs: { color: '#ff0000' } }] },
                ],
              }),
              cell('tableCell', {
                type: 'paragraph',
                content: [{ type: 'mention', attrs: { id: 'abc', text: '@Ava' } }],
              }),
            ],
          },
          {
            type: 'tableRow',
            content: [
              cell('tableCell', { type: 'bulletList', content: [item('i1'), item('i2')] }),
              cell('tableCell', { type: 'paragraph', content: [] }),
            ],
          },
        ],
      },
      {
        type: 'mediaSingle',
        attrs: { layout: 'center' },
        content: [
          {
            type: 'media',
            attrs: { type: 'file', id: 'file-1', collection: '', width: 200, height: 183, alt: 'P' },
          },
        ],
      },
      {
        type: 'paragraph',
        content: [
          t(' '),
          { type: 'inlineCard', attrs: { url: 'https://j.example/browse/MIG-1' } },
          t(' '),
          { type: 'emoji', attrs: { id: '1f44d', shortName: ':thumbsup:', text: '👍' } },
          // Jira's parser reads no HTML entity.
          t(' &#92;'),
        ],
      },
    ]);
    expect(wikiToAdf('')).toEqual({ type: 'doc', version: 1, content: [] });
  });

  it('shows the text the builder writes as written: escapes, emoticons, lines that open like a block', () => {
    const words = [
      'C:\\temp\\x.log and a[b] -- *not bold* _nor this_ {code} (y) :) :D ;) [x|y] !z! #1 MIG-2',
      'h1. not a heading',
      'bq. not a quote',
      '* not a list',
      '&#92; &amp; stay as typed',
    ];
    const plain = (doc: { content: { content?: { type: string; text?: string }[] }[] }) =>
      doc.content.map((b) =>
        (b.content ?? [])
          .map((n) => (n.type === 'hardBreak' ? '\n' : (n.text ?? '')))
          .join('')
          .replaceAll('\u200b', ''),
      );
    // One paragraph per line, then the same lines inside one paragraph, after line breaks.
    const escapeHtml = (w: string) => w.replaceAll('&', '&amp;').replaceAll('<', '&lt;');
    const html = words.map((w) => `<p>${escapeHtml(w)}</p>`).join('');
    const doc = wikiToAdf(
      defaultBody({ kind: 'description', item: { id: 1, fields: { 'System.Description': html } } }),
    );
    expect(doc.content.map((b) => b.type)).toEqual(words.map(() => 'paragraph'));
    expect(plain(doc)).toEqual(words);
    const broken = `<p>${words.map(escapeHtml).join('<br>')}</p>`;
    const one = wikiToAdf(
      defaultBody({ kind: 'comment', item: { id: 1, fields: {} }, comment: { id: 2, text: broken } }),
    );
    expect(plain(one)).toEqual([words.join('\n')]);
    for (const w of words.slice(0, 1)) expect(plain(wikiToAdf(escapeWiki(w)))).toEqual([w]);
  });

  it('lets only a Jira administrator in: 401 without credentials, 403 for a project admin', async () => {
    await siteAdmin();
    const text = serialiseImportFile(builtFile().file);
    const anonymous = await http(base, 'POST', '/_sandbox/jira/import/json', { rawBody: text });
    expect(anonymous.status).toBe(401);
    const service = await upload(text, SERVICE);
    expect(service.status).toBe(403);
    expect(service.body).toEqual({ errorMessages: [NOT_A_JIRA_ADMIN], errors: {} });
    expect((await http(base, 'GET', '/_sandbox/jira/issues')).body).toEqual([]);
    // The same account answers "Administer Jira" as the site admin only.
    const permission = async (auth: string) =>
      (await call('GET', `/rest/api/3/mypermissions?projectKey=${KEY}&permissions=ADMINISTER`, auth)).body
        .permissions.ADMINISTER.havePermission;
    expect(await permission(SERVICE)).toBe(false);
    expect(await permission(ADMIN)).toBe(true);
  });

  it('refuses an invalid file with every problem it has, and creates nothing', async () => {
    const adminId = await siteAdmin();
    const notJson = await upload('{"users": [');
    expect(notJson.status).toBe(400);
    expect(notJson.body.errorMessages[1]).toMatch(/^the file is not JSON/);

    const malformed = await upload(
      JSON.stringify({
        users: [],
        links: [],
        projects: [{ key: KEY, issues: [{ externalId: '1', issueType: 'Bug', created: '2024-03-04' }] }],
      }),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body.errorMessages).toEqual([
      'The file was not imported: 2 problems.',
      'projects.0.issues.0.summary: Invalid input: expected string, received undefined',
      'projects.0.issues.0.created: not a date of the form 2012-08-31T17:59:02.161+0100',
    ]);

    const issue = (externalId: string, fields: Record<string, unknown>) => ({
      externalId,
      summary: `Issue ${externalId}`,
      issueType: 'Bug',
      ...fields,
    });
    const refused = await upload(
      JSON.stringify({
        users: [{ name: 'no-such-account' }],
        links: [
          { name: 'Depends', sourceId: '1', destinationId: '2' },
          { name: 'sub-task-link', sourceId: '2', destinationId: '1' },
        ],
        projects: [
          {
            key: KEY,
            issues: [
              issue('1', { status: 'Shipped', priority: 'Urgent', reporter: adminId }),
              issue('2', { issueType: 'Chore', resolution: 'Fixed' }),
              issue('3', {
                issueType: 'Sub-task',
                comments: [{ body: 'x'.repeat(32_768), created: '2024-03-04T09:15:02.370+0000' }],
              }),
            ],
          },
          { key: 'NOPE', issues: [] },
        ],
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errorMessages).toEqual([
      'The file was not imported: 9 problems.',
      'projects.0.issues.0 (externalId 1).status: "Shipped" is not a status of the Bug workflow (To Do, In Progress, In Review, In Testing, Done, Won\'t Do)',
      'projects.0.issues.0 (externalId 1).priority: there is no priority "Urgent" (Highest, High, Medium, Low, Lowest)',
      `projects.0.issues.1 (externalId 2).issueType: there is no issue type "Chore" in project ${KEY}`,
      'projects.0.issues.1 (externalId 2).resolution: there is no resolution "Fixed" (Done, Won\'t Do, Duplicate, Cannot Reproduce)',
      "projects.0.issues.2 (externalId 3).comments.0.body: 32768 characters, over Jira's limit of 32,767",
      'projects.1.key: project NOPE does not exist on this site (the sandbox imports into existing projects only)',
      'links.0 (1 -> 2).name: there is no issue link type "Depends" (Blocks, Cloners, Duplicate, Relates, Tests, or sub-task-link)',
      'externalId 3: a Sub-task needs its parent, a sub-task-link from it',
      'users.0.name: no user with account id no-such-account on this site',
    ]);
    expect((await http(base, 'GET', '/_sandbox/jira/issues')).body).toEqual([]);
  });

  it('creates the issues twice when a file is imported twice, as Jira does', async () => {
    await siteAdmin();
    const { file, label } = builtFile();
    const text = serialiseImportFile(file);
    const first = await imported(text);
    const second = await imported(text);
    expect(first.issues.map((i) => i.key)).toEqual([`${KEY}-1`, `${KEY}-2`]);
    expect(second.issues.map((i) => i.key)).toEqual([`${KEY}-3`, `${KEY}-4`]);
    const found = await call('POST', '/rest/api/3/search/jql', SERVICE, {
      jql: `labels = "${label}" ORDER BY key ASC`,
      fields: ['summary', 'parent'],
    });
    expect(found.status).toBe(200);
    expect(found.body.issues.map((i: { key: string }) => i.key)).toEqual([
      `${KEY}-1`,
      `${KEY}-2`,
      `${KEY}-3`,
      `${KEY}-4`,
    ]);
    // Each copy's sub-task has its own copy's parent.
    expect(found.body.issues[3].fields.parent.key).toBe(`${KEY}-3`);
  });

  it('takes time in proportion to the file, at the importer pace', async () => {
    await siteAdmin();
    expect((await http(base, 'GET', '/_sandbox/jira/importer')).body).toEqual({ msPerIssue: 0 });
    expect((await http(base, 'PUT', '/_sandbox/jira/importer', { body: { msPerIssue: 40 } })).status).toBe(
      200,
    );
    const issues = Array.from({ length: 6 }, (_, i) => ({
      externalId: String(i + 1),
      summary: `Paced ${i + 1}`,
      issueType: 'Task',
    }));
    const started = Date.now();
    const res = await upload(JSON.stringify({ users: [], links: [], projects: [{ key: KEY, issues }] }));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'running', total: 6, done: 0 });
    const job = await finished(res.body.id);
    expect(job.done).toBe(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(6 * 40);
    // A reset restores the profile's pace; the realistic profile's is Atlassian's hour for 1,500 issues.
    await http(base, 'POST', '/_sandbox/reset');
    expect((await http(base, 'GET', '/_sandbox/jira/importer')).body).toEqual({ msPerIssue: 0 });
    expect(REALISTIC_MS_PER_ISSUE * 1500).toBe(3_600_000);
    const realistic = await buildJiraSandbox({ ...config, profile: 'realistic' });
    try {
      const pace = await realistic.app.inject({ method: 'GET', url: '/_sandbox/jira/importer' });
      expect(pace.json()).toEqual({ msPerIssue: REALISTIC_MS_PER_ISSUE });
    } finally {
      await realistic.app.close();
    }
  });

  it('adds the REST writes made after the import to the changelog, by their author', async () => {
    await siteAdmin();
    const { file } = builtFile();
    await imported(serialiseImportFile(file));
    const key = `${KEY}-2`;
    const me = (await call('GET', '/rest/api/3/myself')).body.accountId;
    expect(
      (await call('PUT', `/rest/api/3/issue/${key}`, SERVICE, { fields: { summary: 'Renamed' } })).status,
    ).toBe(204);
    // A comment changes no tracked field: no entry.
    await call('POST', `/rest/api/3/issue/${key}/comment`, SERVICE, {
      body: {
        type: 'doc',
        version: 1,
        content: [{ type: 'paragraph', content: [{ type: 'text', text: 'c' }] }],
      },
    });
    expect(
      (await call('POST', `/rest/api/3/issue/${key}/transitions`, SERVICE, { transition: { id: '21' } }))
        .status,
    ).toBe(204);
    const log = (await call('GET', `/rest/api/3/issue/${key}/changelog`)).body;
    expect(log.total).toBe(2);
    expect(
      log.values.map((v: { author: { accountId: string }; items: unknown[] }) => [
        v.author.accountId,
        v.items,
      ]),
    ).toEqual([
      [
        me,
        [
          {
            field: 'summary',
            fieldtype: 'jira',
            fieldId: 'summary',
            from: null,
            fromString: 'Check Safari 16',
            to: null,
            toString: 'Renamed',
          },
        ],
      ],
      [
        me,
        [
          {
            field: 'status',
            fieldtype: 'jira',
            fieldId: 'status',
            from: '10000',
            fromString: 'To Do',
            to: '3',
            toString: 'In Progress',
          },
        ],
      ],
    ]);
  });

  it('creates an issue whose attachment cannot be downloaded without it, and says so in the job', async () => {
    await siteAdmin();
    const res = await upload(
      JSON.stringify({
        users: [],
        links: [],
        projects: [
          {
            key: KEY,
            issues: [
              {
                externalId: '7',
                summary: 'With a file',
                issueType: 'Task',
                attachments: [
                  {
                    name: 'trace.log',
                    created: '2024-03-04T09:15:02.370+0000',
                    uri: 'https://127.0.0.1:9/trace.log',
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(res.status).toBe(202);
    const job = await finished(res.body.id);
    expect(job.issues.map((i) => i.key)).toEqual([`${KEY}-1`]);
    expect(job.errors).toEqual([
      expect.stringMatching(
        new RegExp(`^${KEY}-1 \\(externalId 7\\): attachment "trace.log" not imported: `),
      ),
    ]);
    expect(
      (await call('GET', `/rest/api/3/issue/${KEY}-1?fields=attachment`)).body.fields.attachment,
    ).toEqual([]);
  });

  it("fetches each attachment's uri from the local service, attaches it with its attacher and date before converting the text (so !name! shows it), and fetches nothing from elsewhere", async () => {
    // Prepare: the local service's copy of a picture, at a loopback address.
    const admin = await siteAdmin();
    const picture = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': picture.length });
      res.end(picture);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    try {
      const issue = (externalId: string, uri: string) => ({
        externalId,
        summary: `Pictured ${externalId}`,
        issueType: 'Task',
        description: 'Before !pic.png! after',
        attachments: [{ name: 'pic.png', attacher: admin, created: '2024-03-04T09:15:02.370+0000', uri }],
      });
      // Act
      const res = await upload(
        JSON.stringify({
          users: [{ name: admin }],
          links: [],
          projects: [
            {
              key: KEY,
              issues: [
                issue('1', `http://127.0.0.1:${port}/api/artifact-links/abc?expires=1&signature=x`),
                issue('2', 'https://example.com/pic.png'),
              ],
            },
          ],
        }),
      );
      expect(res.status).toBe(202);
      const job = await finished(res.body.id);

      // Assess: the first fetched once and attached, with its attacher and date; its image is that file.
      expect(asked).toEqual(['/api/artifact-links/abc?expires=1&signature=x']);
      const got = (await call('GET', `/rest/api/3/issue/${KEY}-1?fields=attachment,description`)).body;
      expect(got.fields.attachment).toEqual([
        expect.objectContaining({
          filename: 'pic.png',
          size: picture.length,
          author: expect.objectContaining({ accountId: admin }),
          created: expect.stringMatching(/^2024-03-04T09:15:02\.370/),
        }),
      ]);
      const content = await fetch(`${base}/rest/api/3/attachment/content/${got.fields.attachment[0].id}`, {
        headers: { Authorization: SERVICE },
        redirect: 'manual',
      });
      const mediaId = /\/file\/([^/]+)\/binary/.exec(content.headers.get('location') ?? '')?.[1];
      expect(mediaId).toBeDefined();
      expect(JSON.stringify(got.fields.description)).toContain(`"id":"${mediaId}"`);
      // The second names an address the sandbox does not fetch: no file, and the job says why.
      expect(job.errors).toEqual([
        `${KEY}-2 (externalId 2): attachment "pic.png" not imported: the sandbox fetches attachments from the local service (loopback) only`,
      ]);
    } finally {
      server.close();
    }
  });

  it('stops a running import when the sandbox is reset', async () => {
    await siteAdmin();
    await http(base, 'PUT', '/_sandbox/jira/importer', { body: { msPerIssue: 30 } });
    const issues = Array.from({ length: 20 }, (_, i) => ({
      externalId: String(i + 1),
      summary: `Long ${i + 1}`,
      issueType: 'Task',
    }));
    const res = await upload(JSON.stringify({ users: [], links: [], projects: [{ key: KEY, issues }] }));
    expect(res.status).toBe(202);
    await http(base, 'POST', '/_sandbox/reset');
    await new Promise((r) => setTimeout(r, 100));
    expect((await http(base, 'GET', '/_sandbox/jira/issues')).body).toEqual([]);
  });
});
