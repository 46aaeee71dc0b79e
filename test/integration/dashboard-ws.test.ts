/**
 * The tenant dashboard's WebSocket (`GET /api/ws`) over a real WebSocket client against the local gateway, one
 * test app for the file: refusals before the upgrade, the ping route, connections kept in the table and removed
 * on close; then a real run (the local ASL interpreter, the engine over the sandbox trackers) seen as events in
 * order, paused and resumed through the API, never by another tenant; a connection the stand-in reports gone
 * (410) removed from the table; a reconnect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectionPoster } from '../../functions/adapters/dashboard-channel.ts';
import { RunEventsNotifier } from '../../functions/adapters/run-events.ts';
import { DashboardFrame, type DashboardRunFrame } from '../../functions/domain/dashboard-events.ts';
import { createEngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { DashboardConnectionRepository } from '../../functions/store/dashboard-connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { type SandboxConfig, sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { expiredOwnerToken, startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { connectDashboard, type DashboardSocket, openDashboard } from '../support/dashboard-socket.ts';
import { readyProject } from '../support/lifecycle.ts';
import { createRun } from '../support/runs.ts';
import { sandboxControl, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'tms-dashboard-ws-'));
let sandboxes: RunningSandboxes;
let config: SandboxConfig;
let app: TestApp;
let a: TestTenant;
let orchestrator: LocalOrchestrator;

beforeAll(async () => {
  config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '80', SANDBOX_SEED: '7' });
  sandboxes = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sandboxes);
  app = await startTestApp({
    ADO_BASE_URL: sandboxes.ado.url,
    DATA_DIR: dir,
    DASHBOARD_MAX_PER_USER: '3',
    // Every session check reads the user, as on an instance whose cached read has lapsed: a change made in
    // the table directly (as by another instance) is seen at the next check.
    SESSION_CHECK_CACHE_SECONDS: '0',
  });
  a = await app.createTenant('Alpha');
  // As `npm start` wires it: the engine tells the dashboard, whose frames reach the gateway's sockets.
  connectionPoster.use(app.gateway.websockets);
  const engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
    runEvents: new RunEventsNotifier(() => app.store),
  });
  orchestrator = new LocalOrchestrator({ handler: engine });
  setOrchestrator(orchestrator);
}, 120_000);

afterAll(async () => {
  orchestrator?.close();
  setOrchestrator(undefined);
  connectionPoster.use(undefined);
  await app?.close();
  await sandboxes?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const unauthorized = { statusCode: 401, message: 'Invalid or expired access token', error: 'Unauthorized' };

/** Waits until the tenant's connections in the table are exactly `ids` (a close reaches the table a moment later). */
async function connectionsBecome(tenantId: string, expected: (ids: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ids = (await app.store.dashboardConnections.listByTenant(tenantId, 0)).map((c) => c.connectionId);
    if (expected(ids)) return ids.sort();
    if (Date.now() > deadline) throw new Error(`the tenant's connections stayed ${JSON.stringify(ids)}`);
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
    const expired = await expiredOwnerToken(app, a);
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
    // The two records go by two deletes side by side: the by-id one may land a moment after the tenant's.
    await vi.waitFor(
      async () => expect(await app.store.dashboardConnections.get(id as string, 0)).toBeUndefined(),
      { timeout: 30_000, interval: 20 },
    );
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

const jira = (method: string, path: string, body?: unknown) =>
  sandboxControl(sandboxes.jira.url, method, path, body);

const control = (tenant: TestTenant, runId: string, action: 'pause' | 'resume' | 'cancel') =>
  app.call('POST', `/api/migrations/${runId}/${action}`, { token: tenant.admin.token });

const runFrames = (socket: DashboardSocket, runId?: string) =>
  socket.frames.filter(
    (f): f is DashboardRunFrame & { receivedAt: number } =>
      f.type.startsWith('run.') && (runId === undefined || (f as DashboardRunFrame).runId === runId),
  );

describe('a real run, live on the dashboard', () => {
  it("tells the run's tenant every step in order, progress at most once a second, and nothing to another tenant", async () => {
    const b = await app.createTenant('Bravo');
    const watcher = await openDashboard(app.url, a.member.token);
    const outsider = await openDashboard(app.url, b.owner.token);
    const projectId = await readyProject(app, a, 'Live on the dashboard');
    // A slower Jira, so the run lasts a few seconds and the pause lands while the create phase is at work.
    await jira('PUT', '/_sandbox/faults', { latencyMs: 40 });
    const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: a.admin.token,
      body: sandboxStartBody(sandboxes, config),
    });
    expect(started.status).toBe(200);
    const runId = started.body.id as string;

    await watcher.next((f) => f.type === 'run.progress' && f.runId === runId);
    expect((await control(a, runId, 'pause')).status).toBe(200);
    await watcher.next((f) => f.type === 'run.paused' && f.runId === runId);
    await orchestrator.idle(runId);
    await jira('PUT', '/_sandbox/faults', { latencyMs: 0 });
    expect((await control(a, runId, 'resume')).status).toBe(200);
    const ended = await watcher.next((f) => f.type === 'run.ended' && f.runId === runId);
    await orchestrator.idle(runId);
    const run = (await app.call('GET', `/api/migrations/${runId}/status`, { token: a.member.token })).body;

    // Every frame is one of the protocol's, about this run of this project.
    const frames = runFrames(watcher, runId);
    for (const { receivedAt: _, ...frame } of frames) expect(DashboardFrame.parse(frame)).toEqual(frame);
    expect(frames.every((f) => f.projectId === projectId)).toBe(true);
    const types = frames.map((f) => f.type);
    expect(types[0]).toBe('run.started');
    expect(frames[0]).toMatchObject({ runType: 'FULL', dryRun: false });
    expect(types.at(-1)).toBe('run.ended');
    expect(types.filter((t) => t === 'run.ended')).toHaveLength(1);
    expect(ended).toMatchObject({
      status: 'COMPLETED',
      stats: { created: run.totalItems, skipped: 0, failed: 0 },
    });
    // Paused (a user's request), then resumed, between the start and the end.
    const paused = types.indexOf('run.paused');
    expect(paused).toBeGreaterThan(0);
    expect(frames[paused]).toMatchObject({ reason: 'requested' });
    expect(types.indexOf('run.resumed')).toBeGreaterThan(paused);
    // Phases in order, each entered once; progress within the phase last entered.
    const phases = frames.flatMap((f) => (f.type === 'run.phase' ? [f.phase] : []));
    expect(phases[0]).toBe(1);
    expect(phases).toEqual([...new Set(phases)].sort((x, y) => x - y));
    expect(phases.length).toBeGreaterThanOrEqual(3);
    let phase = 0;
    for (const f of frames) {
      if (f.type === 'run.phase') phase = f.phase;
      if (f.type === 'run.progress') expect(f.phase).toBe(phase);
    }
    // At most one progress frame a second (the engine checkpoints far more often).
    const progressAt = frames.filter((f) => f.type === 'run.progress').map((f) => Date.parse(f.at));
    expect(progressAt.length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < progressAt.length; i++)
      expect((progressAt[i] as number) - (progressAt[i - 1] as number)).toBeGreaterThanOrEqual(1000);
    // The other tenant's socket, open the whole time, got nothing of it.
    expect(runFrames(outsider)).toEqual([]);
    // Never a secret: no frame carries the trackers' credentials.
    const text = JSON.stringify(watcher.frames);
    for (const secret of [config.ado.pat, config.jira.apiToken]) expect(text).not.toContain(secret);
    await Promise.all([watcher.close(), outsider.close()]);
  }, 180_000);
});

