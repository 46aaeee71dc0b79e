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
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { templateOf } from './limits/install.ts';
import { type Random, seededRandom } from './random.ts';

/**
 * Limits a counted burst to one endpoint, method and path template as the request log names it (`POST
 * /rest/api/3/issue/{issueIdOrKey}/attachments`); without it, any API request counts.
 */
const endpoint = z.string().min(1).optional();

export const FaultSettingsSchema = z.strictObject({
  /** Added to every API request, in ms. */
  latencyMs: z.number().int().min(0).max(60_000),
  /** Share (0..1) of API requests answered 503. */
  errorRate: z.number().min(0).max(1),
  /**
   * The next `count` API requests are answered 429 with Retry-After; `reason` names which of the tracker's limits
   * the 429 stands for (Jira: `jira-burst-based`, the default, `jira-per-issue-on-write`, `jira-quota-global-based`;
   * Azure DevOps: `TF400733`, its only one), with that limit's headers.
   */
  throttle: z
    .strictObject({
      count: z.number().int().min(0),
      retryAfterSeconds: z.number().min(0),
      reason: z.string().min(1).optional(),
      endpoint,
    })
    .nullable(),
  /** Share (0..1) of API requests whose connection is dropped without an answer. */
  dropRate: z.number().min(0).max(1),
  /** How long a write takes to show up in search (Jira's index lag), in ms. */
  searchLagMs: z.number().int().min(0).max(600_000),
  /** The next `count` API requests are answered `status` (a 5xx, 503 by default) before they are worked. */
  errors: z
    .strictObject({
      count: z.number().int().min(0),
      status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).default(503),
      endpoint,
    })
    .nullable(),
  /**
   * The next `count` API requests are worked and their answers held back `ms`: past a client's timeout, the
   * client gives up on a request that happened (a write landed, its answer never read).
   */
  hangs: z
    .strictObject({ count: z.number().int().min(0), ms: z.number().int().min(1).max(600_000), endpoint })
    .nullable(),
  /**
   * The next `count` API requests get their connection reset instead of an answer: before they are worked, or
   * (`landed`) after, so a write happened though its client saw only the reset.
   */
  resets: z
    .strictObject({ count: z.number().int().min(0), landed: z.boolean().default(false), endpoint })
    .nullable(),
});
export type FaultSettings = z.infer<typeof FaultSettingsSchema>;

export const NO_FAULTS: FaultSettings = {
  latencyMs: 0,
  errorRate: 0,
  throttle: null,
  dropRate: 0,
  searchLagMs: 0,
  errors: null,
  hangs: null,
  resets: null,
};

/** The `client` of each Authorization header seen lately: a run sends one header (or a few tokens) throughout. */
const clients = new Map<string, string>();

/** A request log's `client`: who sent a request, as a short hash of its Authorization header. */
export function clientOf(authorization: string): string {
  let client = clients.get(authorization);
  if (client === undefined) {
    client = createHash('sha256').update(authorization).digest('hex').slice(0, 12);
    // Rotated OAuth tokens add headers: kept to a few hundred.
    if (clients.size >= 500) clients.clear();
    clients.set(authorization, client);
  }
  return client;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  ms: number;
  /** When the answer went out (ISO 8601). */
  at: string;
  /** When the request arrived, before any latency the sandbox added (ISO 8601). */
  receivedAt: string;
  /**
   * Set when the sandbox injected the answer (or the drop, or the held answer); `rate-limit`: refused by the
   * limits (limits/).
   */
  fault?: InjectedFault | 'latency' | 'rate-limit';
  /**
   * Which limit refused or delayed it (`jira-burst-based`, `jira-per-issue-on-write`, `ado-tstu-delayed` ...);
   * for an injected throttle, the reason it stood for; `landed` for a connection reset after the request was worked.
   */
  reason?: string;
  /** The route: method and path template (`POST /rest/api/3/issue/{issueIdOrKey}/comment`). */
  endpoint?: string;
  /**
   * Who sent it: a short hash of its Authorization header (never the credential), so that the requests of several
   * clients working one site can be told apart (the site bench counts each run's); absent without the header.
   */
  client?: string;
}

/** What the sandbox can inject into one API request. */
export type InjectedFault = 'error' | 'throttle' | 'drop' | 'hang';

/** The fault one API request gets, with what it needs. */
type Injection =
  | { fault: 'error'; status: number }
  | { fault: 'throttle'; retryAfterSeconds: number; reason: string | undefined }
  | { fault: 'drop'; landed: boolean }
  | { fault: 'hang'; ms: number };

/** The tracker-specific part each sandbox supplies. */
export interface SandboxFlavour {
  name: string;
  /** The reasons an injected 429 may stand for (`throttle.reason`); the first is the default. */
  throttleReasons: readonly [string, ...string[]];
  /** Headers of a 429 for `reason` as the real service sends them (Retry-After plus its own). */
  throttleHeaders(retryAfterSeconds: number, reason: string): Record<string, string>;
  /** Body of an injected 429 / 5xx, in the tracker's own error shape. */
  errorBody(status: number): unknown;
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

