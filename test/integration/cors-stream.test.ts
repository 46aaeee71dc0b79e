/**
 * CORS on the Server-Sent Events stream (its own response-streaming handler, off the middy stack) and on a
 * proxy route, through the local gateway: an allowed Origin is echoed with credentials and Vary, another gets
 * no Access-Control-Allow-Origin, and none configured adds nothing; refusals (401) carry them too.
 */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { createRun } from '../support/runs.ts';

const APP = 'https://app.example.com';
let app: TestApp;
let t: TestTenant;
let streamPath: string;

/** The stream's status and headers; the connection is dropped once they arrive. */
function streamHeaders(path: string, origin?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(new URL(path, app.url), { headers: origin ? { Origin: origin } : {} }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      req.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  app = await startTestApp({ STREAM_POLL_MS: '40', STREAM_HEARTBEAT_MS: '200' });
  t = await app.createTenant('Cors');
  const project = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name: 'Cors project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const run = await createRun(app.store, t.tenantId, project.body.id, 'FULL');
  streamPath = `/api/migrations/${run.id}/stream?token=${t.member.token}`;
});
afterEach(() => {
  delete process.env.ALLOWED_ORIGINS;
});
afterAll(() => app.close());

describe('CORS on the event stream', () => {
  it('echoes an allowed origin on the stream and on its refusals', async () => {
    process.env.ALLOWED_ORIGINS = `${APP},https://admin.example.com`;
    const ok = await streamHeaders(streamPath, APP);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/text\/event-stream/);
    expect(ok.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    });
    const refused = await streamHeaders(streamPath.replace(/token=.*/, 'token=bad'), APP);
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(APP);
  });

  it('gives another origin no Access-Control-Allow-Origin', async () => {
    process.env.ALLOWED_ORIGINS = APP;
    const res = await streamHeaders(streamPath, 'https://evil.example.com');
    expect(res.status).toBe(200);
    expect(res.headers).not.toHaveProperty('access-control-allow-origin');
    expect(res.headers.vary).toBe('Origin');
  });

  it('adds nothing when no origin is configured', async () => {
    const res = await streamHeaders(streamPath, APP);
    expect(res.status).toBe(200);
    expect(res.headers).not.toHaveProperty('access-control-allow-origin');
    expect(res.headers).not.toHaveProperty('vary');
  });
});

describe('CORS on a proxy route through the gateway', () => {
  it('allowed, not allowed, none configured', async () => {
    process.env.ALLOWED_ORIGINS = APP;
    const list = (origin: string) =>
      app.call('GET', '/api/projects', { token: t.member.token, headers: { Origin: origin } });
    const allowed = await list(APP);
    expect(allowed.status).toBe(200);
    expect(allowed.headers).toMatchObject({ 'access-control-allow-origin': APP, vary: 'Origin' });
    expect((await list('https://evil.example.com')).headers).not.toHaveProperty(
      'access-control-allow-origin',
    );
    delete process.env.ALLOWED_ORIGINS;
    const none = await list(APP);
    expect(none.headers).not.toHaveProperty('access-control-allow-origin');
    expect(none.headers).not.toHaveProperty('vary');
  });
});
