/**
 * The sandboxes' answer to a request for a route the real service has but the sandbox does not emulate: 501
 * with `X-Sandbox-Not-Emulated: true` and a message "not emulated by the sandbox: METHOD PATH", in the
 * tracker's own error shape. Neither Azure DevOps nor Jira Cloud answers 501 to an API path, so a client can
 * tell "the sandbox lacks this" from "the API lacks this" (the real "no such route" answer, kept for paths the
 * official specs do not have). Which routes the real service has: the tracker's api-routes.ts, generated from
 * the official OpenAPI descriptions (spec-routes.ts).
 *
 * Two ways a request reaches an unemulated route: no sandbox route matches (the tracker's not-found handler
 * asks `isApiRoute`), or a served route with a parameter swallows a literal the real API routes elsewhere
 * (`GET /rest/api/3/issue/picker` would reach `GET /rest/api/3/issue/{issueIdOrKey}`): the hook installed by
 * `installNotEmulated` answers those before the handler runs.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const NOT_EMULATED_STATUS = 501;
export const NOT_EMULATED_HEADER = 'x-sandbox-not-emulated';
export const NOT_EMULATED_PREFIX = 'not emulated by the sandbox:';

export const notEmulatedMessage = (method: string, path: string): string =>
  `${NOT_EMULATED_PREFIX} ${method.toUpperCase()} ${path}`;

/** A template segment: a literal (lower case), null for a parameter, '$' for ADO's `${type}` / `$:type`. */
type Segment = string | null;

function segments(template: string): Segment[] {
  return template
    .split('/')
    .filter(Boolean)
    .map((s) =>
      /^\$(\{.+\}|:.+)$/.test(s) ? '$' : /^\{.+\}$/.test(s) || s.startsWith(':') ? null : s.toLowerCase(),
    );
}

const key = (method: string, segs: Segment[]) =>
  `${method.toUpperCase()} /${segs.map((s) => (s === null ? '{}' : s)).join('/')}`;

/** `METHOD /a/{}/b` for a spec template (`{x}`) or a fastify path (`:x`): equal when they route alike. */
export const routeShape = (method: string, template: string): string => key(method, segments(template));

interface ApiRoute {
  method: string;
  segs: Segment[];
  key: string;
  pattern: RegExp;
}

function compile(route: string): ApiRoute {
  const [method = '', template = ''] = route.split(' ');
  const segs = segments(template);
  const source = segs
    .map((s) => (s === null ? '[^/]+' : s === '$' ? '\\$[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return {
    method: method.toUpperCase(),
    segs,
    key: key(method, segs),
    pattern: new RegExp(`^/${source}/?$`, 'i'),
  };
}

export interface NotEmulatedOptions {
  /** The real service's routes, `METHOD /template` (api-routes.ts). */
  routes: readonly string[];
  /** Maps a request path onto the specs' paths before matching (Jira's /rest/api/2 onto /rest/api/3). */
  specPath?: (path: string) => string;
  /** Sends the answer in the tracker's error shape (status, header and message are given). */
  send: (reply: FastifyReply, message: string) => FastifyReply;
}

export interface NotEmulated {
  /** Whether the real service has this route (method and concrete path). */
  isApiRoute(method: string, path: string): boolean;
  /** Answers a request as not emulated. */
  reply(req: FastifyRequest, reply: FastifyReply): FastifyReply;
}

/**
 * Learns the sandbox's own routes as they are registered (call before registering them) and adds the hook for
 * the swallowed-literal case; the returned `isApiRoute`/`reply` serve the tracker's not-found handler.
 */
export function installNotEmulated(app: FastifyInstance, opts: NotEmulatedOptions): NotEmulated {
  const api = opts.routes.map(compile);
  const served = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) served.add(key(method, segments(route.url)));
  });
  const bare = (url: string) => {
    const path = url.split('?')[0] ?? url;
    return opts.specPath ? opts.specPath(path) : path;
  };
  // Per served route: the unserved API routes it would swallow (computed once, on its first request).
  const shadows = new Map<string, ApiRoute[]>();
  const shadowed = (method: string, url: string): ApiRoute[] => {
    const k = `${method} ${url}`;
    let found = shadows.get(k);
    if (!found) {
      const mine = segments(url);
      found = api.filter(
        (r) =>
          r.method === method &&
          !served.has(r.key) &&
          r.segs.length === mine.length &&
          r.segs.every((s, i) => mine[i] === null || mine[i] === s) &&
          r.segs.some((s, i) => mine[i] === null && s !== null),
      );
      shadows.set(k, found);
    }
    return found;
  };
  const answer = (req: FastifyRequest, reply: FastifyReply) =>
    opts.send(
      reply.code(NOT_EMULATED_STATUS).header(NOT_EMULATED_HEADER, 'true'),
      notEmulatedMessage(req.method, req.url.split('?')[0] ?? req.url),
    );
  app.addHook('onRequest', async (req, reply) => {
    const url = req.routeOptions.url;
    if (!url) return;
    const path = bare(req.url);
    if (shadowed(req.method, url).some((r) => r.pattern.test(path))) return answer(req, reply);
  });
  return {
    isApiRoute: (method, path) => {
      const p = bare(path);
      return api.some((r) => r.method === method.toUpperCase() && r.pattern.test(p));
    },
    reply: answer,
  };
}