  /**
   * Decides the fault for one API request to `endpoint` (`POST /rest/api/3/issue/{issueIdOrKey}/comment`), if
   * any: the counted bursts first (each only for its endpoint when it names one), then the rates.
   */
  nextFault(endpoint?: string): Injection | undefined {
    const f = this.faults;
    const applies = (burst: { count: number; endpoint?: string | undefined } | null) =>
      burst !== null && burst.count > 0 && (burst.endpoint === undefined || burst.endpoint === endpoint);
    if (f.throttle && applies(f.throttle)) {
      f.throttle = { ...f.throttle, count: f.throttle.count - 1 };
      return {
        fault: 'throttle',
        retryAfterSeconds: f.throttle.retryAfterSeconds,
        reason: f.throttle.reason,
      };
    }
    if (f.errors && applies(f.errors)) {
      f.errors = { ...f.errors, count: f.errors.count - 1 };
      return { fault: 'error', status: f.errors.status };
    }
    if (f.resets && applies(f.resets)) {
      f.resets = { ...f.resets, count: f.resets.count - 1 };
      return { fault: 'drop', landed: f.resets.landed };
    }
    if (f.hangs && applies(f.hangs)) {
      f.hangs = { ...f.hangs, count: f.hangs.count - 1 };
      return { fault: 'hang', ms: f.hangs.ms };
    }
    if (f.dropRate > 0 && this.random.chance(f.dropRate)) return { fault: 'drop', landed: false };
    if (f.errorRate > 0 && this.random.chance(f.errorRate)) return { fault: 'error', status: 503 };
    return undefined;
  }
}

/** A request as the hooks track it. */
type Tracked = FastifyRequest & {
  startedAt?: number;
  receivedAt?: string;
  fault?: RequestLogEntry['fault'];
  reason?: string;
  /** A hang: its answer is held back this long. */
  holdMs?: number;
  /** A landed reset: the connection is reset once the request was worked. */
  resetAfterWork?: boolean;
  /** Its log entry is written already (the client was gone before the answer). */
  logged?: boolean;
};

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

  /** One request's log entry, as it stands now. */
  const entryOf = (req: Tracked, status: number): RequestLogEntry => ({
    method: req.method,
    path: req.originalUrl,
    status,
    ms: Math.round((performance.now() - (req.startedAt ?? performance.now())) * 10) / 10,
    at: new Date().toISOString(),
    receivedAt: req.receivedAt ?? new Date().toISOString(),
    ...(req.routeOptions.url ? { endpoint: `${req.method} ${templateOf(req)}` } : {}),
    ...(req.fault ? { fault: req.fault } : {}),
    ...(req.reason ? { reason: req.reason } : {}),
    ...(req.headers.authorization ? { client: clientOf(req.headers.authorization) } : {}),
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const req = request as Tracked;
    req.startedAt = performance.now();
    req.receivedAt = new Date().toISOString();
    if (isControlPath(req.url) || opts.faultExempt?.(req.url)) return;
    if (controls.faults.latencyMs > 0) await sleep(controls.faults.latencyMs);
    const injection = controls.nextFault(
      req.routeOptions.url ? `${req.method} ${templateOf(req)}` : undefined,
    );
    if (!injection) return;
    req.fault = injection.fault;
    switch (injection.fault) {
      case 'drop':
        // After the work (landed): the answer is replaced by the reset in onSend.
        if (injection.landed) {
          req.reason = 'landed';
          req.resetAfterWork = true;
          return;
        }
        controls.requests.push({ ...entryOf(req, 0), ms: 0 });
        req.raw.socket.destroy();
        return reply.hijack();
      case 'hang':
        req.holdMs = injection.ms;
        return;
      case 'error':
        return reply.code(injection.status).send(flavour.errorBody(injection.status));
      case 'throttle': {
        const reason = injection.reason ?? flavour.throttleReasons[0];
        req.reason = reason;
        return reply
          .code(429)
          .headers(flavour.throttleHeaders(injection.retryAfterSeconds, reason))
          .send(flavour.errorBody(429));
      }
    }
  });

  // The request was worked: its answer is held back (a hang) or replaced by a reset (landed).
  app.addHook('onSend', async (request, _reply, payload) => {
    const req = request as Tracked;
    if (req.holdMs) {
      await sleep(req.holdMs);
      // The client gave up meanwhile: no answer goes out, and none is logged after this.
      if (req.raw.socket?.destroyed) {
        req.logged = true;
        controls.requests.push(entryOf(req, 0));
      }
    }
    if (req.resetAfterWork) {
      req.logged = true;
      controls.requests.push(entryOf(req, 0));
      // What fastify then writes goes nowhere: the socket is gone.
      req.raw.socket?.destroy();
    }
    return payload;
  });

  app.addHook('onResponse', async (req, reply) => {
    if (isControlPath(req.url) || (req as Tracked).logged) return;
    controls.requests.push(entryOf(req as Tracked, reply.statusCode));
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
    const reason = body.data.throttle?.reason;
    if (reason !== undefined && !flavour.throttleReasons.includes(reason))
      return reply.code(400).send({
        message: [`throttle.reason: one of ${flavour.throttleReasons.join(', ')} (got ${reason})`],
      });
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
