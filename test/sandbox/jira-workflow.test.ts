/**
 * Jira sandbox workflows through real HTTP: multi-hop transitions, unavailable transitions, resolutions, the
 * Bug workflow's extra status, and a workflow set through the control endpoint.
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
const control = (method: string, path: string, body?: unknown) => http(base, method, path, { body });

async function create(type: string): Promise<string> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: type }, summary: `a ${type}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

async function transitions(key: string): Promise<{ id: string; name: string; to: { name: string } }[]> {
  const res = await call('GET', `/rest/api/3/issue/${key}/transitions`);
  expect(res.status).toBe(200);
  return res.body.transitions;
}

/** Walks to a status by transition names, checking each hop is offered. */
async function walk(key: string, ...targets: string[]): Promise<void> {
  for (const target of targets) {
    const t = (await transitions(key)).find((x) => x.to.name === target);
    expect(t, `a transition to ${target}`).toBeDefined();
    const res = await call('POST', `/rest/api/3/issue/${key}/transitions`, { transition: { id: t?.id } });
    expect(res.status).toBe(204);
  }
}

const statusOf = async (key: string) =>
  (await call('GET', `/rest/api/3/issue/${key}?fields=status,resolution,resolutiondate`)).body.fields;

useJiraSandbox(config, (url) => {
  base = url;
});

describe('transitions', () => {
  it('needs several hops from To Do to Done, and sets the resolution on Done', async () => {
    const key = await create('Story');
    const offered = (await transitions(key)).map((t) => t.to.name).sort();
    expect(offered).toEqual(['In Progress', "Won't Do"]);
    const done = (await transitions(key)).find((t) => t.to.name === 'Done');
    expect(done).toBeUndefined();
    await walk(key, 'In Progress', 'In Review', 'Done');
    const fields = await statusOf(key);
    expect(fields.status.name).toBe('Done');
    expect(fields.status.statusCategory.key).toBe('done');
    expect(fields.resolution.name).toBe('Done');
    expect(fields.resolutiondate).toEqual(expect.any(String));
    // Reopening clears the resolution.
    await walk(key, 'To Do');
    expect((await statusOf(key)).resolution).toBeNull();
  });

  it("refuses a transition that is not available from the current status (400), and offers Won't Do from anywhere", async () => {
    const key = await create('Task');
    const review = await call('POST', `/rest/api/3/issue/${key}/transitions`, { transition: { id: '31' } });
    expect(review.status).toBe(400);
    expect(review.body.errorMessages[0]).toContain("'31'");
    expect((await statusOf(key)).status.name).toBe('To Do');
    await walk(key, 'In Progress', "Won't Do");
    const fields = await statusOf(key);
    expect(fields.resolution.name).toBe("Won't Do");
    expect((await call('POST', `/rest/api/3/issue/${key}/transitions`, {})).status).toBe(400);
    expect((await call('GET', `/rest/api/3/issue/${KEY}-404/transitions`)).status).toBe(404);
  });

  it('takes a Bug through its own In Testing status before Done', async () => {
    const key = await create('Bug');
    await walk(key, 'In Progress', 'In Review');
    expect((await transitions(key)).map((t) => t.to.name)).not.toContain('Done');
    await walk(key, 'In Testing', 'Done');
    expect((await statusOf(key)).status.name).toBe('Done');
  });
});

describe('configurable workflow', () => {
  it('applies a workflow set through PUT /_sandbox/jira/workflow to an issue type', async () => {
    const set = await control('PUT', '/_sandbox/jira/workflow', {
      issueTypes: ['Test'],
      statuses: [
        { name: 'Draft', category: 'new' },
        { name: 'Ready', category: 'indeterminate' },
        { name: 'Done' },
      ],
      initial: 'Draft',
      transitions: [
        { name: 'Approve', from: ['Draft'], to: 'Ready' },
        { name: 'Finish', from: ['Ready'], to: 'Done' },
        { name: 'Back to draft', from: 'any', to: 'Draft' },
      ],
    });
    expect(set.status).toBe(200);
    const key = await create('Test');
    expect((await statusOf(key)).status.name).toBe('Draft');
    expect((await transitions(key)).map((t) => t.name)).toEqual(['Approve']);
    await walk(key, 'Ready', 'Done');
    expect((await statusOf(key)).resolution.name).toBe('Done');
    const statuses = await call('GET', `/rest/api/3/project/${KEY}/statuses`);
    const test = statuses.body.find((t: { name: string }) => t.name === 'Test');
    expect(test.statuses.map((s: { name: string }) => s.name)).toEqual(['Draft', 'Ready', 'Done']);
    // Other issue types keep the default workflow.
    expect((await statusOf(await create('Story'))).status.name).toBe('To Do');

    const bad = await control('PUT', '/_sandbox/jira/workflow', {
      statuses: [{ name: 'Limbo' }],
      initial: 'Limbo',
      transitions: [],
    });
    expect(bad.status).toBe(400);
    // Reset restores the default workflow.
    await control('POST', '/_sandbox/reset');
    expect((await statusOf(await create('Test'))).status.name).toBe('To Do');
  });
});
