/**
 * Jira sandbox agile API through real HTTP: the sprint lifecycle (create, assign issues, start, close, assignment
 * to a closed sprint refused), the 50-issue cap, the Sprint field and JQL, and moving issues to an epic.
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

async function create(type: string, summary = type): Promise<{ id: string; key: string }> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: type }, summary },
  });
  expect(res.status).toBe(201);
  return res.body;
}

useJiraSandbox(config, (url) => {
  base = url;
});

describe('sprints', () => {
  it('takes a full update (PUT): name and state required, what is left out is cleared', async () => {
    const board = (await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${KEY}`)).body.values[0];
    const created = await call('POST', '/rest/agile/1.0/sprint', {
      name: 'Planned',
      originBoardId: board.id,
      goal: 'Old goal',
      startDate: '2026-02-02T09:00:00.000Z',
      endDate: '2026-02-16T17:00:00.000Z',
    });
    const id = created.body.id;
    const noName = await call('PUT', `/rest/agile/1.0/sprint/${id}`, { state: 'future' });
    expect(noName.status).toBe(400);
    expect(noName.body.errors.name).toBeTruthy();
    const full = await call('PUT', `/rest/agile/1.0/sprint/${id}`, { name: 'Replanned', state: 'future' });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ name: 'Replanned', state: 'future' });
    expect(full.body.goal ?? '').toBe('');
    expect(full.body.startDate).toBeUndefined();
    expect(full.body.endDate).toBeUndefined();
    // A partial update (POST) leaves the rest alone.
    const partial = await call('POST', `/rest/agile/1.0/sprint/${id}`, { goal: 'New goal' });
    expect(partial.body).toMatchObject({ name: 'Replanned', goal: 'New goal' });
  });

  it('runs the lifecycle: create (future), assign, start (active), close, and refuses a closed sprint', async () => {
    const board = (await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${KEY}`)).body.values[0];
    const created = await call('POST', '/rest/agile/1.0/sprint', {
      name: 'Iteration 1',
      originBoardId: board.id,
      goal: 'MVP',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Iteration 1',
      state: 'future',
      originBoardId: board.id,
      goal: 'MVP',
    });
    const sprintId = created.body.id;

    const a = await create('Story');
    const b = await create('Bug');
    const assign = await call('POST', `/rest/agile/1.0/sprint/${sprintId}/issue`, { issues: [a.key, b.id] });
    expect(assign.status).toBe(204);
    const sprintField = (await call('GET', `/rest/api/3/issue/${a.key}?fields=customfield_10020`)).body.fields
      .customfield_10020;
    expect(sprintField).toEqual([
      expect.objectContaining({ id: sprintId, name: 'Iteration 1', state: 'future' }),
    ]);
    const inSprint = await call(
      'GET',
      `/rest/api/3/search/jql?jql=${encodeURIComponent(`sprint = ${sprintId}`)}&fields=key`,
    );
    expect(inSprint.body.issues.map((i: { key: string }) => i.key).sort()).toEqual([a.key, b.key].sort());

    // Starting needs dates.
    const noDates = await call('POST', `/rest/agile/1.0/sprint/${sprintId}`, { state: 'active' });
    expect(noDates.status).toBe(400);
    const started = await call('POST', `/rest/agile/1.0/sprint/${sprintId}`, {
      state: 'active',
      startDate: '2024-05-01T09:00:00.000Z',
      endDate: '2024-05-15T17:00:00.000Z',
    });
    expect(started.status).toBe(200);
    expect(started.body.state).toBe('active');
    // Future -> closed directly, or closed before active, is not a valid move.
    const other = (
      await call('POST', '/rest/agile/1.0/sprint', { name: 'Iteration 2', originBoardId: board.id })
    ).body;
    expect((await call('POST', `/rest/agile/1.0/sprint/${other.id}`, { state: 'closed' })).status).toBe(400);

    const closed = await call('POST', `/rest/agile/1.0/sprint/${sprintId}`, { state: 'closed' });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ state: 'closed', completeDate: expect.any(String) });
    expect((await call('GET', `/rest/agile/1.0/sprint/${sprintId}`)).body.state).toBe('closed');

    const refused = await call('POST', `/rest/agile/1.0/sprint/${sprintId}/issue`, {
      issues: [(await create('Task')).key],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errorMessages).toHaveLength(1);
    expect((await call('POST', `/rest/agile/1.0/sprint/${sprintId}`, { name: 'renamed' })).status).toBe(400);

    const list = await call('GET', `/rest/agile/1.0/board/${board.id}/sprint`);
    expect(list.body.values.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['Iteration 1', 'closed'],
      ['Iteration 2', 'future'],
    ]);
    const future = await call('GET', `/rest/agile/1.0/board/${board.id}/sprint?state=future`);
    expect(future.body.values).toHaveLength(1);

    // Moving on to the next sprint keeps the closed one in the issue's Sprint history.
    expect((await call('POST', `/rest/agile/1.0/sprint/${other.id}/issue`, { issues: [a.key] })).status).toBe(
      204,
    );
    const history = (await call('GET', `/rest/api/3/issue/${a.key}?fields=customfield_10020`)).body.fields
      .customfield_10020;
    expect(history.map((s: { id: number }) => s.id)).toEqual([sprintId, other.id]);
  });

  it('moves at most 50 issues at once and refuses unknown sprints', async () => {
    const sprint = (await call('POST', '/rest/agile/1.0/sprint', { name: 'Big', originBoardId: 1 })).body;
    const keys = Array.from({ length: 51 }, (_, i) => `${KEY}-${i + 1}`);
    const bulk = await call('POST', '/rest/api/3/issue/bulk', {
      issueUpdates: keys.slice(0, 50).map((k) => ({
        fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary: k },
      })),
    });
    expect(bulk.status).toBe(201);
    await create('Task');
    expect((await call('POST', `/rest/agile/1.0/sprint/${sprint.id}/issue`, { issues: keys })).status).toBe(
      400,
    );
    expect(
      (await call('POST', `/rest/agile/1.0/sprint/${sprint.id}/issue`, { issues: keys.slice(0, 50) })).status,
    ).toBe(204);
    expect((await call('POST', '/rest/agile/1.0/sprint/9999/issue', { issues: [keys[0]] })).status).toBe(404);
  });
});

describe('epics', () => {
  it('moves standard issues under an epic through the agile epic endpoint', async () => {
    const epic = await create('Epic');
    const story = await create('Story');
    const task = await create('Task');
    const moved = await call('POST', `/rest/agile/1.0/epic/${epic.key}/issue`, {
      issues: [story.key, task.id],
    });
    expect(moved.status).toBe(204);
    for (const k of [story.key, task.key]) {
      expect((await call('GET', `/rest/api/3/issue/${k}?fields=parent`)).body.fields.parent.key).toBe(
        epic.key,
      );
    }
    const children = await call(
      'GET',
      `/rest/api/3/search/jql?jql=${encodeURIComponent(`parent = ${epic.key}`)}`,
    );
    expect(children.body.issues).toHaveLength(2);
    // Not an epic, or not a standard issue: refused.
    expect(
      (await call('POST', `/rest/agile/1.0/epic/${story.key}/issue`, { issues: [task.key] })).status,
    ).toBe(400);
    const other = await create('Epic');
    expect(
      (await call('POST', `/rest/agile/1.0/epic/${epic.key}/issue`, { issues: [other.key] })).status,
    ).toBe(400);
    expect((await call('POST', `/rest/agile/1.0/epic/${KEY}-999/issue`, { issues: [task.key] })).status).toBe(
      404,
    );
    // And out again.
    expect((await call('POST', '/rest/agile/1.0/epic/none/issue', { issues: [task.key] })).status).toBe(204);
    expect(
      (await call('GET', `/rest/api/3/issue/${task.key}?fields=parent`)).body.fields.parent,
    ).toBeUndefined();
  });
});
