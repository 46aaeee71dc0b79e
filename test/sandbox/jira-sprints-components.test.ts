/**
 * What phase 1's sprint and component setup relies on, in the Jira sandbox over HTTP, each answer checked
 * against Atlassian's OpenAPI descriptions: the project's Scrum board; sprints created (future, with dates and
 * origin board), listed per board in Jira's order, read, and moved future -> active -> closed with Jira's
 * refusals (dates needed to start, one active sprint per board unless parallel sprints, no skipping a state,
 * nothing after closed); the Sprint field on create (a bare id; a closed sprint refused with Jira's words);
 * components created (administrators only, names unique ignoring case), listed and set on issues.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { CUSTOM } from '../../local/sandbox/jira/catalog.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';
import { type Conformance, loadConformance } from '../support/openapi-conformance.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const basic = (email: string, token: string) =>
  `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
const ADMIN = basic(config.jira.email, config.jira.apiToken);
const MEMBER = basic('member@sandbox.example.com', 'member-token');
const SPRINT_FIELD = CUSTOM.sprint;
let base = '';
let conformance: Conformance;
let problems: string[] = [];

/** An API call whose answer must conform to the specs (status documented, body on schema). */
async function call(method: string, path: string, body?: unknown, auth = ADMIN) {
  const res = await http(base, method, path, { body, headers: { Authorization: auth } });
  problems.push(...conformance.checkResponse({ method, path, status: res.status, body: res.body }));
  return res;
}

async function createIssue(fields: Record<string, unknown> = {}) {
  return call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: 'Story' }, summary: 'sample', ...fields },
  });
}

