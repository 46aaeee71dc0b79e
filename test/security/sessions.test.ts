/**
 * Sessions follow the user record: a removed member's access token is refused on the very next request (the
 * API and the event stream alike), a demoted user's new role holds at once, and the refresh tokens of either
 * no longer mint access tokens.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { refreshCookieOf } from '../support/http.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** The user's refresh-token families as stored: how many, and how many of them revoked. */
async function familiesOf(tenantId: string, userId: string) {
  const out = await app.db.send(
    new QueryCommand({
      TableName: app.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': `TENANT#${tenantId}`, ':sk': 'REFRESH_FAMILY#' },
      ConsistentRead: true,
    }),
  );
  const own = (out.Items ?? []).filter((i) => i.userId === userId);
  return { total: own.length, revoked: own.filter((i) => i.revokedAt).length };
}

const revoked = {
  statusCode: 401,
  error: 'Unauthorized',
  code: 'SESSION_REVOKED',
  message: 'Your session has ended because your membership or role changed: sign in again',
};

describe('a removed member', () => {
  it('loses the API, the event stream and the refresh token on the next request', async () => {
    const t = await app.createTenant('Removed');
    const refresh = refreshCookieOf(await app.login(t.member.email));
    expect((await app.call('GET', '/api/projects', { token: t.member.token })).status).toBe(200);

    const removed = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.admin.token });
    expect(removed.status).toBe(204);

    const api = await app.call('GET', '/api/projects', { token: t.member.token });
    expect({ status: api.status, body: api.body }).toEqual({ status: 401, body: revoked });
    const stream = await app.call(
      'GET',
      `/api/migrations/${randomUUID()}/stream?token=${encodeURIComponent(t.member.token)}`,
    );
    expect({ status: stream.status, body: stream.body }).toEqual({ status: 401, body: revoked });
    const again = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${refresh}` });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('REFRESH_TOKEN_INVALID');
  });
});

describe('a demoted admin', () => {
  it('is refused with the old token at once, its refresh families end, and a new login has the new role', async () => {
    const t = await app.createTenant('Demoted');
    const refresh = refreshCookieOf(await app.login(t.admin.email));
    expect((await app.call('GET', '/api/team/members', { token: t.admin.token })).status).toBe(200);

    const demoted = await app.call('PATCH', `/api/team/members/${t.admin.id}`, {
      token: t.owner.token,
      body: { role: 'member' },
    });
    expect(demoted.status).toBe(200);

    const old = await app.call('GET', '/api/team/members', { token: t.admin.token });
    expect({ status: old.status, body: old.body }).toEqual({ status: 401, body: revoked });
    // Every family of the demoted user is revoked in the table, none of the others'.
    expect(await familiesOf(t.tenantId, t.admin.id)).toEqual({ total: 2, revoked: 2 });
    expect(await familiesOf(t.tenantId, t.member.id)).toEqual({ total: 1, revoked: 0 });
    const refreshed = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${refresh}` });
    expect(refreshed.status).toBe(401);
    expect(refreshed.body.code).toBe('REFRESH_TOKEN_INVALID');

    const fresh = (await app.login(t.admin.email)).body.accessToken as string;
    const asMember = await app.call('GET', '/api/team/members', { token: fresh });
    expect(asMember.status).toBe(403);
    expect(asMember.body.code).toBe('FORBIDDEN');
    // The other members' sessions are untouched.
    expect((await app.call('GET', '/api/projects', { token: t.member.token })).status).toBe(200);
  });
});
