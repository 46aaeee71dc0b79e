/**
 * What both sandbox trackers share: a fastify app with the control endpoints under /_sandbox (outside the
 * trackers' API paths), fault injection on the API paths, and a request log tests can read.
 *
 * Control endpoints:
 *   POST   /_sandbox/reset      back to the seeded state, faults off, log cleared
 *   POST   /_sandbox/seed       {items?, seed?}: regenerate the data
 *   GET    /_sandbox/faults     the fault settings;  PUT /_sandbox/faults  partial settings (merged)
 *   GET    /_sandbox/requests   the request log [{method, path, status, ms, at}] (`?from=N`: from entry N on);
 *                                DELETE clears it;  GET /_sandbox/requests/count  {count}: its length
 */
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { templateOf } from './limits/install.ts';
import { type Random, seededRandom } from './random.ts';

export const FaultSettingsSchema = z.strictObject({
  /** Added to every API request, in ms. */
  latencyMs: z.number().int().min(0).max(60_000),
  /** Share (0..1) of API requests answered 503. */
  errorRate: z.number().min(0).max(1),
  /** The next `count` API requests are answered 429 with Retry-After. */
  throttle: z
    .strictObject({ count: z.number().int().min(0), retryAfterSeconds: z.number().min(0) })
    .nullable(),
  /** Share (0..1) of API requests whose connection is dropped without an answer. */
  dropRate: z.number().min(0).max(1),
  /** How long a write takes to show up in search (Jira's index lag), in ms. */
  searchLagMs: z.number().int().min(0).max(600_000),
});
export type FaultSettings = z.infer<typeof FaultSettingsSchema>;

export const NO_FAULTS: FaultSettings = {
  latencyMs: 0,
  errorRate: 0,
  throttle: null,
  dropRate: 0,
  searchLagMs: 0,
};

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  ms: number;
  /** When the answer went out (ISO 8601). */
  at: string;
  /** When the request arrived, before any latency the sandbox added (ISO 8601). */
  receivedAt: string;
  /** Set when the sandbox injected the answer (or the drop); `rate-limit`: refused by the limits (limits/). */
  fault?: 'latency' | 'error' | 'throttle' | 'rate-limit' | 'drop';
  /** Which limit refused or delayed it (`jira-burst-based`, `jira-per-issue-on-write`, `ado-tstu-delayed` ...). */
  reason?: string;
  /** The route: method and path template (`POST /rest/api/3/issue/{issueIdOrKey}/comment`). */
  endpoint?: string;
}

/** The tracker-specific part each sandbox supplies. */
export interface SandboxFlavour {
  name: string;
  /** Headers of a 429 as the real service sends them (Retry-After plus its own). */
  throttleHeaders(retryAfterSeconds: number): Record<string, string>;
  /** Body of an injected 429 / 503, in the tracker's own error shape. */
  errorBody(status: 429 | 503): unknown;
  /** (Re)generates the data; called at start and by reset/seed. */
  seed(opts: { items: number; seed: number }): void | Promise<void>;
}

export class SandboxControls {
  faults: FaultSettings = { ...NO_FAULTS };
  readonly requests: RequestLogEntry[] = [];
  random: Random;
  /** Every API route the sandbox serves (method and fastify path), for the conformance test. */
  readonly routes: { method: string; path: string }[] = [];
  items: number;
  seed: number;

  constructor(opts: { items: number; seed: number }) {
    this.items = opts.items;
    this.seed = opts.seed;
    this.random = seededRandom(opts.seed);
  }

  /** Decides the fault for one API request, if any. */
  nextFault(): RequestLogEntry['fault'] | undefined {
    const f = this.faults;
    if (f.throttle && f.throttle.count > 0) {
      f.throttle = { ...f.throttle, count: f.throttle.count - 1 };
      return 'throttle';
    }
    if (f.dropRate > 0 && this.random.chance(f.dropRate)) return 'drop';
    if (f.errorRate > 0 && this.random.chance(f.errorRate)) return 'error';
    return undefined;
  }
}

