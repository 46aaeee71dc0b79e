/**
 * A project's mappings over the sandboxes: suggested from its scan and the Jira project by the engine's own
 * rules, saved only when every target reference exists in the Jira project (each problem listed), confirmed to
 * move the project SCANNED -> MAPPED; roles, tenancy and the 409s before a scan, a target or a saved record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapStates, mapTypes } from '../../functions/domain/mapping/index.ts';
import { typesByUse } from '../../functions/domain/mappings.ts';
import { sourceClient, targetClient } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { sandboxCredentials } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '120', SANDBOX_SEED: '11' });
const KEY = config.jira.projectKey;

const creds = () => sandboxCredentials(sb, config);
const mappingsOf = (id: string) => `/api/projects/${id}/mappings`;

async function newProject(name: string): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function connect(projectId: string, kinds: ('source' | 'target')[] = ['source', 'target']) {
  for (const kind of kinds) {
    const res = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: {
        type: kind === 'source' ? 'azure_devops' : 'jira',
        credentials: creds()[kind],
        projectId,
      },
    });
    expect(res.body.success).toBe(true);
  }
}

async function scan(projectId: string) {
  const res = await app.call('POST', '/api/connectors/scan', {
    token: t.member.token,
    body: { type: 'azure_devops', projectId },
  });
  expect(res.status).toBe(200);
  return res.body as { typeCounts: Record<string, number> };
}

/** A connected, scanned project. */
async function scannedProject(name: string) {
  const id = await newProject(name);
  await connect(id);
  const report = await scan(id);
  return { id, report };
}

const statusOf = async (id: string) =>
  (await app.call('GET', `/api/projects/${id}`, { token: t.member.token })).body.status;

const tablesOf = (r: Record<string, unknown>) => ({
  types: r.types,
  states: r.states,
  fields: r.fields,
  users: r.users,
  linkTypes: r.linkTypes,
});

let main: { id: string; report: { typeCounts: Record<string, number> } };

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  t = await app.createTenant('Mappings');
  main = await scannedProject('To map');
});
afterAll(async () => {
  await app.close();
  await sb.stop();
});

describe('GET /api/projects/{projectId}/mappings', () => {
  it("suggests, before anything is saved, the types and states the engine's rules give", async () => {
    const res = await app.call('GET', mappingsOf(main.id), { token: t.member.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ projectId: main.id, source: 'suggested', confirmedAt: null });

    // The engine's way: mapTypes over the scanned types and the project's issue types, mapStates per type.
    const jira = targetClient(creds().target);
    const ado = sourceClient(creds().source);
    const order = typesByUse(main.report.typeCounts);
    const project = await jira.project(KEY);
    const typeMap = mapTypes(order, project.issueTypes ?? []).map;
    const statesByType = Object.fromEntries(
      await Promise.all(Object.keys(typeMap).map(async (type) => [type, await ado.states(type)] as const)),
    );
    const stateMap = mapStates(statesByType, await jira.projectStatuses(KEY), typeMap).map;

    const types = Object.fromEntries(Object.entries(typeMap).map(([k, v]) => [k, v.name]));
    expect(Object.keys(types).length).toBeGreaterThan(0);
    expect(res.body.types).toEqual(types);
    // Flat by state: the most used type that maps a state decides it.
    const states: Record<string, string> = {};
    for (const type of order)
      for (const [state, target] of Object.entries(stateMap[type] ?? {}))
        states[state] ??= target.status.name;
    expect(Object.keys(states).length).toBeGreaterThan(0);
    expect(res.body.states).toEqual(states);

    // People are matched by e-mail, as the engine does; links by the engine's table.
    expect(Object.keys(res.body.users).length).toBeGreaterThan(0);
    for (const [email, accountId] of Object.entries(res.body.users as Record<string, string | null>)) {
      const found = (await jira.findUsersByEmail(email)).find((u) => u.emailAddress?.toLowerCase() === email);
      expect(accountId).toBe(found?.accountId ?? null);
    }
    expect(res.body.linkTypes).toMatchObject({
      'System.LinkTypes.Related': 'Relates',
      'System.LinkTypes.Dependency-Forward': 'Blocks',
      'System.LinkTypes.Duplicate-Reverse': 'Duplicate',
    });
    expect(res.body.linkTypes['System.LinkTypes.Hierarchy-Forward']).toBeUndefined();
    // A suggestion is not saved: the project has not moved and confirm still wants a save.
    expect(await statusOf(main.id)).toBe('SCANNED');
  });

  it('answers 409 SCAN_REQUIRED before a scan, and CONNECTION_REQUIRED without target credentials', async () => {
    const unscanned = await newProject('Not scanned');
    await connect(unscanned);
    const noScan = await app.call('GET', mappingsOf(unscanned), { token: t.member.token });
    expect(noScan.status).toBe(409);
    expect(noScan.body).toEqual({
      statusCode: 409,
      message: 'Scan the source before mapping',
      error: 'Conflict',
      code: 'SCAN_REQUIRED',
    });

    const sourceOnly = await newProject('Source only');
    await connect(sourceOnly, ['source']);
    await scan(sourceOnly);
    const noTarget = await app.call('GET', mappingsOf(sourceOnly), { token: t.member.token });
    expect(noTarget.status).toBe(409);
    expect(noTarget.body.code).toBe('CONNECTION_REQUIRED');
    expect(noTarget.body.message).toMatch(/^Connect the target before mapping/);
  });
});

