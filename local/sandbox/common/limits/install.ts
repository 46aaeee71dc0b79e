/**
 * Hooks a sandbox's rate limits and latency into its fastify app, and serves their settings:
 *   GET /_sandbox/limits   {profile, latency, limits}
 *   PUT /_sandbox/limits   {latency?, limits?} merged into the current settings (objects deeply, the rest replaced)
 *   POST /_sandbox/reset   (the shared one) also restores the start profile's settings and forgets all usage
 * Profiles: `realistic` (the bench and `npm start`'s demo: the real services' limits, latency of a real site) and
 * `off` (tests: no limit, no latency, unless a test sets them). Requests the limits refuse are logged with
 * `fault: 'rate-limit'` and their `reason`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type Random, seededRandom } from '../random.ts';
import { drawLatencyMs, type LatencySettings, LatencySettingsSchema, transferMs } from './latency.ts';

export type SandboxProfile = 'realistic' | 'off';

/** What one request is, as the limits see it. */
export interface RequestFacts {
  method: string;
  /** `/rest/api/3/issue/{issueIdOrKey}`: fastify's route url with `:param` written `{param}`. */
  template: string;
  write: boolean;
}

export type Admission =
  | { kind: 'go'; delayMs: number; headers: Record<string, string>; reason?: string }
  | { kind: 'refused'; reason: string; headers: Record<string, string>; body: unknown };

/** A tracker's limits behind the hooks. */
export interface TrackerLimits<S> {
  schema: z.ZodType<S>;
  settings: S;
  admit(req: FastifyRequest, facts: RequestFacts, now: number): Admission;
  /** After the handler: charge what the answer cost; headers to add to it. */
  answered(req: FastifyRequest, facts: RequestFacts, payload: unknown, now: number): Record<string, string>;
  reset(): void;
}

export interface LimitsHandle {
  latency: LatencySettings;
}

const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `base` with `patch` laid over it: objects merged key by key, anything else replaced. */
export function deepMerge<T>(base: T, patch: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(patch)) return (patch === undefined ? base : patch) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = deepMerge(out[k], v);
  return out as T;
}

/** Each route's template by its fastify path: a sandbox has a few hundred routes, and every request asks. */
const templates = new Map<string, string>();

/** The route's template in the `{param}` spelling the real APIs' documentation uses. */
export function templateOf(req: FastifyRequest): string {
  const route = req.routeOptions.url;
  if (route === undefined) return (req.url.split('?')[0] ?? req.url).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  let template = templates.get(route);
  if (template === undefined) {
    template = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    templates.set(route, template);
  }
  return template;
}

const contentLength = (value: unknown): number => {
  const n = Number(Array.isArray(value) ? value[0] : value);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

export function installLimits<S>(
  app: FastifyInstance,
  opts: {
    limits: TrackerLimits<S>;
    /** Settings of each profile. */
    profiles: Record<SandboxProfile, { latency: LatencySettings; limits: S }>;
    profile: SandboxProfile;
    /** Whether a request is an API call the limits apply to (not a control path, not a stand-in service). */
    applies: (req: FastifyRequest) => boolean;
    isWrite: (req: FastifyRequest) => boolean;
    seed: number;
  },
): LimitsHandle {
  const { limits } = opts;
  const start = () => opts.profiles[opts.profile];
  const handle: LimitsHandle = { latency: start().latency };
  limits.settings = start().limits;
  let random: Random = seededRandom(opts.seed ^ 0x5eed);
  const facts = new WeakMap<FastifyRequest, RequestFacts>();

  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method === 'POST' && req.url === '/_sandbox/reset') {
      handle.latency = start().latency;
      limits.settings = start().limits;
      limits.reset();
      random = seededRandom(opts.seed ^ 0x5eed);
      return;
    }
    if (!opts.applies(req)) return;
    const f: RequestFacts = { method: req.method, template: templateOf(req), write: opts.isWrite(req) };
    facts.set(req, f);
    const latency = handle.latency;
    const base =
      drawLatencyMs(f.write ? latency.write : latency.read, random) +
      transferMs(latency, contentLength(req.headers['content-length']));
    const admission = limits.admit(req, f, Date.now());
    if (admission.kind === 'refused') {
      Object.assign(req as FastifyRequest & { fault?: string; reason?: string }, {
        fault: 'rate-limit',
        reason: admission.reason,
      });
      await sleep(drawLatencyMs(latency.read, random));
      return reply.code(429).headers(admission.headers).send(admission.body);
    }
    reply.headers(admission.headers);
    if (admission.reason) (req as FastifyRequest & { reason?: string }).reason = admission.reason;
    await sleep(base + admission.delayMs);
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const f = facts.get(req);
    if (!f || reply.statusCode === 429) return payload;
    reply.headers(limits.answered(req, f, payload, Date.now()));
    // A download's transfer time, by the answer's size: measured only when a pace is set (a string's UTF-8 length
    // is a pass over the whole answer: a few per cent of an engine test file's CPU, where the profile is off).
    if (req.method !== 'GET' || handle.latency.transferMsPerMiB <= 0) return payload;
    const size =
      contentLength(reply.getHeader('content-length')) ||
      (typeof payload === 'string' || Buffer.isBuffer(payload) ? Buffer.byteLength(payload) : 0);
    await sleep(transferMs(handle.latency, size));
    return payload;
  });

  app.get('/_sandbox/limits', async () => ({
    profile: opts.profile,
    latency: handle.latency,
    limits: limits.settings,
  }));
  app.put('/_sandbox/limits', async (req, reply) => {
    const body = (req.body ?? {}) as { latency?: unknown; limits?: unknown };
    const problems: string[] = [];
    const latency = LatencySettingsSchema.safeParse(deepMerge(handle.latency, body.latency));
    if (!latency.success)
      problems.push(...latency.error.issues.map((i) => `latency.${i.path.join('.')}: ${i.message}`));
    const merged = limits.schema.safeParse(deepMerge(limits.settings, body.limits));
    if (!merged.success)
      problems.push(...merged.error.issues.map((i) => `limits.${i.path.join('.')}: ${i.message}`));
    const unknown = Object.keys(isPlainObject(req.body) ? req.body : {}).filter(
      (k) => k !== 'latency' && k !== 'limits',
    );
    problems.push(...unknown.map((k) => `${k}: unknown setting`));
    if (problems.length > 0 || !latency.success || !merged.success)
      return reply.code(400).send({ message: problems });
    handle.latency = latency.data;
    limits.settings = merged.data;
    return { profile: opts.profile, latency: handle.latency, limits: limits.settings };
  });
  return handle;
}