const isControlPath = (url: string) => url.startsWith('/_sandbox');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function createSandboxApp(
  flavour: SandboxFlavour,
  opts: {
    items: number;
    seed: number;
    /** Fastify's `rewriteUrl` (before routing; `req.originalUrl` keeps what the client asked for). */
    rewriteUrl?: (req: IncomingMessage) => string;
    /**
     * Paths served beside the tracker's API that fault injection leaves alone (an authorization server the
     * sandbox stands in for is another service); they are still logged.
     */
    faultExempt?: (url: string) => boolean;
  },
): Promise<{ app: FastifyInstance; controls: SandboxControls }> {
  const controls = new SandboxControls(opts);
  // Bodies up to 100 MiB: attachments are uploaded here; ids beyond JS safe integers never occur.
  const app = Fastify({
    logger: false,
    bodyLimit: 100 * 1024 * 1024,
    return503OnClosing: false,
    // A stop must not wait for a request its client abandoned (a simulated crash mid-upload leaves one open).
    forceCloseConnections: true,
    ...(opts.rewriteUrl ? { rewriteUrl: opts.rewriteUrl } : {}),
  });
  await flavour.seed({ items: controls.items, seed: controls.seed });
  app.addHook('onRoute', (route) => {
    if (isControlPath(route.url)) return;
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') controls.routes.push({ method, path: route.url });
    }
  });

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    (req as FastifyRequest & { startedAt: number }).startedAt = performance.now();
    (req as FastifyRequest & { receivedAt: string }).receivedAt = new Date().toISOString();
    if (isControlPath(req.url) || opts.faultExempt?.(req.url)) return;
    if (controls.faults.latencyMs > 0) await sleep(controls.faults.latencyMs);
    const fault = controls.nextFault();
    if (!fault) return;
    (req as FastifyRequest & { fault?: string }).fault = fault;
    if (fault === 'drop') {
      controls.requests.push({
        method: req.method,
        path: req.originalUrl,
        status: 0,
        ms: 0,
        at: new Date().toISOString(),
        receivedAt: (req as FastifyRequest & { receivedAt: string }).receivedAt,
        fault,
      });
      req.raw.socket.destroy();
      return reply.hijack();
    }
    if (fault === 'error') return reply.code(503).send(flavour.errorBody(503));
    const retryAfter = controls.faults.throttle?.retryAfterSeconds ?? 1;
    return reply.code(429).headers(flavour.throttleHeaders(retryAfter)).send(flavour.errorBody(429));
  });

  app.addHook('onResponse', async (req, reply) => {
    if (isControlPath(req.url)) return;
    const r = req as FastifyRequest & {
      startedAt?: number;
      receivedAt?: string;
      fault?: RequestLogEntry['fault'];
      reason?: string;
    };
    controls.requests.push({
      method: req.method,
      path: req.originalUrl,
      status: reply.statusCode,
      ms: Math.round((performance.now() - (r.startedAt ?? performance.now())) * 10) / 10,
      at: new Date().toISOString(),
      receivedAt: r.receivedAt ?? new Date().toISOString(),
      ...(req.routeOptions.url ? { endpoint: `${req.method} ${templateOf(req)}` } : {}),
      ...(r.fault ? { fault: r.fault } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
    });
  });

  app.post('/_sandbox/reset', async () => {
    controls.faults = { ...NO_FAULTS };
    controls.requests.length = 0;
    controls.random = seededRandom(controls.seed);
    await flavour.seed({ items: controls.items, seed: controls.seed });
    return { reset: true, items: controls.items, seed: controls.seed };
  });

  app.post('/_sandbox/seed', async (req, reply) => {
    const body = z
      .strictObject({
        items: z.number().int().min(0).max(200_000).optional(),
        seed: z.number().int().optional(),
      })
      .safeParse(req.body ?? {});
    if (!body.success) return reply.code(400).send({ message: body.error.issues.map((i) => i.message) });
    controls.items = body.data.items ?? controls.items;
    controls.seed = body.data.seed ?? controls.seed;
    controls.random = seededRandom(controls.seed);
    await flavour.seed({ items: controls.items, seed: controls.seed });
    return { items: controls.items, seed: controls.seed };
  });

  app.get('/_sandbox/faults', async () => controls.faults);
  app.put('/_sandbox/faults', async (req, reply) => {
    const body = FaultSettingsSchema.partial().safeParse(req.body ?? {});
    if (!body.success)
      return reply
        .code(400)
        .send({ message: body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    controls.faults = { ...controls.faults, ...body.data };
    return controls.faults;
  });

  // `from` and `count` let a bench read a phase's entries, or only how many, without the whole log again.
  app.get('/_sandbox/requests', async (req, reply) => {
    const query = z.object({ from: z.coerce.number().int().min(0).optional() }).safeParse(req.query ?? {});
    if (!query.success)
      return reply
        .code(400)
        .send({ message: query.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    return query.data.from === undefined ? controls.requests : controls.requests.slice(query.data.from);
  });
  app.get('/_sandbox/requests/count', async () => ({ count: controls.requests.length }));
  app.delete('/_sandbox/requests', async (_req, reply) => {
    controls.requests.length = 0;
    return reply.code(204).send();
  });

  return { app, controls };
}

/** Reads HTTP Basic credentials; undefined when absent or malformed. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
