/**
 * A Jira sandbox site with two projects (`SANDBOX_JIRA_OTHER_PROJECT_KEYS`), through real HTTP: the project
 * search lists both; each project numbers its own issue keys, has its own components and Scrum board, and
 * answers its own createmeta; JQL scoped by project (by key or by id) never finds another project's issues.
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({ SANDBOX_JIRA_OTHER_PROJECT_KEYS: 'OPS' });
const MIG = config.jira.projectKey;
const OPS = 'OPS';
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
let base = '';

const call = (method: string, path: string, body?: unknown) =>
  http(base, method, path, { body, headers: { Authorization: AUTH } });

async function create(project: string, summary: string, fields: Record<string, unknown> = {}) {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: project }, issuetype: { name: 'Story' }, summary, ...fields },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; key: string };
}

const keysFound = async (jql: string) => {
  const res = await call('POST', '/rest/api/3/search/jql', { jql, fields: ['key'], maxResults: 100 });
  expect(res.status).toBe(200);
  return (res.body.issues as { key: string }[]).map((i) => i.key).sort();
};

useJiraSandbox(config, (url) => {
  base = url;
});

describe('a site with two projects', () => {
  it('lists both projects in the project search, by key, and each alone by key or id', async () => {
    const all = await call('GET', '/rest/api/3/project/search');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ startAt: 0, maxResults: 50, total: 2, isLast: true });
    expect(all.body.values.map((p: { id: string; key: string }) => [p.key, p.id])).toEqual([
      [MIG, '10000'],
      [OPS, '10001'],
    ]);
    const ops = await call('GET', `/rest/api/3/project/search?keys=${OPS}`);
    expect(ops.body.values).toEqual([
      expect.objectContaining({ id: '10001', key: OPS, name: `${OPS} Migration Target` }),
    ]);
    const byId = await call('GET', '/rest/api/3/project/10001');
    expect(byId.body).toMatchObject({ id: '10001', key: OPS, projectTypeKey: 'software' });
    expect((await call('GET', '/rest/api/3/project/NOPE')).status).toBe(404);
  });

  it('numbers issue keys per project, and each issue names its own project', async () => {
    const first = await create(MIG, 'first of MIG');
    const second = await create(OPS, 'first of OPS');
    const third = await create(MIG, 'second of MIG');
    expect([first.key, second.key, third.key]).toEqual([`${MIG}-1`, `${OPS}-1`, `${MIG}-2`]);
    const read = await call('GET', `/rest/api/3/issue/${second.key}?fields=project`);
    expect(read.body.fields.project).toMatchObject({ id: '10001', key: OPS });
  });

  it("finds a project's issues only in its own JQL, by key or by id", async () => {
    await create(MIG, 'mig one');
    await create(OPS, 'ops one');
    await create(OPS, 'ops two');
    expect(await keysFound(`project = ${OPS}`)).toEqual([`${OPS}-1`, `${OPS}-2`]);
    expect(await keysFound(`project = ${MIG}`)).toEqual([`${MIG}-1`]);
    expect(await keysFound('project = 10000')).toEqual([`${MIG}-1`]);
    expect(await keysFound('project = 10001')).toEqual([`${OPS}-1`, `${OPS}-2`]);
    expect(await keysFound(`project in (${MIG}, ${OPS})`)).toEqual([`${MIG}-1`, `${OPS}-1`, `${OPS}-2`]);
    expect(await keysFound(`project != ${MIG}`)).toEqual([`${OPS}-1`, `${OPS}-2`]);
  });

  it("keeps each project's components to itself: one name in both, another project's not usable", async () => {
    const addComponent = (project: string, name: string) =>
      call('POST', '/rest/api/3/component', { project, name });
    const migUi = await addComponent(MIG, 'UI');
    const opsUi = await addComponent(OPS, 'UI');
    expect([migUi.status, opsUi.status]).toEqual([201, 201]);
    expect(opsUi.body).toMatchObject({ project: OPS, projectId: 10001, name: 'UI' });
    expect((await addComponent(OPS, 'ui')).status).toBe(400);
    const listed = await call('GET', `/rest/api/3/project/${OPS}/components`);
    expect(listed.body.map((c: { id: string }) => c.id)).toEqual([opsUi.body.id]);
    const refused = await call('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: OPS },
        issuetype: { name: 'Story' },
        summary: 'with MIG component',
        components: [{ id: migUi.body.id }],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual({
      components: `Component with id '${migUi.body.id}' does not exist.`,
    });
    const byName = await create(OPS, 'with its own UI', { components: [{ name: 'UI' }] });
    const read = await call('GET', `/rest/api/3/issue/${byName.key}?fields=components`);
    expect(read.body.fields.components.map((c: { id: string }) => c.id)).toEqual([opsUi.body.id]);
  });

  it('gives each project its board (sprints apart) and its own create metadata', async () => {
    const boards = await call('GET', `/rest/agile/1.0/board?projectKeyOrId=${OPS}`);
    expect(boards.body.values).toEqual([
      expect.objectContaining({
        id: 2,
        name: `${OPS} board`,
        location: expect.objectContaining({ projectId: 10001, projectKey: OPS }),
      }),
    ]);
    const sprint = await call('POST', '/rest/agile/1.0/sprint', { name: 'OPS Sprint 1', originBoardId: 2 });
    expect(sprint.status).toBe(201);
    const migSprints = await call('GET', '/rest/agile/1.0/board/1/sprint');
    const opsSprints = await call('GET', '/rest/agile/1.0/board/2/sprint');
    expect(migSprints.body.values).toEqual([]);
    expect(opsSprints.body.values.map((s: { name: string }) => s.name)).toEqual(['OPS Sprint 1']);
    const meta = await call('GET', `/rest/api/3/issue/createmeta/${OPS}/issuetypes/10001?maxResults=200`);
    expect(meta.status).toBe(200);
    const project = meta.body.fields.find((f: { fieldId: string }) => f.fieldId === 'project');
    expect(project.allowedValues).toEqual([expect.objectContaining({ id: '10001', key: OPS })]);
  });
});
