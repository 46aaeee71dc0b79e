/**
 * The tenant dashboard's WebSocket (`GET /api/ws`) over a real WebSocket client against the local gateway:
 * refusals before the upgrade, the ping route, connections kept in the table and removed on close.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { connectDashboard, openDashboard } from '../support/dashboard-socket.ts';

let app: TestApp;
let a: TestTenant;

beforeAll(async () => {
  app = await startTestApp({ DASHBOARD_MAX_PER_USER: '3' });
  a = await app.createTenant('Alpha');
});
afterAll(async () => app.close());

const unauthorized = { statusCode: 401, message: 'Invalid or expired access token', error: 'Unauthorized' };

/** Waits until the tenant's connections in the table are exactly `ids` (a close reaches the table a moment later). */
async function connectionsBecome(tenantId: string, expected: (ids: string[]) => boolean): Promise<string[]> {
  for (;;) {
    const ids = (await app.store.dashboardConnections.listByTenant(tenantId, 0)).map((c) => c.connectionId);
    if (expected(ids)) return ids.sort();
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('refusals at $connect, before the upgrade', () => {
  it('answers 401 UNAUTHORIZED as HTTP without a token or with a bad one', async () => {
    for (const token of [undefined, 'not-a-jwt']) {
      const out = await connectDashboard(app.url, token);
      expect(out).toEqual({ status: 401, body: { ...unauthorized, code: 'UNAUTHORIZED' } });
    }
  });

  it('answers 401 TOKEN_EXPIRED for an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ email: a.owner.email, tenantId: a.tenantId, role: 'owner' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(a.owner.id)
      .setIssuer('tracker-migration-service')
      .setAudience('tracker-migration-api')
      .setIssuedAt(now - 3600)
      .setExpirationTime(now - 60)
      .sign(app.jwtSecret);
    expect(await connectDashboard(app.url, expired)).toEqual({
      status: 401,
      body: { ...unauthorized, code: 'TOKEN_EXPIRED' },
    });
  });

  it('answers 401 SESSION_REVOKED once the user is removed', async () => {
    const t = await app.createTenant('Revoked');
    const removed = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.owner.token });
    expect(removed.status).toBe(204);
    const out = await connectDashboard(app.url, t.member.token);
    expect(out).toMatchObject({ status: 401, body: { code: 'SESSION_REVOKED' } });
  });

  it("answers 429 STREAM_LIMIT beyond the user's DASHBOARD_MAX_PER_USER, and a closed socket frees its place", async () => {
    const t = await app.createTenant('Capped');
    const open = await Promise.all([1, 2, 3].map(() => openDashboard(app.url, t.admin.token)));
    expect(await connectDashboard(app.url, t.admin.token)).toMatchObject({
      status: 429,
      body: { statusCode: 429, code: 'STREAM_LIMIT' },
    });
    await open[0]?.close();
    await connectionsBecome(t.tenantId, (ids) => ids.length === 2);
    const again = await openDashboard(app.url, t.admin.token);
    await Promise.all([again, ...open.slice(1)].map((s) => s?.close()));
  });
});

describe('an open connection', () => {
  it('is kept in the table under its tenant and user, and removed on close', async () => {
    const socket = await openDashboard(app.url, a.member.token);
    const [id] = await connectionsBecome(a.tenantId, (ids) => ids.length === 1);
    const stored = await app.store.dashboardConnections.get(id as string, 0);
    expect(stored).toMatchObject({ tenantId: a.tenantId, userId: a.member.id });
    // Two hours at most: API Gateway's limit on a WebSocket's life.
    expect((stored?.ttl ?? 0) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(2 * 3600);
    await socket.close();
    await connectionsBecome(a.tenantId, (ids) => ids.length === 0);
    expect(await app.store.dashboardConnections.get(id as string, 0)).toBeUndefined();
  });

  it('answers {"action":"ping"} with a pong, and anything else with UNKNOWN_ACTION', async () => {
    const socket = await openDashboard(app.url, a.owner.token);
    socket.send({ action: 'ping' });
    expect(await socket.next((f) => f.type === 'pong')).toEqual({
      type: 'pong',
      receivedAt: expect.any(Number),
    });
    socket.send({ action: 'subscribe' });
    socket.send('not json');
    await socket.next(
      (f) => f.type === 'error' && socket.frames.filter((x) => x.type === 'error').length === 2,
    );
    expect(socket.frames.filter((f) => f.type === 'error').map(({ receivedAt: _, ...f }) => f)).toEqual([
      { type: 'error', code: 'UNKNOWN_ACTION' },
      { type: 'error', code: 'UNKNOWN_ACTION' },
    ]);
    await socket.close();
  });
});
