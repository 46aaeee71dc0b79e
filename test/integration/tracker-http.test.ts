/**
 * The resilient HTTP layer over real HTTP against the sandboxes' fault injector: 429 storms, 5xx, dropped
 * connections, and the request log to show the tracker's Retry-After was respected.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../functions/platform/logger.ts';
import {
  basicAuth,
  ThrottleWaitDeferred,
  TrackerHttp,
  TrackerHttpError,
  TrackerUnreachableError,
} from '../../functions/trackers/http.ts';
import { Interrupt, InvocationInterrupted } from '../../functions/trackers/interrupt.ts';
import { INITIAL_IN_FLIGHT, TrackerPacer } from '../../functions/trackers/pacing.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import { createSandboxApp, type SandboxControls } from '../../local/sandbox/common/sandbox-app.ts';
import { freePort } from '../support/global-setup.ts';

let app: FastifyInstance;
let controls: SandboxControls;
let baseUrl: string;
const SECRET = 'super-secret-token-value';

beforeAll(async () => {
  ({ app, controls } = await createSandboxApp(
    {
      name: 'test',
      throttleReasons: ['test'],
      throttleHeaders: (s) => ({ 'Retry-After': String(s) }),
      errorBody: (status) => ({ message: `injected ${status}` }),
      seed: () => undefined,
    },
    { items: 0, seed: 7 },
  ));
  app.get('/ping', async () => ({ ok: true }));
  app.post('/write', async () => ({ ok: true }));
  app.post('/write/:n', async () => ({ ok: true }));
  app.get('/missing', async (_req, reply) => reply.code(404).send({ message: 'nope' }));
  app.get('/ado-throttle', async (_req, reply) => reply.code(200).send({ ok: true }));
  app.get('/file', async (_req, reply) => reply.type('application/octet-stream').send(Buffer.alloc(64, 7)));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  allowLoopbackPorts(port);
  baseUrl = `http://127.0.0.1:${port}`;
});
afterAll(async () => app.close());
afterEach(async () => {
  await app.inject({ method: 'POST', url: '/_sandbox/reset' });
  vi.restoreAllMocks();
});

const client = (opts: Partial<ConstructorParameters<typeof TrackerHttp>[0]> = {}) =>
  new TrackerHttp({
    tracker: 'target',
    baseUrl,
    authorization: basicAuth('me@example.com', SECRET),
    initialDelayMs: 10,
    maxDelayMs: 200,
    ...opts,
  });

describe('the tracker HTTP layer', () => {
  it('waits out a 429 storm, at least Retry-After between attempts', async () => {
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 3, retryAfterSeconds: 1 } },
    });
    const http = client();
    const res = await http.request<{ ok: boolean }>('GET', '/ping');
    expect(res.body).toEqual({ ok: true });
    const log = controls.requests.filter((r) => r.path === '/ping');
    expect(log.map((r) => r.status)).toEqual([429, 429, 429, 200]);
    const times = log.map((r) => Date.parse(r.at));
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(990);
    expect(http.stats).toMatchObject({ calls: 4, throttled: 3, retries: 3 });
    // A 429 naming no limit concerns the whole client: every lane halved at each (32 -> 4), all paused.
    expect(http.pacer.laneState('GET /ping').limit).toBe(INITIAL_IN_FLIGHT.default / 8);
  });

  it('hands back a whole-client wait longer than its budget: nothing more is sent, the caller waits elsewhere', async () => {
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 5, retryAfterSeconds: 30 } },
    });
    const interrupt = new Interrupt();
    const http = client({ waitBudgetMs: () => 1000, interrupt });
    const before = Date.now();
    const first = await http.request('GET', '/ping').catch((err: unknown) => err);
    expect(first).toBeInstanceOf(ThrottleWaitDeferred);
    const { notice } = first as ThrottleWaitDeferred;
    expect(notice.tracker).toBe('target');
    expect(notice.until.getTime()).toBeGreaterThanOrEqual(before + 30_000);
    // The invocation learns of it through its interrupt (the runner answers the state machine's wait from it).
    expect(interrupt.reason).toEqual({ kind: 'wait-deferred', wait: notice });
    // Any later request, to any endpoint, ends the same way without being sent.
    await expect(http.request('POST', '/write', { body: {} })).rejects.toBe(first);
    expect(controls.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['GET /ping 429']);
  });

  it('stops a download queued behind a handed-back wait, and one started after it, instead of sitting the wait out', async () => {
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 1, retryAfterSeconds: 3600 } },
    });
    // One download in flight at a time: the second waits in the pacer behind the first.
    const http = client({ waitBudgetMs: () => 1000, initialConcurrency: 1, maxConcurrency: 1 });
    const first = http.stream('/file');
    const queued = http.stream('/file');
    const deferral = await first.catch((err: unknown) => err);
    expect(deferral).toBeInstanceOf(ThrottleWaitDeferred);
    expect((deferral as ThrottleWaitDeferred).notice).toMatchObject({ tracker: 'target', reason: null });
    await expect(queued).rejects.toBe(deferral);
    await expect(http.stream('/file')).rejects.toBe(deferral);
    // The hour's wait was handed back: nothing after the 429 reached the tracker.
    expect(controls.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['GET /file 429']);
  });

  it('sends a step of an ordered chain (urgent) ahead of the requests queued on its endpoint', async () => {
    // One request in flight per endpoint: /write/1 holds it, the others queue in the order they were made.
    const http = client({ initialConcurrency: 1, maxConcurrency: 1 });
    const ordinary = [1, 2, 3].map((n) => http.request('POST', `/write/${n}`));
    const thread = http.request('POST', '/write/9', { urgent: true });
    await Promise.all([...ordinary, thread]);
    expect(controls.requests.map((r) => r.path)).toEqual(['/write/1', '/write/9', '/write/2', '/write/3']);
  });

  it("hands a wait back through the invocation's interrupt: the other client's requests, queued or new, are not sent", async () => {
    // Jira's write is refused for an hour; Azure DevOps' download is held back half a second meanwhile.
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: {
        throttle: { count: 1, retryAfterSeconds: 3600, endpoint: 'POST /write' },
        hangs: { count: 1, ms: 500, endpoint: 'GET /file' },
      },
    });
    const interrupt = new Interrupt();
    const jira = client({ waitBudgetMs: () => 1000, interrupt });
    // Azure DevOps' client of the same invocation, one download at a time: the second queues behind the first.
    const ado = client({ tracker: 'source', interrupt, initialConcurrency: 1, maxConcurrency: 1 });
    const download = ado.stream('/file');
    const queued = ado.stream('/file');
    const deferral = await jira.request('POST', '/write', { body: {} }).catch((err: unknown) => err);
    expect(deferral).toBeInstanceOf(ThrottleWaitDeferred);
    expect(interrupt.reason).toEqual({
      kind: 'wait-deferred',
      wait: (deferral as ThrottleWaitDeferred).notice,
    });
    const stopped = await queued.catch((err: unknown) => err);
    expect(stopped).toBeInstanceOf(InvocationInterrupted);
    expect((stopped as InvocationInterrupted).reason).toBe(interrupt.reason);
    await expect(ado.request('GET', '/ping')).rejects.toBeInstanceOf(InvocationInterrupted);
    // The download already on its way ends; nothing else reached either tracker.
    expect((await download).status).toBe(200);
    expect(controls.requests.map((r) => `${r.method} ${r.path} ${r.status}`).sort()).toEqual([
      'GET /file 200',
      'POST /write 429',
    ]);
  });

  it("keeps nothing of a request once it is answered (no reaction left on a promise of the client's life)", async () => {
    // A race with a promise that never settles leaves a reaction on it at each call: over an invocation's tens of
    // thousands of requests, every pacer slot's release stayed reachable (67 MB of a 10,000-item run's heap).
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const slots: WeakRef<() => void>[] = [];
    // Wrapped by hand: a vitest spy would keep every result it returned.
    const acquire = TrackerPacer.prototype.acquire;
    TrackerPacer.prototype.acquire = async function (this: TrackerPacer, key) {
      const release = await acquire.call(this, key);
      const slot = () => release();
      slots.push(new WeakRef(slot));
      return slot;
    };
    try {
      const http = client();
      for (let i = 0; i < 20; i++) await http.request('GET', '/ping');
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 10));
        gc();
      }
      expect(slots).toHaveLength(20);
      expect(slots.filter((s) => s.deref() !== undefined)).toHaveLength(0);
      // The client is still alive (its own promises with it).
      expect((await http.request('GET', '/ping')).body).toEqual({ ok: true });
    } finally {
      TrackerPacer.prototype.acquire = acquire;
    }
  });

  it('sits out a whole-client wait within its budget', async () => {
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 1, retryAfterSeconds: 1 } },
    });
    const interrupt = new Interrupt();
    const http = client({ waitBudgetMs: () => 10_000, interrupt });
    expect((await http.request<{ ok: boolean }>('GET', '/ping')).body).toEqual({ ok: true });
    expect(interrupt.reason).toBeUndefined();
  });

  it('retries 5xx and dropped connections until an answer comes', async () => {
    await app.inject({ method: 'PUT', url: '/_sandbox/faults', payload: { errorRate: 0.4, dropRate: 0.2 } });
    const http = client({ maxAttempts: 12 });
    for (let i = 0; i < 20; i++) expect((await http.request('GET', '/ping')).status).toBe(200);
    const faults = controls.requests.filter((r) => r.fault);
    expect(faults.some((r) => r.fault === 'error')).toBe(true);
    expect(faults.some((r) => r.fault === 'drop')).toBe(true);
    expect(http.stats.retries).toBe(faults.length);
  });

  it('gives up on an unreachable tracker with a clear error', async () => {
    await app.inject({ method: 'PUT', url: '/_sandbox/faults', payload: { dropRate: 1 } });
    await expect(client({ maxAttempts: 3 }).request('GET', '/ping')).rejects.toBeInstanceOf(
      TrackerUnreachableError,
    );
    const closed = await freePort();
    allowLoopbackPorts(closed);
    const refused = new TrackerHttp({
      tracker: 'source',
      baseUrl: `http://127.0.0.1:${closed}`,
      authorization: 'Basic x',
      maxAttempts: 2,
      initialDelayMs: 1,
    });
    await expect(refused.request('GET', '/x')).rejects.toMatchObject({
      name: 'TrackerUnreachableError',
      host: `127.0.0.1:${closed}`,
      reason: 'ECONNREFUSED',
    });
  });

  it('retries a write that must not happen twice only after a 429', async () => {
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 2, retryAfterSeconds: 0 } },
    });
    expect((await client().request('POST', '/write', { body: {}, notIdempotent: true })).status).toBe(200);
    expect(controls.requests.filter((r) => r.path === '/write').map((r) => r.status)).toEqual([
      429, 429, 200,
    ]);
    await app.inject({ method: 'PUT', url: '/_sandbox/faults', payload: { errorRate: 1 } });
    await expect(client().request('POST', '/write', { body: {}, notIdempotent: true })).rejects.toMatchObject(
      { status: 503 },
    );
    await app.inject({ method: 'PUT', url: '/_sandbox/faults', payload: { errorRate: 0, dropRate: 1 } });
    await expect(
      client().request('POST', '/write', { body: {}, notIdempotent: true }),
    ).rejects.toBeInstanceOf(TrackerUnreachableError);
    // One attempt each after the throttled ones: nothing was sent twice.
    expect(controls.requests.filter((r) => r.path === '/write')).toHaveLength(5);
  });

  it('does not retry a 4xx', async () => {
    const http = client();
    await expect(http.request('GET', '/missing')).rejects.toMatchObject({
      name: 'TrackerHttpError',
      status: 404,
      body: { message: 'nope' },
    });
    expect(controls.requests.filter((r) => r.path === '/missing')).toHaveLength(1);
    expect(http.stats.retries).toBe(0);
  });

  it('puts the credential in a header and never in a log line', async () => {
    const lines: string[] = [];
    const capture = (...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    };
    for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const)
      vi.spyOn(console, m).mockImplementation(capture);
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return write(chunk, ...(rest as []));
    });
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    await app.inject({
      method: 'PUT',
      url: '/_sandbox/faults',
      payload: { throttle: { count: 1, retryAfterSeconds: 0 } },
    });
    await client().request('GET', '/ping?token=abc');
    await client()
      .request('GET', '/missing')
      .catch((e: unknown) => lines.push(String(e), JSON.stringify(e)));
    const everything = lines.join('\n');
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(Buffer.from(`me@example.com:${SECRET}`).toString('base64'));
  });

  it("names the run a call was made for in the call's log line (the engine's tenant and run ids)", async () => {
    const lines: string[] = [];
    for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const)
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
        lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
      });
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return write(chunk, ...(rest as []));
    });
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    try {
      await client({ logKeys: { tenantId: 'tenant-1', runId: 'run-9' } }).request('GET', '/ping');
    } finally {
      logger.setLogLevel(level);
    }
    const call = lines.find((l) => l.includes('tracker call'));
    expect(JSON.parse(call ?? '{}')).toMatchObject({
      message: 'tracker call',
      tenantId: 'tenant-1',
      runId: 'run-9',
      path: '/ping',
    });
    expect(call).not.toContain(SECRET);
  });

  it('maps ADO X-RateLimit-Delay and Jira reset headers to a wait', async () => {
    const { retryAfterMs } = await import('../../functions/trackers/http.ts');
    expect(retryAfterMs(new Headers({ 'x-ratelimit-delay': '2.5' }))).toBe(2500);
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(
      retryAfterMs(
        new Headers({ 'x-ratelimit-reset': '2026-11-22T10:00:03Z', 'ratelimit-reason': 'jira-burst-based' }),
        now,
      ),
    ).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': '7' }))).toBe(7000);
    expect(retryAfterMs(new Headers({}))).toBeUndefined();
    expect(TrackerHttpError).toBeDefined();
  });
});