async function board(): Promise<number> {
  const res = await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${KEY}`);
  expect(res.status).toBe(200);
  return res.body.values[0].id;
}

const sprintBody = (name: string, boardId: number, dates = true) => ({
  name,
  originBoardId: boardId,
  ...(dates ? { startDate: '2025-05-26T00:00:00.000Z', endDate: '2025-06-06T23:59:59.000Z' } : {}),
});

beforeAll(async () => {
  conformance = await loadConformance(['jira-platform', 'jira-agile']);
});
useJiraSandbox(config, (url) => {
  base = url;
});

describe('the Scrum board and sprints', () => {
  it('finds the project board and creates future sprints on it, refusing what Jira refuses', async () => {
    problems = [];
    const boards = await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${KEY}`);
    expect(boards.status).toBe(200);
    expect(boards.body.values).toEqual([
      expect.objectContaining({ type: 'scrum', location: expect.objectContaining({ projectKey: KEY }) }),
    ]);
    const boardId = boards.body.values[0].id;

    const created = await call('POST', '/rest/agile/1.0/sprint', {
      ...sprintBody('  Sprint 53  ', boardId),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Sprint 53', // trimmed, as Jira does
      state: 'future',
      originBoardId: boardId,
      startDate: '2025-05-26T00:00:00.000Z',
      endDate: '2025-06-06T23:59:59.000Z',
    });
    const read = await call('GET', `/rest/agile/1.0/sprint/${created.body.id}`);
    expect(read.body).toEqual(created.body);

    const noName = await call('POST', '/rest/agile/1.0/sprint', { originBoardId: boardId });
    expect(noName.status).toBe(400);
    expect(noName.body.errors).toHaveProperty('name');
    const noBoard = await call('POST', '/rest/agile/1.0/sprint', sprintBody('X', 999));
    expect(noBoard.status).toBe(404);
    const backwards = await call('POST', '/rest/agile/1.0/sprint', {
      name: 'Backwards',
      originBoardId: boardId,
      startDate: '2025-06-06T00:00:00.000Z',
      endDate: '2025-05-26T00:00:00.000Z',
    });
    expect(backwards.status).toBe(400);
    expect((await call('GET', '/rest/agile/1.0/sprint/999')).status).toBe(404);

    await http(base, 'PUT', '/_sandbox/jira/accounts', {
      body: { email: 'member@sandbox.example.com', apiToken: 'member-token', projectAdmin: false },
    });
    const member = await call('POST', '/rest/agile/1.0/sprint', sprintBody('Mine', boardId), MEMBER);
    expect(member.status).toBe(403);
    // Jira allows a second sprint of the same name: reusing by name is the migrator's business.
    expect((await call('POST', '/rest/agile/1.0/sprint', sprintBody('Sprint 53', boardId))).status).toBe(201);
    expect(problems).toEqual([]);
  });

  it('moves a sprint future -> active -> closed with Jira refusals, and lists sprints closed, active, future', async () => {
    problems = [];
    const boardId = await board();
    const make = async (name: string, dates = true) =>
      (await call('POST', '/rest/agile/1.0/sprint', sprintBody(name, boardId, dates))).body.id as number;
    const s1 = await make('S1');
    const s2 = await make('S2');
    const undated = await make('Undated', false);
    const update = (id: number, body: unknown) => call('POST', `/rest/agile/1.0/sprint/${id}`, body);

    // A sprint is started before it is closed, and only with both dates.
    const skip = await update(s1, { state: 'closed' });
    expect(skip.status).toBe(400);
    expect(skip.body.errorMessages).toEqual(["A sprint in state 'future' cannot be moved to 'closed'."]);
    expect((await update(undated, { state: 'active' })).status).toBe(400);
    const started = await update(s1, { state: 'active' });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ id: s1, state: 'active', startDate: '2025-05-26T00:00:00.000Z' });

    // One active sprint per board unless parallel sprints are on.
    const second = await update(s2, { state: 'active' });
    expect(second.status).toBe(400);
    expect(second.body.errorMessages).toEqual(['There can only be one active sprint on each board.']);
    expect((await call('GET', `/rest/agile/1.0/sprint/${s2}`)).body.state).toBe('future');

    const closed = await update(s1, { state: 'closed' });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ state: 'closed', completeDate: expect.any(String) });
    // Nothing moves a closed sprint: not back to active, not its dates.
    expect((await update(s1, { state: 'active' })).status).toBe(400);
    expect((await update(s1, { endDate: '2025-07-01T00:00:00.000Z' })).status).toBe(400);
    expect((await update(s2, { completeDate: '2025-06-01T00:00:00.000Z' })).status).toBe(400);

    // Dates given with the start are taken.
    const dated = await update(undated, {
      state: 'active',
      startDate: '2025-06-09T00:00:00.000Z',
      endDate: '2025-06-20T23:59:59.000Z',
    });
    expect(dated.status).toBe(200);
    expect(dated.body).toMatchObject({ state: 'active', endDate: '2025-06-20T23:59:59.000Z' });

    const list = await call('GET', `/rest/agile/1.0/board/${boardId}/sprint`);
    expect(list.body.values.map((s: { name: string; state: string }) => `${s.name} ${s.state}`)).toEqual([
      'S1 closed',
      'Undated active',
      'S2 future',
    ]);
    const paged = await call('GET', `/rest/agile/1.0/board/${boardId}/sprint?maxResults=2&startAt=2`);
    expect(paged.body).toMatchObject({ startAt: 2, maxResults: 2, isLast: true });
    expect(paged.body.values.map((s: { name: string }) => s.name)).toEqual(['S2']);
    const open = await call('GET', `/rest/agile/1.0/board/${boardId}/sprint?state=active,future`);
    expect(open.body.values.map((s: { name: string }) => s.name)).toEqual(['Undated', 'S2']);
    expect((await call('GET', '/rest/agile/1.0/board/999/sprint')).status).toBe(404);
    expect(problems).toEqual([]);
  });

  it('starts a second sprint on the board once parallel sprints are on', async () => {
    problems = [];
    const boardId = await board();
    const a = (await call('POST', '/rest/agile/1.0/sprint', sprintBody('A', boardId))).body.id;
    const b = (await call('POST', '/rest/agile/1.0/sprint', sprintBody('B', boardId))).body.id;
    expect((await call('POST', `/rest/agile/1.0/sprint/${a}`, { state: 'active' })).status).toBe(200);
    const settings = await http(base, 'PUT', '/_sandbox/jira/agile', { body: { parallelSprints: true } });
    expect(settings.body).toEqual({ parallelSprints: true });
    expect((await call('POST', `/rest/agile/1.0/sprint/${b}`, { state: 'active' })).status).toBe(200);
    const active = await call('GET', `/rest/agile/1.0/board/${boardId}/sprint?state=active`);
    expect(active.body.values).toHaveLength(2);
    expect((await http(base, 'PUT', '/_sandbox/jira/agile', { body: { parallel: true } })).status).toBe(400);
    // A reset turns it off again.
    await http(base, 'POST', '/_sandbox/reset');
    expect((await http(base, 'GET', '/_sandbox/jira/agile')).body).toEqual({ parallelSprints: false });
    expect(problems).toEqual([]);
  });
});