describe('connections that go away', () => {
  it('removes a connection the management API reports gone (410) at the next post', async () => {
    const c = await app.createTenant('Charlie');
    const projectId = await readyProject(app, c, 'Gone');
    const kept = await openDashboard(app.url, c.owner.token);
    const lost = await openDashboard(app.url, c.admin.token);
    await connectionsBecome(c.tenantId, (list) => list.length === 2);
    const byUser = async (userId: string) =>
      (await app.store.dashboardConnections.listByTenant(c.tenantId, 0)).find((x) => x.userId === userId)
        ?.connectionId as string;
    const [keptId, goneId] = await Promise.all([byUser(c.owner.id), byUser(c.admin.id)]);
    // API Gateway can lose a connection without a $disconnect: posts to it are answered 410 from then on.
    expect(app.gateway.websockets.lose(goneId)).toBe(true);
    expect(await app.store.dashboardConnections.get(goneId, 0)).toBeDefined();

    const run = await createRun(app.store, c.tenantId, projectId, 'FULL');
    expect((await control(c, run.id, 'cancel')).status).toBe(200);
    // The cancel's run.ended went to the live connection; the gone one is no longer in the table.
    expect(await kept.next((f) => f.type === 'run.ended' && f.runId === run.id)).toMatchObject({
      status: 'CANCELLED',
    });
    expect(await connectionsBecome(c.tenantId, (list) => list.length === 1)).toEqual([keptId]);
    expect(await app.store.dashboardConnections.get(goneId, 0)).toBeUndefined();
    expect(runFrames(lost)).toEqual([]);
    await Promise.all([kept.close(), lost.close()]);
  });

  it('stops sending to a member the moment they are removed or their role changes', async () => {
    const e = await app.createTenant('Echo');
    const projectId = await readyProject(app, e, 'Removed watcher');
    const owner = await openDashboard(app.url, e.owner.token);
    const removed = await openDashboard(app.url, e.member.token);
    const demoted = await openDashboard(app.url, e.admin.token);
    await connectionsBecome(e.tenantId, (list) => list.length === 3);
    const gone = await app.call('DELETE', `/api/team/members/${e.member.id}`, { token: e.owner.token });
    expect(gone.status).toBe(204);
    const changed = await app.call('PATCH', `/api/team/members/${e.admin.id}`, {
      token: e.owner.token,
      body: { role: 'member' },
    });
    expect(changed.status).toBe(200);
    // Their sessions ended, and so did their place on the dashboard: only the owner's connection is left.
    const ownerOnly = await connectionsBecome(e.tenantId, (list) => list.length === 1);
    expect((await app.store.dashboardConnections.get(ownerOnly[0] as string, 0))?.userId).toBe(e.owner.id);

    const run = await createRun(app.store, e.tenantId, projectId, 'FULL');
    const cancelled = await app.call('POST', `/api/migrations/${run.id}/cancel`, { token: e.owner.token });
    expect(cancelled.status).toBe(200);
    await owner.next((f) => f.type === 'run.ended' && f.runId === run.id);
    expect(runFrames(removed)).toEqual([]);
    expect(runFrames(demoted)).toEqual([]);
    await Promise.all([owner.close(), removed.close(), demoted.close()]);
  });

  it('serves a client that reconnects: the new connection gets what happens after', async () => {
    const d = await app.createTenant('Delta');
    const projectId = await readyProject(app, d, 'Reconnect');
    const first = await openDashboard(app.url, d.member.token);
    const before = await createRun(app.store, d.tenantId, projectId, 'FULL');
    expect((await control(d, before.id, 'cancel')).status).toBe(200);
    await first.next((f) => f.type === 'run.ended' && f.runId === before.id);
    await first.close();
    await connectionsBecome(d.tenantId, (list) => list.length === 0);

    const again = await openDashboard(app.url, d.member.token);
    const after = await createRun(app.store, d.tenantId, projectId, 'FULL');
    expect((await control(d, after.id, 'cancel')).status).toBe(200);
    expect(await again.next((f) => f.type === 'run.ended' && f.runId === after.id)).toMatchObject({
      runId: after.id,
      projectId,
      status: 'CANCELLED',
    });
    // What happened while it was away is the runs list's to tell, not replayed here.
    expect(runFrames(again, before.id)).toEqual([]);
    await again.close();
  });
});

