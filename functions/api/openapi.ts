/**
 * The published OpenAPI 3.1 document, generated from THE route table (./routes.ts) and the zod schemas of
 * ./contract.ts: the same schemas the handlers parse requests with and type their answers by. Nothing here is
 * written by hand twice; `npm run openapi` writes it to docs/openapi.json and GET /api/openapi.json serves it.
 */

import * as z from 'zod';
import { ClientMessage, DASHBOARD_WS_PATH, DashboardFrame } from '#domain/dashboard-events.ts';
import { ErrorCode } from '#platform/errors.ts';
import { contracts, type ResponseBody, type RouteContract } from './contract.ts';
import { ErrorBodySchema } from './responses.ts';
import { type RateLimitBudget, type Route, routeKey, routes } from './routes.ts';

type Json = Record<string, unknown>;

/**
 * The HTTP status each code travels with (the catalogue's factories in #platform/errors.ts build them; a unit
 * test calls every factory and checks it against this). Typed by ErrorCode, so a new code cannot be left out.
 */
export const ERROR_STATUSES: Record<ErrorCode, readonly number[]> = {
  VALIDATION_FAILED: [400],
  UNAUTHORIZED: [401],
  TOKEN_EXPIRED: [401],
  INVALID_CREDENTIALS: [401],
  NO_REFRESH_TOKEN: [401],
  REFRESH_TOKEN_INVALID: [401],
  REFRESH_TOKEN_REUSED: [401],
  FORBIDDEN: [403],
  NOT_FOUND: [404],
  PROJECT_NOT_FOUND: [404],
  MEMBER_NOT_FOUND: [404],
  SCAN_NOT_FOUND: [404],
  SOURCE_TRACKER_ERROR: [502],
  ROUTE_NOT_FOUND: [404],
  METHOD_NOT_ALLOWED: [405],
  EMAIL_TAKEN: [409],
  LAST_OWNER: [409],
  UNSUPPORTED_MEDIA_TYPE: [415],
  PAYLOAD_TOO_LARGE: [413],
  RATE_LIMITED: [429],
  INTERNAL_ERROR: [500],
  MIGRATION_NOT_FOUND: [404],
  MIGRATION_NOT_PAUSED: [400],
  MIGRATION_ALREADY_RUNNING: [409],
  ENGINE_DISPATCH_FAILED: [502],
  MIGRATION_FINISHED: [409],
  REPORT_NOT_FOUND: [404],
  PREVIEW_NOT_FOUND: [404],
  IMPORT_FILE_NOT_FOUND: [404],
  IMPORT_BATCH_IMPORTED: [410],
  IMPORT_RUN_ENDED: [410],
  MIGRATION_NOT_FINISHED: [409],
  DRY_RUN_NOT_VERIFIABLE: [409],
  VERIFICATION_NOT_FOUND: [404],
  NOTHING_TO_ROLL_BACK: [409],
  NEWER_RUN_NOT_ROLLED_BACK: [409],
  ROLLBACK_PREVIEW_REQUIRED: [409],
  ROLLBACK_NOT_CONFIRMED: [400],
  ROLLBACK_NOT_FOUND: [404],
  SCAN_REQUIRED: [409],
  CONNECTION_REQUIRED: [409],
  TOKEN_EXCHANGE_FAILED: [400, 409],
  OAUTH_NOT_CONFIGURED: [400],
  OAUTH_STATE_INVALID: [400],
  MAPPINGS_NOT_SAVED: [409],
  TARGET_TRACKER_ERROR: [502],
  PROJECT_NOT_READY: [409],
  QUOTE_NOT_AVAILABLE: [409],
  QUOTE_CHANGED: [409],
  PAYMENT_PROVIDER_FAILED: [502],
  WEBHOOK_SIGNATURE_INVALID: [400],
  PAYMENT_NOT_FOUND: [404],
  SSO_NOT_CONFIGURED: [404],
  SSO_SLUG_TAKEN: [409],
  SSO_STATE_INVALID: [400],
  SSO_PROVIDER_ERROR: [400],
  SSO_ISSUER_MISMATCH: [400],
  SSO_CODE_REJECTED: [400],
  SSO_PROVIDER_UNAVAILABLE: [502],
  SSO_ID_TOKEN_INVALID: [401],
  SSO_EMAIL_NOT_VERIFIED: [403],
  SSO_DOMAIN_NOT_ALLOWED: [403],
  SSO_ACCOUNT_NOT_ALLOWED: [403],
  SESSION_REVOKED: [401],
  OAUTH_SCOPE_MISMATCH: [409],
  GRANT_PAIRING_FORBIDDEN: [403],
  INVITATION_INVALID: [400],
  INVITATION_NOT_FOUND: [404],
  INVITATION_WITHDRAWN: [400],
  MAIL_UNAVAILABLE: [502],
  STREAM_LIMIT: [429],
  SCAN_ALREADY_RUNNING: [409],
  SCAN_LIMIT: [429],
};

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const ALL_ROLES = ['owner', 'admin', 'member'];

