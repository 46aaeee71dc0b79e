/**
 * Walks THE route table, so a route added later is covered the day it is added: every protected route needs a
 * token, answers 403 exactly to the roles the table leaves out, and 404 for another tenant's records.
 */
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Route, routes } from '../../functions/api/routes.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { createRun } from '../support/runs.ts';

let app: TestApp;
let a: TestTenant;
let b: TestTenant;
/** A record of tenant A for each path parameter a route can name. */
let fixtures: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp();
  [a, b] = await Promise.all([app.createTenant('Alpha'), app.createTenant('Beta')]);
  const project = await app.call('POST', '/api/projects', {
    token: a.owner.token,
    body: { name: 'Alpha project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const scanId = uuidv7();
  await app.store.scans.put({
    scanId,
    tenantId: a.tenantId,
    projectId: project.body.id,
    status: 'COMPLETED',
    progress: { processed: 0, total: 0, percent: 100 },
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    report: null,
    error: null,
  });
  const run = await createRun(app.store, a.tenantId, project.body.id, 'FULL');
  const invited = await app.call('POST', '/api/team/members', {
    token: a.owner.token,
    body: { email: 'fixture-invitee@example.com', role: 'member' },
  });
  fixtures = {
    projectId: project.body.id,
    userId: a.member.id,
    scanId,
    runId: run.id,
    kind: 'source',
    invitationId: invited.body.id,
    batch: '1',
  };
});
afterAll(async () => app.close());

function pathOf(route: Route): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = fixtures[name];
    if (!value) throw new Error(`no fixture for path parameter {${name}}: add one to this test`);
    return value;
  });
}

/** A body that passes validation, so the answer is decided by authorisation alone. */
const bodies: Record<string, unknown> = {
  'POST /api/projects': { name: 'x', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  'POST /api/team/members': { email: 'someone-new@example.com', role: 'member' },
  'PATCH /api/team/members/{userId}': { role: 'member' },
  'POST /api/projects/{projectId}/connections/{kind}/oauth': {
    organization_url: 'contoso',
    project: 'Fabrikam',
  },
  'POST /api/migrations/project/{projectId}/start': {
    type: 'FULL',
    enginePayload: {
      source: { org: 'contoso', project: 'Fabrikam', pat: 'pat' },
      target: {
        base_url: 'https://x.atlassian.net',
        email: 'a@example.com',
        api_token: 't',
        project_key: 'MIG',
      },
    },
  },
};
const bodyOf = (r: Route) => bodies[`${r.method} ${r.path}`];

/** Calls a route as `token`: a streaming route takes it from the query (an EventSource sends no headers). */
function callRoute(route: Route, path: string, token?: string) {
  if (!route.streaming) return app.call(route.method, path, { token, body: bodyOf(route) });
  return app.call(route.method, token ? `${path}?token=${encodeURIComponent(token)}` : path);
}

const protectedRoutes = routes.filter((r) => r.access !== 'public');

describe('every protected route', () => {
  it.each(protectedRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s needs a token',
    async (_, route) => {
      const res = await callRoute(route, pathOf(route));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        statusCode: 401,
        message: 'Invalid or expired access token',
        error: 'Unauthorized',
        code: 'UNAUTHORIZED',
      });
    },
  );
});

describe('the role matrix', () => {
  const cases = protectedRoutes.flatMap((r) =>
    (['owner', 'admin', 'member'] as const)
      .filter((role) => !(r.access as readonly string[]).includes(role))
      .map((role) => [`${role} ${r.method} ${r.path}`, r, role] as const),
  );
  it.each(cases)('%s -> 403', async (_, route, role) => {
    const res = await callRoute(route, pathOf(route), a[role].token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      statusCode: 403,
      message: 'Your role does not allow this action',
      error: 'Forbidden',
      code: 'FORBIDDEN',
    });
  });

  it('matches the spec role table', () => {
    const access = (method: string, path: string) =>
      routes.find((r) => r.method === method && r.path === path)?.access;
    expect(access('POST', '/api/projects')).toEqual(['owner', 'admin']);
    expect(access('GET', '/api/team/members')).toEqual(['owner', 'admin']);
    expect(access('POST', '/api/team/members')).toEqual(['owner', 'admin']);
    expect(access('GET', '/api/billing')).toEqual(['owner']);
    // Ours: accepting a quote commits the account's money, like the billing view it is the owner's.
    expect(access('POST', '/api/projects/{projectId}/quote/accept')).toEqual(['owner']);
    expect(access('GET', '/api/projects/{projectId}/quote')).toEqual(['owner', 'admin', 'member']);
    expect(access('GET', '/api/projects/{projectId}')).toEqual(['owner', 'admin', 'member']);
    // Ours: every role runs migrations; cancel is final, so managers only.
    expect(access('POST', '/api/migrations/project/{projectId}/start')).toEqual(['owner', 'admin', 'member']);
    expect(access('POST', '/api/migrations/{runId}/pause')).toEqual(['owner', 'admin', 'member']);
    expect(access('POST', '/api/migrations/{runId}/resume')).toEqual(['owner', 'admin', 'member']);
    expect(access('POST', '/api/migrations/{runId}/cancel')).toEqual(['owner', 'admin']);
  });

  it('lets each allowed role through', async () => {
    for (const role of ['owner', 'admin', 'member'] as const) {
      expect((await app.call('GET', '/api/projects', { token: a[role].token })).status).toBe(200);
      expect((await app.call('GET', '/api/plugins', { token: a[role].token })).status).toBe(200);
    }
    expect((await app.call('GET', '/api/billing', { token: a.owner.token })).status).toBe(200);
    expect((await app.call('GET', '/api/team/members', { token: a.admin.token })).status).toBe(200);
  });
});

describe('tenancy', () => {
  const withParams = protectedRoutes.filter((r) => r.path.includes('{'));
  it.each(withParams.map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s answers 404 for the other tenant's record",
    async (_, route) => {
      const res = await callRoute(route, pathOf(route), b.owner.token);
      expect(res.status).toBe(404);
      expect(res.body.statusCode).toBe(404);
      expect(res.body.error).toBe('Not Found');
      // The same answer an id that never existed gets: no hint that the record is there.
      const unknown = await callRoute(
        route,
        route.path.replace(/\{\w+\}/g, '01a20392-0000-7000-8000-000000000000'),
        b.owner.token,
      );
      expect(res.body.code).toBe(unknown.body.code);
    },
  );

  it("keeps each tenant's lists to its own records", async () => {
    const listA = (await app.call('GET', '/api/projects', { token: a.owner.token })).body;
    const listB = (await app.call('GET', '/api/projects', { token: b.owner.token })).body;
    expect(listA.map((p: { id: string }) => p.id)).toContain(fixtures.projectId);
    expect(listB.map((p: { id: string }) => p.id)).not.toContain(fixtures.projectId);
    const membersB = (await app.call('GET', '/api/team/members', { token: b.owner.token })).body;
    expect(membersB.map((m: { email: string }) => m.email).sort()).toEqual(
      [b.admin.email, b.member.email, b.owner.email].sort(),
    );
  });

  it("leaves tenant A's records untouched after tenant B's attempts", async () => {
    expect(
      (await app.call('GET', `/api/projects/${fixtures.projectId}`, { token: a.member.token })).status,
    ).toBe(200);
    const members = (await app.call('GET', '/api/team/members', { token: a.owner.token })).body;
    expect(members.find((m: { id: string }) => m.id === a.member.id)?.role).toBe('member');
  });
});