describe('PUT /api/projects/{projectId}/mappings', () => {
  it('lists each target reference the Jira project lacks, one sentence each', async () => {
    const res = await app.call('PUT', mappingsOf(main.id), {
      token: t.admin.token,
      body: {
        types: { Bug: 'Defect', Epic: 'Epic' },
        states: { Active: 'Nowhere', New: 'To Do' },
        fields: { 'Custom.Severity': 'customfield_99999', 'System.Title': 'summary' },
        users: { 'ghost@example.com': 'no-such-account', 'nobody@example.com': null },
        linkTypes: { 'System.LinkTypes.Related': 'Sort Of Relates', 'System.LinkTypes.Nonsense': 'Relates' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.message).toEqual([
      `types.Bug: Jira project ${KEY} has no issue type "Defect"`,
      `states.Active: Jira project ${KEY} has no status "Nowhere"`,
      'fields.Custom.Severity: Jira has no field with id "customfield_99999"',
      'users.ghost@example.com: Jira has no user with account id "no-such-account"',
      'linkTypes.System.LinkTypes.Related: Jira has no issue link type "Sort Of Relates"',
      expect.stringMatching(
        /^linkTypes\.System\.LinkTypes\.Nonsense: not an Azure DevOps link relation that becomes a Jira issue link/,
      ),
    ]);
  });

  it('answers a badly shaped body with 400 and every shape problem', async () => {
    const res = await app.call('PUT', mappingsOf(main.id), {
      token: t.owner.token,
      body: { types: { Bug: '' }, users: { 'a@example.com': 7 }, colours: {} },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(Array.isArray(res.body.message)).toBe(true);
    expect(res.body.message).toEqual(
      expect.arrayContaining(['colours is not a known field', 'types.Bug must not be empty']),
    );
    expect(res.body.message.some((m: string) => m.startsWith('users.a@example.com'))).toBe(true);
  });

  it('saves a record that fits, unconfirmed, and GET answers it from then on', async () => {
    const suggestion = (await app.call('GET', mappingsOf(main.id), { token: t.member.token })).body;
    const res = await app.call('PUT', mappingsOf(main.id), {
      token: t.owner.token,
      body: tablesOf(suggestion),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      projectId: main.id,
      ...tablesOf(suggestion),
      source: 'saved',
      confirmedAt: null,
      updatedAt: expect.any(String),
    });
    const again = await app.call('GET', mappingsOf(main.id), { token: t.member.token });
    expect(again.body).toEqual(res.body);
    expect(await statusOf(main.id)).toBe('SCANNED');
  });

  it('is for owners and admins: a member gets 403 on save and confirm', async () => {
    for (const [method, path] of [
      ['PUT', mappingsOf(main.id)],
      ['POST', `${mappingsOf(main.id)}/confirm`],
    ] as const) {
      const res = await app.call(method, path, { token: t.member.token, body: {} });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
  });
});

describe('POST /api/projects/{projectId}/mappings/confirm', () => {
  it('confirms the saved record and moves the project SCANNED -> MAPPED; a later status stays', async () => {
    const res = await app.call('POST', `${mappingsOf(main.id)}/confirm`, { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      projectId: main.id,
      source: 'confirmed',
      confirmedAt: expect.any(String),
      projectStatus: 'MAPPED',
    });
    expect(await statusOf(main.id)).toBe('MAPPED');
    const saved = await app.call('GET', mappingsOf(main.id), { token: t.member.token });
    expect(saved.body).toMatchObject({ source: 'confirmed', confirmedAt: res.body.confirmedAt });

    await app.store.projects.transition(t.tenantId, main.id, ['MAPPED'], 'READY');
    const later = await app.call('POST', `${mappingsOf(main.id)}/confirm`, { token: t.owner.token });
    expect(later.status).toBe(200);
    expect(await statusOf(main.id)).toBe('READY');
  });

  it('answers 409 without a saved record, and 400 when the saved one no longer fits the Jira project', async () => {
    const other = await scannedProject('Unsaved');
    const unsaved = await app.call('POST', `${mappingsOf(other.id)}/confirm`, { token: t.owner.token });
    expect(unsaved.status).toBe(409);
    expect(unsaved.body.code).toBe('MAPPINGS_NOT_SAVED');
    expect(unsaved.body.message).toMatch(/save the mappings first/);

    // As if the Jira project had changed since the save.
    await app.store.mappings.put(t.tenantId, {
      projectId: other.id,
      types: { Bug: 'Defect' },
      states: {},
      fields: {},
      users: {},
      linkTypes: {},
      source: 'saved',
      confirmedAt: null,
      updatedAt: new Date().toISOString(),
    });
    const stale = await app.call('POST', `${mappingsOf(other.id)}/confirm`, { token: t.owner.token });
    expect(stale.status).toBe(400);
    expect(stale.body.message).toEqual([`types.Bug: Jira project ${KEY} has no issue type "Defect"`]);
    expect(await statusOf(other.id)).toBe('SCANNED');
  });

  it('answers 409 SCAN_REQUIRED for a project not scanned yet', async () => {
    const connected = await newProject('Connected only');
    await connect(connected);
    const res = await app.call('POST', `${mappingsOf(connected)}/confirm`, { token: t.owner.token });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('SCAN_REQUIRED');
    expect(await statusOf(connected)).toBe('CONNECTED');
  });
});

describe('tenancy', () => {
  it("answers 404 PROJECT_NOT_FOUND for another tenant's project and an unknown one", async () => {
    const other = await app.createTenant('Nosy');
    const unknown = '01a20392-0000-7000-8000-000000000000';
    for (const id of [main.id, unknown]) {
      for (const [method, path] of [
        ['GET', mappingsOf(id)],
        ['PUT', mappingsOf(id)],
        ['POST', `${mappingsOf(id)}/confirm`],
      ] as const) {
        const body = method === 'PUT' ? { types: {} } : undefined;
        const res = await app.call(method, path, { token: other.owner.token, body });
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(404);
        expect(res.body).toEqual({
          statusCode: 404,
          message: `Project ${id} not found`,
          error: 'Not Found',
          code: 'PROJECT_NOT_FOUND',
        });
      }
    }
  });
});