/** The codes a route answers because of its shape: who may call it, its body, its query, its path ids. */
export function errorCodesOf(route: Route, contract: RouteContract): ErrorCode[] {
  const codes = new Set<ErrorCode>(contract.errors ?? []);
  if (route.access !== 'public') {
    codes.add(ErrorCode.UNAUTHORIZED);
    codes.add(ErrorCode.TOKEN_EXPIRED);
    // The token's user was removed or re-roled since it was signed (#services/session-check.ts).
    codes.add(ErrorCode.SESSION_REVOKED);
    if (ALL_ROLES.some((r) => !(route.access as readonly string[]).includes(r)))
      codes.add(ErrorCode.FORBIDDEN);
  }
  if (route.rateLimit) codes.add(ErrorCode.RATE_LIMITED);
  if (BODY_METHODS.has(route.method) && !route.streaming) {
    codes.add(ErrorCode.VALIDATION_FAILED);
    codes.add(ErrorCode.UNSUPPORTED_MEDIA_TYPE);
    codes.add(ErrorCode.PAYLOAD_TOO_LARGE);
  }
  if (contract.query || route.streaming) codes.add(ErrorCode.VALIDATION_FAILED);
  if (route.path.includes('{projectId}')) codes.add(ErrorCode.PROJECT_NOT_FOUND);
  if (route.path.includes('{runId}')) codes.add(ErrorCode.MIGRATION_NOT_FOUND);
  codes.add(ErrorCode.INTERNAL_ERROR);
  return [...codes];
}

/** Converts zod to JSON Schema, lifting named (`.meta({id})`) schemas into `components.schemas`. */
class SchemaConverter {
  readonly components: Record<string, Json> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): Json {
    const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    delete out.$schema;
    for (const [id, def] of Object.entries(defs)) this.components[id] = this.relink(def);
    // A named schema at the top comes back whole with its id: refer to it instead.
    const id = typeof out.id === 'string' ? out.id : undefined;
    if (id) {
      delete out.id;
      this.components[id] = this.relink(out);
      return { $ref: `#/components/schemas/${id}` };
    }
    return this.relink(out);
  }

  private relink(node: Json): Json {
    return JSON.parse(JSON.stringify(node).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  }
}

function parametersOf(route: Route, contract: RouteContract, schemas: SchemaConverter): Json[] {
  const params: Json[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: name === 'kind' ? { type: 'string', enum: ['source', 'target'] } : { type: 'string' },
  }));
  if (contract.query) {
    const q = schemas.convert(contract.query, 'input');
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, Json>))
      params.push({ name, in: 'query', required: required.has(name), schema });
  }
  if (route.streaming) {
    params.push(
      {
        name: 'token',
        in: 'query',
        required: true,
        schema: { type: 'string' },
        description: 'The access token',
      },
      { name: 'lastEventId', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
    );
  }
  return params;
}

function successResponse(status: number, body: ResponseBody, schemas: SchemaConverter): Json {
  const description = status === 302 ? 'Redirect' : status === 204 ? 'No content' : 'Success';
  if ('kind' in body && typeof body.kind === 'string') {
    switch (body.kind) {
      case 'empty':
        return { description };
      case 'redirect':
        return { description, headers: { Location: { schema: { type: 'string' } } } };
      case 'sse':
        return {
          description: 'Server-Sent Events',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        };
      case 'csv':
        return { description, content: { 'text/csv': { schema: { type: 'string' } } } };
      case 'csv-or-json':
        return {
          description,
          content: {
            'application/json': { schema: schemas.convert(body.json, 'output') },
            'text/csv': { schema: { type: 'string' } },
          },
        };
    }
  }
  return {
    description,
    content: { 'application/json': { schema: schemas.convert(body as z.ZodType, 'output') } },
  };
}

function errorResponses(codes: ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    for (const status of ERROR_STATUSES[code]) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: list.join(', '),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorBody' },
              { type: 'object', properties: { statusCode: { const: status }, code: { enum: list } } },
            ],
          },
        },
      },
    };
  }
  return out;
}

/** What a route's description says of its rate limit (functions/api/routes.ts RateLimitBudget). */
const RATE_LIMIT_NOTES: Record<RateLimitBudget, string> = {
  'sign-in': 'Rate limited per client address (an IPv6 client by its /64).',
  session: 'Rate limited per client address (an IPv6 client by its /64), with a budget larger than sign-in.',
  scan: 'Rate limited per user.',
};

