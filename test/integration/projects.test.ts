import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_TRANSITIONS } from '../../functions/domain/run-lifecycle.ts';
import { newRun } from '../../functions/services/runs.ts';
import { keys } from '../../functions/store/keys.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';

let app: TestApp;
let t: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.createTenant('Projects');
});
afterAll(async () => app.close());

const valid = {
  name: 'Boards to Jira',
  sourceSystem: 'AZURE_DEVOPS',
  targetSystem: 'JIRA_CLOUD',
  description: 'Q3 move',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** The whole 400 a bad body earns: every problem, one sentence each. */
const badRequest = (message: string[]) => ({
  statusCode: 400,
  message,
  error: 'Bad Request',
  code: 'VALIDATION_FAILED',
});

describe('POST /api/projects', () => {
  it('creates a DRAFT project and answers 201 with the whole record', async () => {
    const res = await app.call('POST', '/api/projects', { token: t.admin.token, body: valid });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      tenantId: t.tenantId,
      name: valid.name,
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
      description: 'Q3 move',
      status: 'DRAFT',
      createdAt: expect.stringMatching(ISO),
    });
  });

  it('takes the description as optional and trims the name', async () => {
    const res = await app.call('POST', '/api/projects', {
      token: t.owner.token,
      body: { name: '  Spaced  ', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Spaced', description: '' });
  });

  it('lists every problem of a bad body and writes nothing', async () => {
    const before = (await app.call('GET', '/api/projects', { token: t.owner.token })).body.length;
    const res = await app.call('POST', '/api/projects', {
      token: t.owner.token,
      body: { name: 'x'.repeat(201), sourceSystem: 'GITHUB', description: 5, tenantId: 'other' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      badRequest([
        'name must be at most 200 characters',
        'sourceSystem must be one of: AZURE_DEVOPS',
        'targetSystem is required',
        'description must be a string',
        'tenantId is not a known field',
      ]),
    );
    expect((await app.call('GET', '/api/projects', { token: t.owner.token })).body.length).toBe(before);
  });

  it('refuses a member with 403 FORBIDDEN', async () => {
    const res = await app.call('POST', '/api/projects', { token: t.member.token, body: valid });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      statusCode: 403,
      message: 'Your role does not allow this action',
      error: 'Forbidden',
      code: 'FORBIDDEN',
    });
  });
});

describe('GET /api/projects', () => {
  it('lists the tenant projects most recent first, as summaries', async () => {
    const tenant = await app.createTenant('Listing');
    const ids: string[] = [];
    for (const name of ['first', 'second', 'third']) {
      ids.push(
        (await app.call('POST', '/api/projects', { token: tenant.owner.token, body: { ...valid, name } }))
          .body.id,
      );
    }
    const res = await app.call('GET', '/api/projects', { token: tenant.member.token });
    expect(res.status).toBe(200);
    expect(res.body.map((p: { id: string }) => p.id)).toEqual(ids.reverse());
    for (const p of res.body) {
      expect(Object.keys(p).sort()).toEqual(['createdAt', 'id', 'name', 'status', 'updatedAt']);
      expect(p.status).toBe('DRAFT');
    }
  });

  it("shows each project's last run, kept up to date by the run's own status changes", async () => {
    const tenant = await app.createTenant('LastRuns');
    const id = (await app.call('POST', '/api/projects', { token: tenant.owner.token, body: valid })).body.id;
    const listed = async () =>
      (
        (await app.call('GET', '/api/projects', { token: tenant.member.token })).body as {
          lastRun?: unknown;
        }[]
      )[0]?.lastRun;
    expect(await listed()).toBeUndefined();

    // Started as the start API does (run and lock in one write), then moved through the run lifecycle.
    const older = newRun(tenant.tenantId, id, 'SAMPLE');
    expect(await app.store.runs.createLocked(older, 'fp')).toBe(true);
    expect(await listed()).toEqual({
      id: older.id,
      type: 'SAMPLE',
      status: older.status,
      createdAt: older.createdAt,
      startedAt: older.startedAt,
      finishedAt: null,
    });
    expect(await app.store.runs.transition(tenant.tenantId, older.id, RUN_TRANSITIONS.pause)).toBe(true);
    expect(await listed()).toMatchObject({ id: older.id, status: 'PAUSED' });

    // A newer run takes the ended-or-not run's place; a late change of the older run does not bring it back.
    const newer = newRun(tenant.tenantId, id, 'FULL');
    expect(await app.store.runs.createLocked(newer, 'fp', older.id)).toBe(true);
    expect(await listed()).toMatchObject({ id: newer.id, type: 'FULL', status: 'RUNNING' });
    const finishedAt = new Date().toISOString();
    expect(
      await app.store.runs.transition(tenant.tenantId, older.id, RUN_TRANSITIONS.cancel, { finishedAt }),
    ).toBe(true);
    expect(await listed()).toMatchObject({ id: newer.id, status: 'RUNNING', finishedAt: null });
    expect(
      await app.store.runs.transition(tenant.tenantId, newer.id, RUN_TRANSITIONS.complete, { finishedAt }),
    ).toBe(true);
    expect(await listed()).toMatchObject({ id: newer.id, status: 'COMPLETED', finishedAt });
  });

  it("ends a run with its project in one write: no reader sees the run ended and the project's view not", async () => {
    const tenant = await app.createTenant('OneWrite');
    const id = (await app.call('POST', '/api/projects', { token: tenant.owner.token, body: valid })).body.id;
    const projectKey = keys.project(tenant.tenantId, id);
    const db = app.store.table.db;
    const send = db.send.bind(db) as (command: unknown) => Promise<Record<string, unknown>>;
    await send(
      new UpdateCommand({
        TableName: app.store.table.name,
        Key: projectKey,
        UpdateExpression: 'SET #s = :m',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':m': 'MIGRATING' },
      }),
    );
    const run = newRun(tenant.tenantId, id, 'FULL');
    expect(await app.store.runs.createLocked(run, 'fp')).toBe(true);

    // After every write the run's end makes, what a reader of the run and of the project sees.
    const seen: { run: unknown; project: unknown; lastRun: unknown; lock: boolean }[] = [];
    const read = async (Key: { pk: string; sk: string }) =>
      ((await send(new GetCommand({ TableName: app.store.table.name, Key, ConsistentRead: true }))).Item ??
        undefined) as Record<string, unknown> | undefined;
    db.send = (async (command: { constructor: { name: string } }) => {
      const out = await send(command);
      if (!/^(Get|Query|BatchGet)Command$/.test(command.constructor.name)) {
        const [r, p, l] = await Promise.all([
          read(keys.run(tenant.tenantId, run.id)),
          read(projectKey),
          read(keys.runLock(tenant.tenantId, id)),
        ]);
        seen.push({
          run: r?.status,
          project: p?.status,
          lastRun: (p?.lastRun as { status?: unknown } | undefined)?.status,
          lock: l !== undefined,
        });
      }
      return out;
    }) as typeof db.send;
    try {
      const finishedAt = new Date().toISOString();
      expect(
        await app.store.runs.transition(tenant.tenantId, run.id, RUN_TRANSITIONS.complete, { finishedAt }),
      ).toBe(true);
    } finally {
      db.send = send as typeof db.send;
    }
    const ended = seen.filter((s) => s.run === 'COMPLETED');
    expect(ended.length).toBeGreaterThan(0);
    for (const s of ended)
      expect(s).toEqual({ run: 'COMPLETED', project: 'COMPLETED', lastRun: 'COMPLETED', lock: false });
    expect(seen.filter((s) => s.run !== 'COMPLETED')).toEqual(
      seen
        .filter((s) => s.run !== 'COMPLETED')
        .map(() => ({ run: 'RUNNING', project: 'MIGRATING', lastRun: 'RUNNING', lock: true })),
    );
  });

  it('answers [] for a tenant without projects', async () => {
    const tenant = await app.createTenant('Empty');
    expect((await app.call('GET', '/api/projects', { token: tenant.owner.token })).body).toEqual([]);
  });
});

describe('GET /api/projects/{projectId}', () => {
  it('answers the whole project, with no scan summary or quote yet', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const res = await app.call('GET', `/api/projects/${created.id}`, { token: t.member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created,
      deliveryMode: 'rest',
      importBatchSize: 1500,
      updatedAt: created.createdAt,
      scanSummary: null,
      quote: null,
      connections: { source: null, target: null },
    });
  });

  it('answers the same 404 for an unknown and a malformed id', async () => {
    for (const id of ['01a20392-47d2-739f-aa8d-04294d45e41e', 'not-a-uuid', '%27%20OR%201%3D1']) {
      const res = await app.call('GET', `/api/projects/${id}`, { token: t.owner.token });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, error: 'Not Found', code: 'PROJECT_NOT_FOUND' });
    }
  });
});