describe('the Sprint field on create', () => {
  it('takes a bare sprint id of an open sprint and refuses a closed one with Jira’s words', async () => {
    problems = [];
    const boardId = await board();
    const sprint = (await call('POST', '/rest/agile/1.0/sprint', sprintBody('Open', boardId))).body;
    const done = (await call('POST', '/rest/agile/1.0/sprint', sprintBody('Done', boardId))).body;
    await call('POST', `/rest/agile/1.0/sprint/${done.id}`, { state: 'active' });
    await call('POST', `/rest/agile/1.0/sprint/${done.id}`, { state: 'closed' });

    const created = await createIssue({ [SPRINT_FIELD]: sprint.id });
    expect(created.status).toBe(201);
    const field = (await call('GET', `/rest/api/3/issue/${created.body.key}?fields=${SPRINT_FIELD}`)).body
      .fields[SPRINT_FIELD];
    // Read back as a list of sprints.
    expect(field).toEqual([
      expect.objectContaining({ id: sprint.id, name: 'Open', state: 'future', boardId }),
    ]);

    const intoClosed = await createIssue({ [SPRINT_FIELD]: done.id });
    expect(intoClosed.status).toBe(400);
    expect(intoClosed.body).toEqual({
      errorMessages: [],
      errors: { [SPRINT_FIELD]: 'Issue can be assigned only active or future sprints.' },
    });
    const asList = await createIssue({ [SPRINT_FIELD]: [{ id: sprint.id }] });
    expect(asList.status).toBe(400);
    expect(asList.body.errors[SPRINT_FIELD]).toBe('Number value expected as the Sprint id.');
    expect((await createIssue({ [SPRINT_FIELD]: 99_999 })).status).toBe(400);

    // In a bulk create, only the element naming the closed sprint fails.
    const bulk = await call('POST', '/rest/api/3/issue/bulk', {
      issueUpdates: [sprint.id, done.id].map((id) => ({
        fields: {
          project: { key: KEY },
          issuetype: { name: 'Task' },
          summary: `bulk ${id}`,
          [SPRINT_FIELD]: id,
        },
      })),
    });
    expect(bulk.status).toBe(201);
    expect(bulk.body.issues).toHaveLength(1);
    expect(bulk.body.errors).toEqual([
      expect.objectContaining({
        failedElementNumber: 1,
        elementErrors: expect.objectContaining({
          errors: { [SPRINT_FIELD]: 'Issue can be assigned only active or future sprints.' },
        }),
      }),
    ]);

    // Through the agile API a completed sprint is refused too, in that API's words.
    const move = await call('POST', `/rest/agile/1.0/sprint/${done.id}/issue`, {
      issues: [created.body.key],
    });
    expect(move.status).toBe(400);
    expect(move.body.errorMessages).toEqual(['You must specify a sprint which has not been completed.']);

    // The schema the migrator finds the field by.
    const fields = await call('GET', '/rest/api/3/field');
    expect(fields.body.find((f: { id: string }) => f.id === SPRINT_FIELD)?.schema).toMatchObject({
      type: 'array',
      custom: 'com.pyxis.greenhopper.jira:gh-sprint',
    });
    expect(problems).toEqual([]);
  });
});

describe('components', () => {
  it('creates, lists and reads components, names unique ignoring case, for administrators only', async () => {
    problems = [];
    const created = await call('POST', '/rest/api/3/component', {
      project: KEY,
      name: 'Web / Backend / API',
      description: 'Azure DevOps area Contoso\\Web\\Backend\\API',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Web / Backend / API', project: KEY });
    const dup = await call('POST', '/rest/api/3/component', { project: KEY, name: 'web / backend / api' });
    expect(dup.status).toBe(400);
    expect(dup.body.errors).toHaveProperty('name');
    await http(base, 'PUT', '/_sandbox/jira/accounts', {
      body: { email: 'member@sandbox.example.com', apiToken: 'member-token', projectAdmin: false },
    });
    expect(
      (await call('POST', '/rest/api/3/component', { project: KEY, name: 'Mobile' }, MEMBER)).status,
    ).toBe(403);
    expect((await call('POST', '/rest/api/3/component', { project: 'NOPE', name: 'Mobile' })).status).toBe(
      404,
    );

    const list = await call('GET', `/rest/api/3/project/${KEY}/components`);
    expect(list.body.map((c: { name: string }) => c.name)).toEqual(['Web / Backend / API']);
    expect((await call('GET', `/rest/api/3/component/${created.body.id}`)).body.id).toBe(created.body.id);

    const issue = await createIssue({ components: [{ id: created.body.id }] });
    expect(issue.status).toBe(201);
    const read = await call('GET', `/rest/api/3/issue/${issue.body.key}?fields=components`);
    expect(read.body.fields.components).toEqual([
      expect.objectContaining({ id: created.body.id, name: 'Web / Backend / API' }),
    ]);
    expect((await createIssue({ components: [{ id: '99999' }] })).status).toBe(400);
    expect(problems).toEqual([]);
  });
});
