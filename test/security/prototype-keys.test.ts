/**
 * Keys that name Object.prototype members (`constructor`, `toString`, `valueOf`, `hasOwnProperty`,
 * `__proto__`) are ordinary names in a mapping table or a run's overrides: each is either refused with a 400
 * that says which key, or kept as the plain entry it is. Never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '30', SANDBOX_SEED: '5' });
const NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'];
const orchestrator = new RecordingOrchestrator();
let sb: RunningSandboxes;
let app: TestApp;
let t: TestTenant;
let projectId: string;

/** A JSON text with `key` as an own key (a JS object literal would set the prototype for `__proto__`). */
const tableWith = (key: string, value: string | null) => `{${JSON.stringify(key)}:${JSON.stringify(value)}}`;

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  setOrchestrator(orchestrator);
  t = await app.createTenant('Proto');
  const project = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name: 'Proto', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  projectId = project.body.id;
  for (const [kind, type] of [
    ['source', 'azure_devops'],
    ['target', 'jira'],
  ] as const) {
    const res = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type, credentials: sandboxCredentials(sb, config)[kind], projectId },
    });
    expect(res.body.success).toBe(true);
  }
  expect(
    (
      await app.call('POST', '/api/connectors/scan', {
        token: t.owner.token,
        body: { type: 'azure_devops', projectId },
      })
    ).status,
  ).toBe(200);
  // Confirmed mappings make the project MAPPED: a SAMPLE dry run may start, so its body is read in full.
  const suggested = (await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token }))
    .body;
  const { types, states, fields, users, linkTypes } = suggested;
  const saved = await app.call('PUT', `/api/projects/${projectId}/mappings`, {
    token: t.owner.token,
    body: { types, states, fields, users, linkTypes },
  });
  expect(saved.status).toBe(200);
  expect(
    (await app.call('POST', `/api/projects/${projectId}/mappings/confirm`, { token: t.owner.token })).status,
  ).toBe(200);
});
afterAll(async () => {
  setOrchestrator(undefined);
  await app.close();
  await sb.stop();
});

const reserved = (field: string) =>
  `${field}.__proto__: not allowed as a name (reserved in JavaScript objects)`;

describe('PUT /api/projects/{projectId}/mappings', () => {
  it('keeps constructor, toString, valueOf and hasOwnProperty as plain names', async () => {
    const types = Object.fromEntries(NAMES.map((k) => [k, 'Task']));
    const users = Object.fromEntries(NAMES.map((k) => [k, null]));
    const res = await app.call('PUT', `/api/projects/${projectId}/mappings`, {
      token: t.owner.token,
      body: { types, users },
    });
    expect(res.status, res.text).toBe(200);
    const saved = (await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token }))
      .body;
    expect(saved.types).toEqual(types);
    expect(saved.users).toEqual(Object.fromEntries(NAMES.map((k) => [k.toLowerCase(), null])));
  });

  it('answers such names with the ordinary 400 when their target does not exist', async () => {
    const res = await app.call('PUT', `/api/projects/${projectId}/mappings`, {
      token: t.owner.token,
      body: { states: Object.fromEntries(NAMES.map((k) => [k, 'Nowhere'])) },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(
      NAMES.map((k) => `states.${k}: Jira project ${config.jira.projectKey} has no status "Nowhere"`),
    );
  });

  for (const table of ['types', 'states', 'fields', 'users', 'linkTypes'])
    it(`refuses __proto__ as a ${table} name with a 400 that names it`, async () => {
      const res = await app.call('PUT', `/api/projects/${projectId}/mappings`, {
        token: t.owner.token,
        rawBody: `{${JSON.stringify(table)}:${tableWith('__proto__', table === 'users' ? null : 'Task')}}`,
      });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: {
          statusCode: 400,
          error: 'Bad Request',
          code: 'VALIDATION_FAILED',
          message: [reserved(table)],
        },
      });
    });
});

describe('POST /api/migrations/project/{projectId}/start', () => {
  const startWith = (options: string) => {
    const text = JSON.stringify({ ...sandboxStartBody(sb, config), type: 'SAMPLE' }).replace(
      '"options":{',
      `"options":{"dry_run":true,${options},`,
    );
    return app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: t.owner.token,
      rawBody: text,
    });
  };

  for (const option of ['type_overrides', 'state_overrides'])
    it(`refuses __proto__ in ${option} with a 400 that names it`, async () => {
      const res = await startWith(`${JSON.stringify(option)}:${tableWith('__proto__', 'Task')}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toEqual([reserved(`enginePayload.options.${option}`)]);
    });

  it('starts with overrides named constructor, toString, valueOf and hasOwnProperty, kept as given', async () => {
    const overrides = JSON.stringify(Object.fromEntries(NAMES.map((k) => [k, 'Task'])));
    const res = await startWith(`"type_overrides":${overrides},"state_overrides":${overrides}`);
    expect(res.status, res.text).toBe(200);
    const run = await app.store.runs.get(t.tenantId, res.body.id);
    expect(run?.options?.typeOverrides).toEqual(JSON.parse(overrides));
    expect(run?.options?.stateOverrides).toEqual(JSON.parse(overrides));
    expect(orchestrator.starts.map((s) => s.runId)).toContain(res.body.id);
  });
});