describe('PUT /api/projects/{projectId}/delivery', () => {
  const put = (id: string, body: unknown, token = t.owner.token) =>
    app.call('PUT', `/api/projects/${id}/delivery`, { token, body });

  it('sets Jira import with its batch size, and the project answers it; back to REST keeps the size', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const set = await put(created.id, { deliveryMode: 'jira-import', importBatchSize: 250 }, t.admin.token);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ projectId: created.id, deliveryMode: 'jira-import', importBatchSize: 250 });
    const read = await app.call('GET', `/api/projects/${created.id}`, { token: t.member.token });
    expect(read.body).toMatchObject({ deliveryMode: 'jira-import', importBatchSize: 250 });
    expect(read.body.updatedAt >= created.createdAt).toBe(true);

    const back = await put(created.id, { deliveryMode: 'rest' });
    expect(back.body).toEqual({ projectId: created.id, deliveryMode: 'rest', importBatchSize: 250 });
    const again = await app.call('GET', `/api/projects/${created.id}`, { token: t.owner.token });
    expect(again.body).toMatchObject({ deliveryMode: 'rest', importBatchSize: 250 });
  });

  it('lists every problem of a bad body with 400, and changes nothing', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const cases: [unknown, string[]][] = [
      [
        { deliveryMode: 'csv', importBatchSize: 1501, projectId: 'x' },
        [
          'deliveryMode must be one of: rest, jira-import',
          'importBatchSize must be at most 1500',
          'projectId is not a known field',
        ],
      ],
      [{ importBatchSize: 0 }, ['deliveryMode is required', 'importBatchSize must be at least 1']],
    ];
    for (const [body, message] of cases) {
      const res = await put(created.id, body);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: badRequest(message) });
    }
    const read = await app.call('GET', `/api/projects/${created.id}`, { token: t.owner.token });
    expect(read.body).toMatchObject({ deliveryMode: 'rest', importBatchSize: 1500 });
  });

  it("answers 404 for another tenant's project, and leaves it as it was", async () => {
    const other = await app.createTenant('Elsewhere');
    const theirs = (await app.call('POST', '/api/projects', { token: other.owner.token, body: valid })).body;
    // Found first, then parsed: a bad body for another tenant's project is the same 404.
    for (const body of [{ deliveryMode: 'jira-import' }, { deliveryMode: 'csv' }]) {
      const res = await put(theirs.id, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        statusCode: 404,
        message: `Project ${theirs.id} not found`,
        error: 'Not Found',
        code: 'PROJECT_NOT_FOUND',
      });
    }
    const read = await app.call('GET', `/api/projects/${theirs.id}`, { token: other.owner.token });
    expect(read.body).toMatchObject({ deliveryMode: 'rest' });
  });

  it('refuses a member with 403, who still reads the mode', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const res = await put(created.id, { deliveryMode: 'jira-import' }, t.member.token);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    const read = await app.call('GET', `/api/projects/${created.id}`, { token: t.member.token });
    expect(read.body).toMatchObject({ deliveryMode: 'rest', importBatchSize: 1500 });
  });

  it('refuses a change while a run is active for the project with 409', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const run = newRun(t.tenantId, created.id, 'FULL');
    expect(await app.store.runs.createLocked(run, 'fp')).toBe(true);
    const res = await put(created.id, { deliveryMode: 'jira-import' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      statusCode: 409,
      message: `Migration run ${run.id} is active for this project: its delivery mode changes once the run ends`,
      error: 'Conflict',
      code: 'MIGRATION_ALREADY_RUNNING',
    });
  });
});

