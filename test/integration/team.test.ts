import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app.close());

const members = async (t: TestTenant) =>
  (await app.call('GET', '/api/team/members', { token: t.owner.token })).body;
const lastOwner = {
  statusCode: 409,
  message: 'The last owner of a tenant cannot be removed or demoted',
  error: 'Conflict',
  code: 'LAST_OWNER',
};

describe('/api/team/members', () => {
  it('lists the tenant members oldest first, without password hashes', async () => {
    const t = await app.createTenant('List');
    const res = await app.call('GET', '/api/team/members', { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    for (const m of res.body)
      expect(Object.keys(m).sort()).toEqual(['createdAt', 'email', 'id', 'role', 'updatedAt']);
    expect(res.text).not.toContain('scrypt');
  });

  it('invites a member: 202 with a pending invitation, no member until it is accepted', async () => {
    const t = await app.createTenant('Add');
    const res = await app.call('POST', '/api/team/members', {
      token: t.admin.token,
      body: { email: 'New.Person@Example.com', role: 'member' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ email: 'new.person@example.com', role: 'member', status: 'PENDING' });
    expect((await members(t)).map((m: { email: string }) => m.email)).not.toContain('new.person@example.com');
  });

  it('refuses an e-mail already in use with 409, and a bad body with 400', async () => {
    const t = await app.createTenant('Dup');
    const dup = await app.call('POST', '/api/team/members', {
      token: t.owner.token,
      body: { email: t.member.email, role: 'member' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({
      statusCode: 409,
      message: 'A user with this e-mail already exists',
      error: 'Conflict',
      code: 'EMAIL_TAKEN',
    });
    const bad = await app.call('POST', '/api/team/members', {
      token: t.owner.token,
      body: { email: 'x', role: 'boss' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual([
      'email must be a valid e-mail address',
      'role must be one of: owner, admin, member',
    ]);
  });

  it('lets only an owner grant or touch the owner role', async () => {
    const t = await app.createTenant('Escalation');
    const asAdmin = await app.call('POST', '/api/team/members', {
      token: t.admin.token,
      body: { email: 'second-owner@example.com', role: 'owner' },
    });
    expect(asAdmin.status).toBe(403);
    const patch = (id: string, role: string) =>
      app.call('PATCH', `/api/team/members/${id}`, { token: t.admin.token, body: { role } });
    expect((await patch(t.member.id, 'owner')).status).toBe(403);
    expect((await patch(t.owner.id, 'member')).status).toBe(403);
    expect(
      (await app.call('DELETE', `/api/team/members/${t.owner.id}`, { token: t.admin.token })).status,
    ).toBe(403);
    const promote = await patch(t.member.id, 'admin');
    expect(promote.status).toBe(200);
    expect(promote.body.role).toBe('admin');
  });

  it('never removes or demotes the last owner', async () => {
    const t = await app.createTenant('LastOwner');
    const patch = (id: string, role: string, token = t.owner.token) =>
      app.call('PATCH', `/api/team/members/${id}`, { token, body: { role } });
    expect((await patch(t.owner.id, 'admin')).body).toEqual(lastOwner);
    expect(
      (await app.call('DELETE', `/api/team/members/${t.owner.id}`, { token: t.owner.token })).body,
    ).toEqual(lastOwner);
    // With a second owner, the first may step down; then the other one is the last.
    expect((await patch(t.admin.id, 'owner')).status).toBe(200);
    expect((await patch(t.owner.id, 'member')).status).toBe(200);
    // The promotion ended the admin's session: it signs in again as the owner it now is.
    const asOwner = (await app.login(t.admin.email)).body.accessToken as string;
    expect((await app.call('DELETE', `/api/team/members/${t.admin.id}`, { token: asOwner })).body).toEqual(
      lastOwner,
    );
  });

  it('holds the last-owner rule under concurrent demotions', async () => {
    const t = await app.createTenant('Race');
    await app.call('PATCH', `/api/team/members/${t.admin.id}`, {
      token: t.owner.token,
      body: { role: 'owner' },
    });
    const results = await Promise.all(
      [t.owner.id, t.admin.id].map((id) =>
        app.call('PATCH', `/api/team/members/${id}`, { token: t.owner.token, body: { role: 'member' } }),
      ),
    );
    // One succeeds. The other is refused: 409 LAST_OWNER, or 403 when the actor's own demotion committed first
    // (team changes are judged on the stored role), or 401 when it committed before the token was checked.
    // Either way exactly one owner remains.
    const statuses = results.map((r) => r.status).sort();
    expect([
      [200, 401],
      [200, 403],
      [200, 409],
    ]).toContainEqual(statuses);
    // Read from the store: whichever owner was demoted, its token no longer works.
    expect(
      (await app.store.users.list(t.tenantId)).filter((m: { role: string }) => m.role === 'owner'),
    ).toHaveLength(1);
  });

  it('removes a member: 204, gone from the list, and the login stops working', async () => {
    const t = await app.createTenant('Remove');
    const res = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.admin.token });
    expect(res.status).toBe(204);
    expect((await members(t)).map((m: { id: string }) => m.id)).not.toContain(t.member.id);
    expect((await app.login(t.member.email, TEST_PASSWORD)).status).toBe(401);
    const again = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.admin.token });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('MEMBER_NOT_FOUND');
  });
});

describe('GET /api/billing', () => {
  it('shows the owner an empty ledger before any quote', async () => {
    const t = await app.createTenant('Billing');
    const res = await app.call('GET', '/api/billing', { token: t.owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      currency: 'GBP',
      quotes: [],
      payments: [],
      spendByProject: [],
      totalSpentGbp: 0,
    });
  });
});

describe('GET /api/plugins', () => {
  it('answers [] when none is enabled, then the enabled ones without any configuration', async () => {
    const t = await app.createTenant('Plugins');
    expect((await app.call('GET', '/api/plugins', { token: t.member.token })).body).toEqual([]);
    await app.store.plugins.enable(t.tenantId, 'time-logs');
    const res = await app.call('GET', '/api/plugins', { token: t.member.token });
    expect(res.body).toEqual([
      {
        pluginKey: 'time-logs',
        displayName: 'Time logs',
        description: expect.any(String),
        icon: 'clock',
        enabledAt: expect.stringMatching(/^\d{4}-/),
      },
    ]);
    const other = await app.createTenant('NoPlugins');
    expect((await app.call('GET', '/api/plugins', { token: other.owner.token })).body).toEqual([]);
  });
});

describe('team changes use the role as stored now', () => {
  it('strips a demoted admin of team powers before the token expires', async () => {
    const t = await app.createTenant('Demoted');
    const demote = await app.call('PATCH', `/api/team/members/${t.admin.id}`, {
      token: t.owner.token,
      body: { role: 'member' },
    });
    expect(demote.status).toBe(200);
    // The old token still says admin; the store says member, and the role change ended that session.
    const res = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.admin.token });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('SESSION_REVOKED');
    expect((await members(t)).map((m: { id: string }) => m.id)).toContain(t.member.id);
  });
});
