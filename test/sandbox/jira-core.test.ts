/**
 * Jira sandbox through real HTTP: authentication and the administrator role, project metadata, issue create
 * (single and bulk), validation with Jira's messages, read with a field selection, edit, users, components.
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
let base = '';

const basic = (email: string, token: string) =>
  `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
const SERVICE = basic(config.jira.email, config.jira.apiToken);

const call = (method: string, path: string, body?: unknown, authorization: string | null = SERVICE) =>
  http(base, method, path, { body, headers: authorization ? { Authorization: authorization } : {} });

const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});
const story = (summary: string, extra: Record<string, unknown> = {}) => ({
  fields: { project: { key: KEY }, issuetype: { name: 'Story' }, summary, ...extra },
});

useJiraSandbox(config, (url) => {
  base = url;
});

describe('authentication and roles', () => {
  it('answers 401 in Jira shape for missing or wrong credentials', async () => {
    const missing = await call('GET', '/rest/api/3/myself', undefined, null);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ errorMessages: [expect.any(String)], errors: {} });
    const wrong = await call('GET', '/rest/api/3/myself', undefined, basic(config.jira.email, 'nope'));
    expect(wrong.status).toBe(401);
    const me = await call('GET', '/rest/api/3/myself');
    expect(me.status).toBe(200);
    expect(me.body.emailAddress).toBe(config.jira.email);
  });

  it('refuses a non-admin account on administrator-only operations and reports the role via mypermissions', async () => {
    const created = await fetch(`${base}/_sandbox/jira/accounts`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'dev@contoso.example.com', apiToken: 'dev-token', projectAdmin: false }),
    });
    expect(created.status).toBe(200);
    const dev = basic('dev@contoso.example.com', 'dev-token');
    const perms = `/rest/api/3/mypermissions?projectKey=${KEY}&permissions=ADMINISTER_PROJECTS,CREATE_ISSUES`;
    const devPerms = await call('GET', perms, undefined, dev);
    expect(devPerms.status).toBe(200);
    expect(devPerms.body.permissions.ADMINISTER_PROJECTS.havePermission).toBe(false);
    expect(devPerms.body.permissions.CREATE_ISSUES.havePermission).toBe(true);
    const adminPerms = await call('GET', perms);
    expect(adminPerms.body.permissions.ADMINISTER_PROJECTS.havePermission).toBe(true);

    const component = await call('POST', '/rest/api/3/component', { name: 'API', project: KEY }, dev);
    expect(component.status).toBe(403);
    expect(component.body.errorMessages).toHaveLength(1);
    const sprint = await call('POST', '/rest/agile/1.0/sprint', { name: 'S1', originBoardId: 1 }, dev);
    expect(sprint.status).toBe(403);
    // Project roles: the spec and the service answer 401 to a non-administrator here.
    expect((await call('GET', `/rest/api/3/project/${KEY}/role`, undefined, dev)).status).toBe(401);
    expect((await call('GET', `/rest/api/3/project/${KEY}/role`)).status).toBe(200);
    // The non-admin can still create issues.
    expect((await call('POST', '/rest/api/3/issue', story('by dev'), dev)).status).toBe(201);
    // Reset forgets accounts made through the control endpoint.
    await http(base, 'POST', '/_sandbox/reset');
    expect((await call('GET', '/rest/api/3/myself', undefined, dev)).status).toBe(401);
  });
});

describe('project metadata', () => {
  it('serves create metadata per project and issue type, paged, with the fields a create takes', async () => {
    const all = await call('GET', `/rest/api/3/issue/createmeta/${KEY}/issuetypes`);
    expect(all.status).toBe(200);
    const names = all.body.issueTypes.map((t: { name: string }) => t.name);
    expect(all.body.total).toBe(names.length);
    const page = await call('GET', `/rest/api/3/issue/createmeta/${KEY}/issuetypes?startAt=1&maxResults=2`);
    expect(page.body).toMatchObject({ startAt: 1, maxResults: 2, total: names.length });
    expect(page.body.issueTypes.map((t: { name: string }) => t.name)).toEqual(names.slice(1, 3));
    const subtask = all.body.issueTypes.find((t: { subtask: boolean }) => t.subtask);
    const fields = await call('GET', `/rest/api/3/issue/createmeta/${KEY}/issuetypes/${subtask.id}`);
    const required = fields.body.fields
      .filter((f: { required: boolean }) => f.required)
      .map((f: { fieldId: string }) => f.fieldId);
    expect(required.sort()).toEqual(['issuetype', 'parent', 'project', 'summary']);
    expect(fields.body.fields.map((f: { fieldId: string }) => f.fieldId)).not.toContain('customfield_10019');
    expect((await call('GET', `/rest/api/3/issue/createmeta/${KEY}/issuetypes/99999`)).status).toBe(404);
    expect((await call('GET', '/rest/api/3/issue/createmeta/NOPE/issuetypes')).status).toBe(404);
  });

  it('serves the project with its issue types and answers 404 for an unknown key', async () => {
    const project = await call('GET', `/rest/api/3/project/${KEY}`);
    expect(project.status).toBe(200);
    const levels = Object.fromEntries(
      project.body.issueTypes.map((t: { name: string; hierarchyLevel: number }) => [
        t.name,
        t.hierarchyLevel,
      ]),
    );
    expect(levels).toEqual({ Epic: 1, Story: 0, Task: 0, Bug: 0, 'Sub-task': -1, Test: 0 });
    const missing = await call('GET', '/rest/api/3/project/NOPE');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      errorMessages: ["No project could be found with key 'NOPE'."],
      errors: {},
    });
    const types = await call('GET', `/rest/api/3/issuetype/project?projectId=${project.body.id}`);
    expect(types.body.map((t: { name: string }) => t.name)).toContain('Test');
  });

  it('lists statuses per issue type with categories, fields, priorities and resolutions', async () => {
    const statuses = await call('GET', `/rest/api/3/project/${KEY}/statuses`);
    const bug = statuses.body.find((t: { name: string }) => t.name === 'Bug');
    const names = bug.statuses.map((s: { name: string }) => s.name);
    expect(names).toContain('In Testing');
    const done = bug.statuses.find((s: { name: string }) => s.name === 'Done');
    expect(done.statusCategory.key).toBe('done');
    const fields = await call('GET', '/rest/api/3/field');
    const byName = Object.fromEntries(fields.body.map((f: { name: string; id: string }) => [f.name, f.id]));
    expect(byName['Story Points']).toMatch(/^customfield_100\d\d$/);
    expect(byName.Sprint).toMatch(/^customfield_100\d\d$/);
    expect(byName['Time tracking']).toBe('timetracking');
    const priorities = await call('GET', '/rest/api/3/priority');
    expect(priorities.body.map((p: { name: string }) => p.name)).toEqual([
      'Highest',
      'High',
      'Medium',
      'Low',
      'Lowest',
    ]);
    const resolutions = await call('GET', '/rest/api/3/resolution');
    expect(resolutions.body.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['Done', "Won't Do"]),
    );
    const boards = await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${KEY}`);
    expect(boards.body.values).toHaveLength(1);
    expect(boards.body.values[0].type).toBe('scrum');
  });
});

describe('issue create, read, edit', () => {
  it('creates an issue with every kind of field and reads it back', async () => {
    const people = sandboxPeople(config.seed).filter((p) => p.on !== 'ado');
    const assignee = people[0]!;
    const reporter = people[1]!;
    const component = await call('POST', '/rest/api/3/component', { name: 'Backend', project: KEY });
    expect(component.status).toBe(201);
    const created = await call(
      'POST',
      '/rest/api/3/issue',
      story('Migrate login', {
        description: doc('From ADO #123'),
        labels: ['src-id-123', 'ado'],
        priority: { name: 'High' },
        assignee: { accountId: assignee.jiraAccountId },
        reporter: { accountId: reporter.jiraAccountId },
        components: [{ id: component.body.id }],
        customfield_10016: 5,
        timetracking: { originalEstimate: '3h', remainingEstimate: '1h 30m' },
        duedate: '2030-01-31',
        customfield_10040: 'https://dev.azure.com/org/project/_workitems/edit/123',
      }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      key: `${KEY}-1`,
      self: expect.stringContaining('/rest/api/3/issue/'),
    });
    const got = await call('GET', `/rest/api/3/issue/${created.body.key}`);
    const f = got.body.fields;
    expect(f.summary).toBe('Migrate login');
    expect(f.description).toEqual(doc('From ADO #123'));
    expect(f.labels).toEqual(['src-id-123', 'ado']);
    expect(f.priority.name).toBe('High');
    expect(f.assignee.accountId).toBe(assignee.jiraAccountId);
    expect(f.reporter.accountId).toBe(reporter.jiraAccountId);
    expect(f.components.map((c: { name: string }) => c.name)).toEqual(['Backend']);
    expect(f.customfield_10016).toBe(5);
    expect(f.timetracking).toMatchObject({
      originalEstimate: '3h',
      remainingEstimate: '1h 30m',
      originalEstimateSeconds: 10800,
    });
    expect(f.duedate).toBe('2030-01-31');
    expect(f.status.name).toBe('To Do');
    expect(f.resolution).toBeNull();
    expect(f.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$/);

    const some = await call('GET', `/rest/api/3/issue/${created.body.key}?fields=summary,labels`);
    expect(Object.keys(some.body.fields).sort()).toEqual(['labels', 'summary']);
    expect((await call('GET', `/rest/api/3/issue/${KEY}-999`)).status).toBe(404);
  });

  it('dumps every issue for assertions (GET /_sandbox/jira/issues), all fields or the ones asked for', async () => {
    for (const summary of ['One', 'Two']) {
      const made = await call('POST', '/rest/api/3/issue', story(summary, { description: doc(summary) }));
      expect(made.status).toBe(201);
    }
    const all = (await http(base, 'GET', '/_sandbox/jira/issues')).body;
    expect(all.map((i: { key: string }) => i.key)).toEqual([`${KEY}-1`, `${KEY}-2`]);
    expect(all[0].fields).toMatchObject({ summary: 'One', description: doc('One'), labels: [] });
    const some = (await http(base, 'GET', '/_sandbox/jira/issues?fields=summary,labels')).body;
    expect(some).toEqual(
      all.map((i: { fields: { summary: string; labels: string[] } }) => ({
        ...i,
        fields: { summary: i.fields.summary, labels: i.fields.labels },
      })),
    );
  });

  it('validates like Jira: ADF, summary length, labels with spaces, unknown references', async () => {
    const bad = (extra: Record<string, unknown>, summary = 'x') =>
      call('POST', '/rest/api/3/issue', story(summary, extra));
    const plain = await bad({ description: 'plain text' });
    expect(plain.status).toBe(400);
    expect(plain.body.errors.description).toMatch(/Atlassian Document/);
    // A structurally wrong document (a text node directly under doc) is refused by Atlassian's validator.
    const misplaced = await bad({
      description: { type: 'doc', version: 1, content: [{ type: 'text', text: 'x' }] },
    });
    expect(misplaced.status).toBe(400);
    expect(misplaced.body.errors.description).toBeDefined();
    const long = await bad({}, 'x'.repeat(256));
    // Jira Cloud's current wording (older sites said "Summary must be less than 255 characters.").
    expect(long.body).toEqual({
      errorMessages: [],
      errors: { summary: "Summary can't exceed 255 characters." },
    });
    expect((await bad({}, 'x'.repeat(255))).status).toBe(201);
    const spaced = await bad({ labels: ['has space'] });
    expect(spaced.status).toBe(400);
    expect(spaced.body.errors.labels).toContain('has space');
    expect((await bad({ priority: { name: 'Urgent' } })).body.errors.priority).toBeDefined();
    expect((await bad({ assignee: { accountId: 'nobody' } })).body.errors.assignee).toBeDefined();
    const type = await call('POST', '/rest/api/3/issue', {
      fields: { project: { key: KEY }, issuetype: { name: 'Feature' }, summary: 'x' },
    });
    expect(type.status).toBe(400);
    expect(type.body.errors.issuetype).toBeDefined();
    expect((await bad({ customfield_99999: 1 })).body.errors.customfield_99999).toMatch(/cannot be set/);
    expect(
      (await bad({ timetracking: { originalEstimate: 'soon' } })).body.errors.timetracking,
    ).toBeDefined();
  });

  it('sets parents by hierarchy: story under epic, sub-task under story, anything else refused', async () => {
    const epic = await call('POST', '/rest/api/3/issue', {
      fields: { project: { key: KEY }, issuetype: { name: 'Epic' }, summary: 'Epic' },
    });
    const child = await call('POST', '/rest/api/3/issue', story('child', { parent: { key: epic.body.key } }));
    expect(child.status).toBe(201);
    const sub = await call('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: KEY },
        issuetype: { name: 'Sub-task' },
        summary: 'sub',
        parent: { id: child.body.id },
      },
    });
    expect(sub.status).toBe(201);
    const wrong = await call('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: KEY },
        issuetype: { name: 'Sub-task' },
        summary: 'sub',
        parent: { key: epic.body.key },
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.parent).toBeDefined();
    const storyUnderStory = await call(
      'POST',
      '/rest/api/3/issue',
      story('x', { parent: { key: child.body.key } }),
    );
    expect(storyUnderStory.status).toBe(400);
    const orphan = await call('POST', '/rest/api/3/issue', {
      fields: { project: { key: KEY }, issuetype: { name: 'Sub-task' }, summary: 'orphan' },
    });
    expect(orphan.status).toBe(400);
    const got = await call('GET', `/rest/api/3/issue/${child.body.key}?fields=parent,subtasks`);
    expect(got.body.fields.parent.key).toBe(epic.body.key);
    expect(got.body.fields.subtasks.map((s: { key: string }) => s.key)).toEqual([sub.body.key]);
  });

  it('records a parent change in the child’s changelog as Jira Cloud does: IssueParentAssociation, no fieldId', async () => {
    const epic = (summary: string) =>
      call('POST', '/rest/api/3/issue', {
        fields: { project: { key: KEY }, issuetype: { name: 'Epic' }, summary },
      });
    const [first, second] = [(await epic('First epic')).body, (await epic('Second epic')).body];
    const child = (await call('POST', '/rest/api/3/issue', story('moved', { parent: { key: first.key } })))
      .body;

    // Moved under the other epic, then out of any (an edit of its summary alone records no parent item)
    const moves = [{ parent: { key: second.key } }, { summary: 'moved, renamed' }, { parent: null }];
    for (const fields of moves)
      expect((await call('PUT', `/rest/api/3/issue/${child.key}`, { fields })).status).toBe(204);

    const log = await call('GET', `/rest/api/3/issue/${child.key}/changelog`);
    const items = (log.body.values as { items: Record<string, unknown>[] }[]).map((v) => v.items);
    expect(items).toEqual([
      [
        {
          field: 'IssueParentAssociation',
          fieldtype: 'jira',
          from: String(first.id),
          fromString: first.key,
          to: String(second.id),
          toString: second.key,
        },
      ],
      [expect.objectContaining({ field: 'summary', fieldId: 'summary' })],
      [
        {
          field: 'IssueParentAssociation',
          fieldtype: 'jira',
          from: String(second.id),
          fromString: second.key,
          to: null,
          toString: null,
        },
      ],
    ]);
    // The parents' own changelogs say nothing of it
    const ofFirst = await call('GET', `/rest/api/3/issue/${first.key}/changelog`);
    expect(ofFirst.body.total).toBe(0);
  });

  it('bulk-creates up to 50, reporting failed elements by number while creating the rest', async () => {
    const result = await call('POST', '/rest/api/3/issue/bulk', {
      issueUpdates: [story('one'), story('two', { labels: ['bad label'] }), story('three')],
    });
    expect(result.status).toBe(201);
    expect(result.body.issues.map((i: { key: string }) => i.key)).toHaveLength(2);
    expect(result.body.errors).toEqual([
      {
        status: 400,
        failedElementNumber: 1,
        elementErrors: { errorMessages: [], errors: { labels: expect.stringContaining('bad label') } },
      },
    ]);
    const allBad = await call('POST', '/rest/api/3/issue/bulk', { issueUpdates: [story('x'.repeat(300))] });
    expect(allBad.status).toBe(400);
    expect(allBad.body.issues).toEqual([]);
    const tooMany = await call('POST', '/rest/api/3/issue/bulk', {
      issueUpdates: Array.from({ length: 51 }, (_, i) => story(`n${i}`)),
    });
    expect(tooMany.status).toBe(400);
    const fifty = await call('POST', '/rest/api/3/issue/bulk', {
      issueUpdates: Array.from({ length: 50 }, (_, i) => story(`n${i}`)),
    });
    expect(fifty.status).toBe(201);
    expect(fifty.body.issues).toHaveLength(50);
    const all = await (await fetch(`${base}/_sandbox/jira/issues`)).json();
    expect(all).toHaveLength(52);
  });

  it('edits with fields and update operations (204) and validates edits', async () => {
    const created = await call('POST', '/rest/api/3/issue', story('before', { labels: ['a'] }));
    const edited = await call('PUT', `/rest/api/3/issue/${created.body.key}`, {
      fields: { summary: 'after', customfield_10016: 8 },
      update: { labels: [{ add: 'b' }, { remove: 'a' }] },
    });
    expect(edited.status).toBe(204);
    const got = await call(
      'GET',
      `/rest/api/3/issue/${created.body.id}?fields=summary,labels,customfield_10016`,
    );
    expect(got.body.fields).toEqual({ summary: 'after', labels: ['b'], customfield_10016: 8 });
    const bad = await call('PUT', `/rest/api/3/issue/${created.body.key}`, {
      fields: { description: 'text' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.description).toBeDefined();
  });

  it('adds a comment through an edit (update.comment), with the edit, and refuses an invalid one whole', async () => {
    const created = await call('POST', '/rest/api/3/issue', story('commented'));
    const key = created.body.key as string;
    const edited = await call('PUT', `/rest/api/3/issue/${key}`, {
      fields: { summary: 'commented on' },
      update: { comment: [{ add: { body: doc('first') } }, { add: { body: doc('second') } }] },
    });
    expect(edited.status).toBe(204);
    const me = (await call('GET', '/rest/api/3/myself')).body.accountId;
    const list = await call('GET', `/rest/api/3/issue/${key}/comment`);
    expect(list.body.total).toBe(2);
    expect(list.body.comments.map((c: { body: unknown }) => c.body)).toEqual([doc('first'), doc('second')]);
    expect(list.body.comments[0].author.accountId).toBe(me);
    expect((await call('GET', `/rest/api/3/issue/${key}?fields=summary`)).body.fields.summary).toBe(
      'commented on',
    );

    // An invalid comment refuses the whole edit: nothing is written.
    for (const [comment, message] of [
      [[{ add: { body: 'plain text' } }], 'Comment body is not valid!'],
      [[{ add: {} }], 'Comment body can not be empty!'],
      [[{ set: { body: doc('x') } }], "Operation 'set' is not supported for field 'comment'."],
    ] as const) {
      const refused = await call('PUT', `/rest/api/3/issue/${key}`, {
        fields: { summary: 'not written' },
        update: { comment },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ errorMessages: [], errors: { comment: message } });
    }
    expect((await call('GET', `/rest/api/3/issue/${key}/comment`)).body.total).toBe(2);
    expect((await call('GET', `/rest/api/3/issue/${key}?fields=summary`)).body.fields.summary).toBe(
      'commented on',
    );
  });
});

describe('issue delete and methods', () => {
  const create = async (summary: string, type: string, parent?: string) => {
    const res = await call('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: KEY },
        issuetype: { name: type },
        summary,
        labels: ['to-delete'],
        ...(parent ? { parent: { key: parent } } : {}),
      },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };
  const keysInSearch = async () =>
    (
      await call('POST', '/rest/api/3/search/jql', { jql: 'labels = "to-delete"', fields: ['key'] })
    ).body.issues
      .map((i: { key: string }) => i.key)
      .sort();

  it("deletes an issue's sub-tasks only with deleteSubtasks=true; the issues then 404 and leave search", async () => {
    const epic = await create('epic', 'Epic');
    const parent = await create('parent', 'Story', epic.key);
    const sub = await create('sub', 'Sub-task', parent.key);
    const other = await create('other', 'Task');
    expect(
      (
        await call('POST', '/rest/api/3/issueLink', {
          type: { name: 'Blocks' },
          inwardIssue: { key: other.key },
          outwardIssue: { key: parent.key },
        })
      ).status,
    ).toBe(201);

    const refusal = {
      errorMessages: [
        `The issue '${parent.key}' has subtasks.  You must specify the 'deleteSubtasks' parameter to delete this issue and all its subtasks.`,
      ],
      errors: {},
    };
    for (const query of ['', '?deleteSubtasks=false']) {
      const refused = await call('DELETE', `/rest/api/3/issue/${parent.key}${query}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(refusal);
    }
    expect((await call('GET', `/rest/api/3/issue/${parent.key}`)).status).toBe(200);

    const deleted = await call('DELETE', `/rest/api/3/issue/${parent.id}?deleteSubtasks=true`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    for (const gone of [parent, sub]) {
      const res = await call('GET', `/rest/api/3/issue/${gone.key}`);
      expect(res.status).toBe(404);
      expect(res.body.errorMessages).toEqual([
        'Issue does not exist or you do not have permission to see it.',
      ]);
    }
    expect(await keysInSearch()).toEqual([epic.key, other.key].sort());
    // The link went with it, and the epic keeps no child.
    const linked = await call('GET', `/rest/api/3/issue/${other.key}?fields=issuelinks`);
    expect(linked.body.fields.issuelinks).toEqual([]);
    expect((await call('DELETE', `/rest/api/3/issue/${parent.key}`)).status).toBe(404);
  });

  it('deletes an issue without sub-tasks (deleteSubtasks has no effect), leaving its other children parentless', async () => {
    const epic = await create('epic', 'Epic');
    const child = await create('child', 'Story', epic.key);
    expect((await call('DELETE', `/rest/api/3/issue/${epic.key}`)).status).toBe(204);
    const orphan = await call('GET', `/rest/api/3/issue/${child.key}?fields=parent`);
    expect(orphan.status).toBe(200);
    expect(orphan.body.fields.parent).toBeUndefined();
    const lone = await create('lone', 'Task');
    expect((await call('DELETE', `/rest/api/3/issue/${lone.key}?deleteSubtasks=true`)).status).toBe(204);
    expect(await keysInSearch()).toEqual([child.key]);
  });

  it('refuses to delete for an account without the administrator role', async () => {
    const target = await create('kept', 'Task');
    await http(base, 'PUT', '/_sandbox/jira/accounts', {
      body: { email: 'dev@contoso.example.com', apiToken: 'dev-token', projectAdmin: false },
    });
    const refused = await call(
      'DELETE',
      `/rest/api/3/issue/${target.key}`,
      undefined,
      basic('dev@contoso.example.com', 'dev-token'),
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      errorMessages: ['You do not have permission to delete issues in this project.'],
      errors: {},
    });
    expect((await call('GET', `/rest/api/3/issue/${target.key}`)).status).toBe(200);
  });

  it('answers 405 with an empty body and the allowed methods to a known path asked with another method', async () => {
    const issue = await create('x', 'Task');
    const patched = await call('PATCH', `/rest/api/3/issue/${issue.key}`, { fields: { summary: 'y' } });
    expect(patched.status).toBe(405);
    expect(patched.text).toBe('');
    expect(patched.headers.allow).toBe('DELETE, GET, HEAD, PUT');
    const posted = await call('POST', '/rest/api/3/myself', {});
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET, HEAD');
    expect((await call('DELETE', '/rest/api/3/search/jql')).headers.allow).toBe('GET, HEAD, POST');
    // Nothing was changed, and an unknown path is still a 404 in Jira's shape.
    expect((await call('GET', `/rest/api/3/issue/${issue.key}?fields=summary`)).body.fields.summary).toBe(
      'x',
    );
    const unknown = await call('GET', '/rest/api/3/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorMessages).toEqual(['null for uri: /rest/api/3/nothing-here']);
  });
});

describe('users and components', () => {
  it('finds users by e-mail, with the address in the answer', async () => {
    const person = sandboxPeople(config.seed).find((p) => p.on === 'jira')!;
    const found = await call('GET', `/rest/api/3/user/search?query=${encodeURIComponent(person.email)}`);
    expect(found.status).toBe(200);
    expect(found.body).toEqual([
      expect.objectContaining({
        accountId: person.jiraAccountId,
        emailAddress: person.email,
        displayName: person.displayName,
      }),
    ]);
    const adoOnly = sandboxPeople(config.seed).find((p) => p.on === 'ado')!;
    expect(
      (await call('GET', `/rest/api/3/user/search?query=${encodeURIComponent(adoOnly.email)}`)).body,
    ).toEqual([]);
    expect((await call('GET', '/rest/api/3/user/search')).status).toBe(400);
  });

  it('lists the users assignable in the project (active accounts), paged, filtered by query', async () => {
    const all = await call('GET', `/rest/api/3/user/assignable/search?project=${KEY}&maxResults=1000`);
    expect(all.status).toBe(200);
    const jiraPeople = sandboxPeople(config.seed).filter((p) => p.on !== 'ado');
    const ids = (all.body as { accountId: string }[]).map((u) => u.accountId);
    for (const p of jiraPeople) expect(ids).toContain(p.jiraAccountId);
    expect(ids).not.toContain(sandboxPeople(config.seed).find((p) => p.on === 'ado')?.jiraAccountId);
    const person = jiraPeople[0]!;
    const one = await call(
      'GET',
      `/rest/api/3/user/assignable/search?project=${KEY}&query=${encodeURIComponent(person.email)}`,
    );
    expect(one.body).toEqual([expect.objectContaining({ accountId: person.jiraAccountId })]);
    const page = await call(
      'GET',
      `/rest/api/3/user/assignable/search?project=${KEY}&startAt=1&maxResults=2`,
    );
    expect(page.body.map((u: { accountId: string }) => u.accountId)).toEqual(ids.slice(1, 3));
    // Jira needs a project or an issue to know what "assignable" means, and knows only its own projects.
    expect((await call('GET', '/rest/api/3/user/assignable/search')).status).toBe(400);
    expect((await call('GET', '/rest/api/3/user/assignable/search?project=NOPE')).status).toBe(404);
  });

  it('creates components (names unique) and lists them on the project', async () => {
    expect(
      (await call('POST', '/rest/api/3/component', { name: 'UI', project: KEY, description: 'Front end' }))
        .status,
    ).toBe(201);
    const dup = await call('POST', '/rest/api/3/component', { name: 'ui', project: KEY });
    expect(dup.status).toBe(400);
    expect(dup.body.errors.name).toBeDefined();
    const list = await call('GET', `/rest/api/3/project/${KEY}/components`);
    expect(list.body.map((c: { name: string; description: string }) => [c.name, c.description])).toEqual([
      ['UI', 'Front end'],
    ]);
  });
});