describe('DELETE /api/projects/{projectId}', () => {
  it('answers 204 and removes the project with everything stored under it', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    const { pk } = keys.projectChildren(t.tenantId, created.id);
    // Later issues store runs, mappings, scans, id maps, events and credentials under the project.
    for (const sk of ['RUN#1', 'MAPPINGS', 'SCAN#1', 'IDMAP#42', 'EVENT#1#1', 'CREDENTIALS#source']) {
      await app.db.send(new PutCommand({ TableName: app.tableName, Item: { pk, sk, data: 'x' } }));
    }
    const res = await app.call('DELETE', `/api/projects/${created.id}`, { token: t.admin.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const left = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    );
    expect(left.Items).toEqual([]);
    expect((await app.call('GET', `/api/projects/${created.id}`, { token: t.owner.token })).status).toBe(404);
    expect((await app.call('DELETE', `/api/projects/${created.id}`, { token: t.owner.token })).status).toBe(
      404,
    );
  });

  it('refuses a member', async () => {
    const created = (await app.call('POST', '/api/projects', { token: t.owner.token, body: valid })).body;
    expect((await app.call('DELETE', `/api/projects/${created.id}`, { token: t.member.token })).status).toBe(
      403,
    );
    expect((await app.call('GET', `/api/projects/${created.id}`, { token: t.member.token })).status).toBe(
      200,
    );
  });
});

describe('the gateway', () => {
  it('answers health without a token', async () => {
    const res = await app.call('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok' });
  });

  it('answers unknown paths and wrong methods in the error format', async () => {
    const missing = await app.call('GET', '/api/nothing-here');
    expect(missing.body).toEqual({
      statusCode: 404,
      message: 'Cannot GET /api/nothing-here',
      error: 'Not Found',
      code: 'ROUTE_NOT_FOUND',
    });
    const wrong = await app.call('PUT', '/api/projects');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST, GET');
    expect(wrong.body.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const res = await app.call('POST', '/api/projects', {
      token: t.owner.token,
      body: { ...valid, description: 'x'.repeat(1024 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