describe('access that ends', () => {
  const revoked = {
    statusCode: 401,
    error: 'Unauthorized',
    code: 'SESSION_REVOKED',
    message: 'Your session has ended because your membership or role changed: sign in again',
  };
  /** Resolves once the socket is closed; a bound on waiting (the machine may be busy), not a timing check. */
  const closedSoon = (socket: DashboardSocket) =>
    vi.waitFor(
      async () => {
        if (socket.ws.readyState !== socket.ws.CLOSED) throw new Error('the socket is still open');
      },
      { timeout: 15_000, interval: 20 },
    );

  it('closes the sockets of a member who is removed and of a user whose role changes; the others stay open', async () => {
    const f = await app.createTenant('Foxtrot');
    const owner = await openDashboard(app.url, f.owner.token);
    const removed = await openDashboard(app.url, f.member.token);
    const demoted = await openDashboard(app.url, f.admin.token);
    await connectionsBecome(f.tenantId, (list) => list.length === 3);
    expect(
      (await app.call('DELETE', `/api/team/members/${f.member.id}`, { token: f.owner.token })).status,
    ).toBe(204);
    const changed = await app.call('PATCH', `/api/team/members/${f.admin.id}`, {
      token: f.owner.token,
      body: { role: 'member' },
    });
    expect(changed.status).toBe(200);
    await Promise.all([closedSoon(removed), closedSoon(demoted)]);
    expect(owner.ws.readyState).toBe(owner.ws.OPEN);
    const [ownerOnly] = await connectionsBecome(f.tenantId, (list) => list.length === 1);
    expect((await app.store.dashboardConnections.get(ownerOnly as string, 0))?.userId).toBe(f.owner.id);
    // Their reconnects are refused.
    for (const token of [f.member.token, f.admin.token])
      expect(await connectDashboard(app.url, token)).toEqual({ status: 401, body: revoked });
    await owner.close();
  });

  it('refuses a $connect that races the removal: removed after its admission, before its connection is stored', async () => {
    const g = await app.createTenant('Golf');
    const store = DashboardConnectionRepository.prototype.open;
    vi.spyOn(DashboardConnectionRepository.prototype, 'open').mockImplementationOnce(async function (
      this: DashboardConnectionRepository,
      ...args: Parameters<DashboardConnectionRepository['open']>
    ) {
      // The removal, its sweep of the member's connections included, ends right here.
      const removed = await app.call('DELETE', `/api/team/members/${g.member.id}`, { token: g.owner.token });
      expect(removed.status).toBe(204);
      return store.apply(this, args);
    });
    try {
      const out = await connectDashboard(app.url, g.member.token);
      if ('ws' in out) await out.close();
      expect('ws' in out ? 'an open socket' : out).toEqual({ status: 401, body: revoked });
    } finally {
      vi.restoreAllMocks();
    }
    expect(await connectionsBecome(g.tenantId, (list) => list.length === 0)).toEqual([]);
  });

  it('closes the socket of a user who lost access elsewhere at the next frame, which it does not get', async () => {
    const h = await app.createTenant('Hotel');
    const projectId = await readyProject(app, h, 'Lost elsewhere');
    const owner = await openDashboard(app.url, h.owner.token);
    const member = await openDashboard(app.url, h.member.token);
    await connectionsBecome(h.tenantId, (list) => list.length === 2);
    // Removed on another instance whose sweep of the connections never came (it stopped in between).
    expect((await app.store.users.delete(h.tenantId, h.member.id)).ok).toBe(true);

    const run = await createRun(app.store, h.tenantId, projectId, 'FULL');
    expect((await control(h, run.id, 'cancel')).status).toBe(200);
    await owner.next((f) => f.type === 'run.ended' && f.runId === run.id);
    await closedSoon(member);
    expect(runFrames(member)).toEqual([]);
    const [left] = await connectionsBecome(h.tenantId, (list) => list.length === 1);
    expect((await app.store.dashboardConnections.get(left as string, 0))?.userId).toBe(h.owner.id);
    await owner.close();
  });

  it('closes the socket of a user whose role changed elsewhere at its next ping, without a pong', async () => {
    const i = await app.createTenant('India');
    const socket = await openDashboard(app.url, i.member.token);
    socket.send({ action: 'ping' });
    await socket.next((f) => f.type === 'pong');
    expect((await app.store.users.changeRole(i.tenantId, i.member.id, 'admin')).ok).toBe(true);
    socket.send({ action: 'ping' });
    await closedSoon(socket);
    expect(socket.frames.filter((f) => f.type === 'pong')).toHaveLength(1);
    await connectionsBecome(i.tenantId, (list) => list.length === 0);
  });
});