function operationOf(route: Route, contract: RouteContract, schemas: SchemaConverter): Json {
  const roles = route.access === 'public' ? 'public' : route.access.join(', ');
  const codes = errorCodesOf(route, contract);
  const op: Json = {
    operationId: `${route.group}_${route.operation}`,
    tags: [route.group],
    summary: contract.summary,
    description: `Roles: ${roles}.${route.rateLimit ? ` ${RATE_LIMIT_NOTES[route.rateLimit]}` : ''}`,
    'x-roles': route.access === 'public' ? [] : [...route.access],
    'x-error-codes': codes,
    security: route.access === 'public' ? [] : route.streaming ? [{ streamToken: [] }] : [{ bearerAuth: [] }],
  };
  const parameters = parametersOf(route, contract, schemas);
  if (parameters.length) op.parameters = parameters;
  if (contract.body) {
    const bodies = Array.isArray(contract.body) ? contract.body : [contract.body as z.ZodType];
    const converted = bodies.map((b) => schemas.convert(b, 'input'));
    const schema = converted.length === 1 ? converted[0] : { oneOf: converted };
    op.requestBody = { required: true, content: { 'application/json': { schema } } };
  } else if (route.path === '/api/billing/webhooks/payments') {
    op.requestBody = {
      required: true,
      description: "The payment provider's event, exactly as it signed it",
      content: { 'application/json': { schema: {} } },
    };
  }
  const responses: Record<string, Json> = {};
  for (const [status, body] of Object.entries(contract.responses))
    responses[status] = successResponse(Number(status), body, schemas);
  op.responses = { ...responses, ...errorResponses(codes) };
  return op;
}

/** Builds the document; throws when a route has no contract (or a contract no route), so neither drifts. */
export function buildOpenApiDocument(): Json {
  const schemas = new SchemaConverter();
  schemas.convert(ErrorBodySchema, 'output');
  const paths: Record<string, Json> = {};
  const keys = new Set(routes.map((r) => routeKey(r.method, r.path)));
  const orphans = Object.keys(contracts).filter((k) => !keys.has(k));
  if (orphans.length) throw new Error(`contracts for routes that do not exist: ${orphans.join(', ')}`);
  for (const route of routes) {
    const contract = contracts[routeKey(route.method, route.path)];
    if (!contract) throw new Error(`route ${routeKey(route.method, route.path)} has no contract`);
    paths[route.path] = {
      ...paths[route.path],
      [route.method.toLowerCase()]: operationOf(route, contract, schemas),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tracker Migration Service API',
      version: '1.0.0',
      description:
        'Migrates Azure DevOps Boards work items into Jira Cloud. Every error answers `{statusCode, message, ' +
        'error, code}`; `x-error-codes` lists the codes an operation can answer and `x-roles` who may call it. ' +
        'Unknown routes answer 404 ROUTE_NOT_FOUND, a known path with another method 405 METHOD_NOT_ALLOWED.',
    },
    tags: [...new Set(routes.map((r) => r.group))].map((name) => ({ name })),
    paths,
    // Not a REST path (OpenAPI has no WebSocket operations): described beside them, frames as JSON Schema.
    'x-websockets': {
      [DASHBOARD_WS_PATH]: {
        summary: 'Tenant dashboard: every run of the tenant, live',
        description:
          '`GET /api/ws?token=<access token>`, upgraded to a WebSocket. Refusals come before the upgrade as HTTP ' +
          'answers with the error body: 401 UNAUTHORIZED / TOKEN_EXPIRED / SESSION_REVOKED, 429 STREAM_LIMIT ' +
          "(DASHBOARD_MAX_PER_USER). The server sends JSON text frames (`serverFrames`) of the connection's own " +
          'tenant only; a client may send `clientMessages` (`{"action":"ping"}`, answered `{"type":"pong"}`; ' +
          'anything else `{"type":"error","code":"UNKNOWN_ACTION"}`). docs/api.md, "Tenant dashboard (WebSocket)".',
        'x-roles': ['owner', 'admin', 'member'],
        'x-error-codes': ['UNAUTHORIZED', 'TOKEN_EXPIRED', 'SESSION_REVOKED', 'STREAM_LIMIT'],
        serverFrames: schemas.convert(DashboardFrame, 'output'),
        clientMessages: schemas.convert(ClientMessage, 'input'),
      },
    },
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        streamToken: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: 'An EventSource cannot send headers: the access token travels in the query',
        },
      },
    },
  };
}

let cached: Json | undefined;
/** Built once per process (a Lambda's cold start). */
export const openApiDocument = (): Json => {
  cached ??= buildOpenApiDocument();
  return cached;
};
