/**
 * GET /api/projects/{projectId}/target-metadata over the real HTTP path and the Jira sandbox: what the
 * connected Jira project offers the mappings editor's pickers, the same as Jira itself answers; another
 * tenant's project a 404, no target connection a 409, a token Jira refuses the connection test's message;
 * every role may read it, as it may read the mappings, and only owners and admins (who map people) get the
 * assignable users' e-mail addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targetClient } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '10', SANDBOX_SEED: '21' });
const KEY = config.jira.projectKey;
const metadataOf = (id: string) => `/api/projects/${id}/target-metadata`;

async function newProject(name: string): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Tests the target credentials for the project, which stores them. */
async function connectTarget(projectId: string, credentials = sandboxCredentials(sb, config).target) {
  const res = await app.call('POST', '/api/connectors/test', {
    token: t.owner.token,
    body: { type: 'jira', credentials, projectId },
  });
  expect(res.body.success).toBe(true);
}

let connected: string;

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  t = await app.createTenant('Pickers');
  connected = await newProject('Connected');
  await connectTarget(connected);
});
afterAll(async () => {
  await app.close();
  await sb.stop();
});

describe('GET /api/projects/{projectId}/target-metadata', () => {
  it("answers what the connected Jira project offers, as Jira's own API gives it", async () => {
    const res = await app.call('GET', metadataOf(connected), { token: t.owner.token });
    expect(res.status).toBe(200);

    const jira = targetClient(sandboxCredentials(sb, config).target);
    const project = await jira.project(KEY);
    const workflows = await jira.projectStatuses(KEY);
    expect(res.body).toMatchObject({ projectKey: KEY, projectName: project.name });
    expect(res.body.issueTypes.map((i: { name: string }) => i.name)).toEqual(
      (project.issueTypes ?? []).map((i) => i.name),
    );
    // Each issue type with its own workflow's statuses.
    for (const type of res.body.issueTypes as { id: string; statuses: { name: string }[] }[]) {
      const expected = workflows.find((w) => w.id === type.id)?.statuses.map((s) => s.name);
      expect(type.statuses.map((s) => s.name)).toEqual(expected);
    }
    const allStatuses = new Set(workflows.flatMap((w) => w.statuses.map((s) => s.name)));
    expect(new Set(res.body.statuses.map((s: { name: string }) => s.name))).toEqual(allStatuses);
    expect(res.body.statuses.length).toBe(allStatuses.size);
    expect(res.body.statuses[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      category: expect.stringMatching(/^(new|indeterminate|done)$/),
    });

    expect(res.body.priorities.map((p: { name: string }) => p.name)).toEqual(
      (await jira.priorities(project.id)).map((p) => p.name),
    );
    expect(res.body.linkTypes.map((l: { name: string }) => l.name)).toEqual(
      (await jira.linkTypes()).map((l) => l.name),
    );
    // Custom fields come with their type, so a picker can say what a field holds.
    const fields = await jira.fields();
    expect(res.body.fields).toHaveLength(fields.length);
    const custom = fields.find((f) => f.custom === true);
    expect(custom).toBeDefined();
    expect(res.body.fields).toContainEqual({
      id: custom?.id,
      name: custom?.name,
      custom: true,
      type: custom?.schema?.type,
      items: custom?.schema?.items ?? null,
      customType: custom?.schema?.custom,
    });
    // The people a person mapping can point at: Jira's users, with their e-mail where Jira shows it.
    const jiraPerson = sandboxPeople(config.seed).find((p) => p.on === 'jira');
    expect(res.body.users).toContainEqual({
      accountId: jiraPerson?.jiraAccountId,
      displayName: jiraPerson?.displayName,
      emailAddress: jiraPerson?.email,
    });
    const adoOnly = sandboxPeople(config.seed).find((p) => p.on === 'ado');
    expect(res.body.users.map((u: { emailAddress: string }) => u.emailAddress)).not.toContain(adoOnly?.email);

    // Kept a minute: the editor's next read is the same answer, not six more Jira calls.
    const again = await app.call('GET', metadataOf(connected), { token: t.admin.token });
    expect(again.body.fetchedAt).toBe(res.body.fetchedAt);
  });

  it("answers another tenant's project with a 404", async () => {
    const other = await app.createTenant('Other');
    const res = await app.call('GET', metadataOf(connected), { token: other.owner.token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'PROJECT_NOT_FOUND' });
  });

  it('answers 409 CONNECTION_REQUIRED before the target is connected', async () => {
    const id = await newProject('Not connected');
    const res = await app.call('GET', metadataOf(id), { token: t.member.token });
    expect(res.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      code: 'CONNECTION_REQUIRED',
      message: `Connect the target before mapping: project ${id} has no stored Jira credentials`,
    });
  });

  it("answers the connection test's message when Jira refuses the stored token", async () => {
    const account = { email: 'pickers@sandbox.example.com', projectAdmin: true };
    await sandboxControl(sb.jira.url, 'PUT', '/_sandbox/jira/accounts', { ...account, apiToken: 'first' });
    const id = await newProject('Revoked');
    await connectTarget(id, {
      ...sandboxCredentials(sb, config).target,
      email: account.email,
      api_token: 'first',
    });
    // The account's token is replaced on the Jira side: the stored one is refused.
    await sandboxControl(sb.jira.url, 'PUT', '/_sandbox/jira/accounts', { ...account, apiToken: 'second' });
    const res = await app.call('GET', metadataOf(id), { token: t.member.token });
    expect(res.body).toEqual({
      statusCode: 502,
      error: 'Bad Gateway',
      code: 'TARGET_TRACKER_ERROR',
      message: 'target connection failed with 401',
    });
  });

  it("gives owners and admins the assignable users' e-mail addresses, a member their ids and names only", async () => {
    const id = await newProject('People');
    await connectTarget(id);
    const jiraPerson = sandboxPeople(config.seed).find((p) => p.on === 'jira');
    // The member reads first and then after the others: what is kept for a minute is the same for everyone.
    const first = await app.call('GET', metadataOf(id), { token: t.member.token });
    const owner = await app.call('GET', metadataOf(id), { token: t.owner.token });
    const admin = await app.call('GET', metadataOf(id), { token: t.admin.token });
    const member = await app.call('GET', metadataOf(id), { token: t.member.token });
    for (const res of [owner, admin])
      expect(res.body.users).toContainEqual({
        accountId: jiraPerson?.jiraAccountId,
        displayName: jiraPerson?.displayName,
        emailAddress: jiraPerson?.email,
      });
    expect(owner.body.users.some((u: { emailAddress: string | null }) => u.emailAddress === null)).toBe(
      false,
    );
    for (const res of [first, member]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...owner.body,
        users: owner.body.users.map((u: { accountId: string; displayName: string }) => ({
          accountId: u.accountId,
          displayName: u.displayName,
          emailAddress: null,
        })),
      });
    }
  });

  it('lets every role read it (as the mappings), and no one without a token', async () => {
    for (const user of [t.owner, t.admin, t.member]) {
      expect((await app.call('GET', metadataOf(connected), { token: user.token })).status).toBe(200);
    }
    const anonymous = await app.call('GET', metadataOf(connected));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('UNAUTHORIZED');
  });
});
