/**
 * The API's Lambda handler factory. One handler serves one route group; the middleware order is fixed here,
 * once: error shaping (outermost) -> header normalising -> route -> authentication and role -> rate limit ->
 * JSON body (a public route passes authentication untouched, so its limit still comes before any other work;
 * a limit per user needs the user first). Operations receive a parsed request and return a plain result; every answer gets the CORS
 * headers of ALLOWED_ORIGINS (./cors.ts).
 */

import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type RateLimitBudget, type Route, type RouteGroup, routeKey, routesOf } from '#api/routes.ts';
import { clientOf } from '#domain/rate-limits.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { parseCookieHeader } from '#platform/cookies.ts';
import { corsHeadersFor } from '#platform/cors.ts';
import { errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { flushMetrics } from '#platform/metrics.ts';
import { type Principal, verifyAccessToken } from '#platform/tokens.ts';
import { currentPrincipal } from '#services/session-check.ts';
import { store } from '#store/index.ts';

export interface ApiRequest {
  route: Route;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  cookies: Record<string, string>;
  body: unknown;
  /** The body exactly as received (a webhook's signature covers these bytes, not re-serialised JSON). */
  rawBody: string;
  sourceIp: string;
  requestId: string;
}

export interface AuthedRequest extends ApiRequest {
  principal: Principal;
}

export interface ApiResult {
  statusCode: number;
  body?: unknown;
  /** A body sent as it is (a CSV export) instead of `body` as JSON; set its Content-Type in `headers`. */
  text?: string;
  headers?: Record<string, string>;
  cookies?: string[];
}

export type PublicOperation = (req: ApiRequest) => Promise<ApiResult>;
export type Operation = (req: AuthedRequest) => Promise<ApiResult>;

/** Request bodies above this are refused before parsing (API Gateway's own cap is 10 MB). */
export const MAX_BODY_BYTES = 1024 * 1024;
const RATE_WINDOW_SECONDS = 60;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const BASE_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

type ApiMiddyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/** Per-invocation state, keyed by the event so concurrent invocations never share it. */
interface State {
  request: ApiRequest;
  principal?: Principal;
  extraHeaders: Record<string, string>;
}
const states = new WeakMap<APIGatewayProxyEvent, State>();
const stateOf = (event: APIGatewayProxyEvent): State => {
  const s = states.get(event);
  if (!s) throw new Error('request state missing: route middleware did not run');
  return s;
};

export function json(
  statusCode: number,
  body?: unknown,
  extra: Omit<ApiResult, 'statusCode' | 'body'> = {},
): ApiResult {
  return { statusCode, body, ...extra };
}

/** A 200 file download (an export, an import file): its text as written, under `filename`. */
export function attachment(text: string, contentType: string, filename: string): ApiResult {
  return {
    statusCode: 200,
    text,
    headers: { 'Content-Type': contentType, 'Content-Disposition': `attachment; filename="${filename}"` },
  };
}

/** A 302 to `location` (the browser legs of single sign-on), with the cookies it sets. */
export function redirect(location: string, extra: { cookies?: string[] } = {}): ApiResult {
  return { statusCode: 302, headers: { Location: location }, ...extra };
}

/** Every answer, errors included, carries the CORS headers its request's Origin earns (./cors.ts). */
function toProxyResult(
  event: APIGatewayProxyEvent,
  result: ApiResult,
  extraHeaders: Record<string, string>,
): APIGatewayProxyResult {
  const headers = { ...BASE_HEADERS, ...extraHeaders, ...result.headers, ...corsHeadersFor(event.headers) };
  const out: APIGatewayProxyResult = {
    statusCode: result.statusCode,
    headers,
    body: result.text ?? (result.body === undefined ? '' : JSON.stringify(result.body)),
  };
  if (result.cookies?.length) out.multiValueHeaders = { 'Set-Cookie': result.cookies };
  return out;
}

const errorResponder = (): ApiMiddleware => ({
  onError: (request: ApiMiddyRequest) => {
    const err = request.error;
    const known = err instanceof HttpError ? err : undefined;
    if (!known) {
      logger.error('unhandled error', {
        errorName: err?.name,
        errorMessage: err?.message,
        stack: err?.stack,
        path: request.event.resource,
      });
    }
    const httpError = known ?? errors.internal();
    const extra = states.get(request.event)?.extraHeaders ?? {};
    request.response = toProxyResult(
      request.event,
      { statusCode: httpError.statusCode, body: httpError.toBody(), headers: httpError.headers },
      extra,
    );
  },
});

const routeResolver = (group: RouteGroup): ApiMiddleware => {
  const table = new Map(routesOf(group).map((r) => [routeKey(r.method, r.path), r]));
  return {
    before: (request: ApiMiddyRequest) => {
      const e = request.event;
      const route = table.get(routeKey(e.httpMethod, e.resource));
      if (!route) throw errors.routeNotFound(e.httpMethod, e.path);
      const headers = (e.headers ?? {}) as Record<string, string>;
      states.set(e, {
        request: {
          route,
          params: (e.pathParameters ?? {}) as Record<string, string>,
          query: (e.queryStringParameters ?? {}) as Record<string, string>,
          headers,
          cookies: parseCookieHeader(headers.cookie),
          body: undefined,
          rawBody: '',
          sourceIp: e.requestContext?.identity?.sourceIp ?? 'unknown',
          requestId: e.requestContext?.requestId ?? '',
        },
        extraHeaders: {},
      });
    },
  };
};

/** A budget's limit per window, and whom it counts (functions/api/routes.ts RateLimitBudget). */
function budgetOf(budget: RateLimitBudget, state: State): { limit: number; subject: string } {
  const client = clientOf(state.request.sourceIp);
  switch (budget) {
    case 'sign-in':
      return { limit: config().authRateLimitPerMinute, subject: client };
    case 'session':
      return { limit: config().refreshRateLimitPerMinute, subject: client };
    case 'scan': {
      const principal = state.principal;
      if (!principal)
        throw new Error(`${state.request.route.path} counts per user but has no user (public?)`);
      return { limit: config().scanRateLimitPerMinute, subject: `${principal.tenantId}#${principal.userId}` };
    }
  }
}

const rateLimiter = (): ApiMiddleware => ({
  before: async (request: ApiMiddyRequest) => {
    const state = stateOf(request.event);
    const { route } = state.request;
    if (!route.rateLimit) return;
    const { limit, subject } = budgetOf(route.rateLimit, state);
    const now = nowEpochSeconds();
    // Each route its own window: a spent login budget leaves refresh (and the other way round) untouched.
    const bucket = route.path.replaceAll('/', '_');
    const { count, resetAt } = await store().rateLimits.hit(bucket, subject, now, RATE_WINDOW_SECONDS);
    if (count > limit) throw errors.rateLimited(Math.max(1, resetAt - now), limit, resetAt);
    state.extraHeaders['X-RateLimit-Limit'] = String(limit);
    state.extraHeaders['X-RateLimit-Remaining'] = String(Math.max(0, limit - count));
    state.extraHeaders['X-RateLimit-Reset'] = String(resetAt);
  },
});

const authenticator = (): ApiMiddleware => ({
  before: async (request: ApiMiddyRequest) => {
    const state = stateOf(request.event);
    const { route, headers } = state.request;
    if (route.access === 'public') return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
    if (!match?.[1]) throw errors.unauthorized();
    // Signature and expiry first, then the user record: removed users and old roles stop here.
    const principal = await currentPrincipal(store(), await verifyAccessToken(match[1]));
    if (!route.access.includes(principal.role)) throw errors.forbidden();
    state.principal = principal;
  },
});

const jsonBody = (): ApiMiddleware => ({
  before: (request: ApiMiddyRequest) => {
    const e = request.event;
    const state = stateOf(e);
    if (!BODY_METHODS.has(e.httpMethod) || !e.body) return;
    const raw = e.isBase64Encoded ? Buffer.from(e.body, 'base64').toString('utf8') : e.body;
    if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw errors.payloadTooLarge(MAX_BODY_BYTES);
    const contentType = state.request.headers['content-type'] ?? '';
    if (!/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) throw errors.unsupportedMediaType();
    state.request.rawBody = raw;
    try {
      state.request.body = JSON.parse(raw);
    } catch {
      throw errors.validation(['body must be valid JSON']);
    }
  },
});

/**
 * Builds the Lambda handler of a route group. Every operation the route table names for the group must be
 * given, checked at cold start, so a route cannot exist without its code.
 */
export function createApiHandler(group: RouteGroup, operations: Record<string, Operation | PublicOperation>) {
  for (const route of routesOf(group)) {
    if (!operations[route.operation])
      throw new Error(`route group ${group} lacks operation ${route.operation}`);
  }
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(errorResponder())
    .use(httpHeaderNormalizer())
    .use(routeResolver(group))
    .use(authenticator())
    .use(rateLimiter())
    .use(jsonBody())
    .handler(async (event) => {
      const state = stateOf(event);
      const op = operations[state.request.route.operation] as Operation;
      try {
        const result = await op(
          state.principal
            ? { ...state.request, principal: state.principal }
            : (state.request as AuthedRequest),
        );
        return toProxyResult(event, result, state.extraHeaders);
      } finally {
        // What the operation counted (runs, tracker calls) is published with this request, not a later one.
        flushMetrics();
      }
    });
}
