/**
 * The local API Gateway: serves THE route table over node:http, turning each request into the same REST API
 * proxy event API Gateway would send, and calling the same Lambda handler the route group deploys as.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type Route, type RouteGroup, routes } from '../functions/api/routes.ts';
import { isStreamingHandler, type StreamingHandler } from '../functions/platform/awslambda.ts';
import { errors, type HttpError } from '../functions/platform/errors.ts';
import { artifactLinks, DiskArtifactLinks, LOCAL_LINK_PATH } from '../functions/store/artifact-links.ts';
import { serveConsole } from './static-files.ts';
import { type DashboardSocketHandler, LocalWebSockets } from './websockets.ts';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type HandlerLoader = (group: RouteGroup) => Promise<ApiHandler>;

/** Lambda's synchronous invocation payload limit: a larger request never reaches a function in AWS either. */
const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/** API Gateway's integration timeout. */
const INTEGRATION_TIMEOUT_MS = 29_000;
/** A streamed response may last as long as its function: Lambda's (and a REST streaming integration's) 15 min. */
const STREAMING_TIMEOUT_MS = 15 * 60_000;

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  params: string[];
}

function compile(route: Route): CompiledRoute {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (!m?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(m[1]);
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source}/?$`), params };
}

export const defaultHandlerLoader: HandlerLoader = async (group) => {
  const mod = (await import(`../functions/api/${group}.ts`)) as { handler: ApiHandler };
  return mod.handler;
};

function lambdaContext(functionName: string, timeoutMs = INTEGRATION_TIMEOUT_MS): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function sendError(res: ServerResponse, err: HttpError): void {
  res.writeHead(err.statusCode, { 'Content-Type': 'application/json; charset=utf-8', ...err.headers });
  res.end(JSON.stringify(err.toBody()));
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Who the client is, as API Gateway tells a function (`requestContext.identity.sourceIp`): the TCP peer. */
export const peerAddress = (req: IncomingMessage): string =>
  (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');

function buildEvent(
  req: IncomingMessage,
  url: URL,
  match: CompiledRoute,
  values: string[],
  body: Buffer,
  sourceIp: string,
) {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    multiQuery[k] = [...(multiQuery[k] ?? []), v];
  }
  const pathParameters = Object.fromEntries(
    match.params.map((p, i) => [p, decodeURIComponent(values[i] ?? '')]),
  );
  const isText =
    body.length === 0 || /json|text|x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '');
  const event: APIGatewayProxyEvent = {
    resource: match.route.path,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: match.params.length ? pathParameters : null,
    stageVariables: null,
    body: body.length === 0 ? null : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: !isText && body.length > 0,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method ?? 'GET',
      identity: {
        sourceIp,
        userAgent: req.headers['user-agent'] ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: match.route.path,
    },
  };
  return event;
}

function writeResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/**
 * A response-streaming route: the handler writes to the ServerResponse itself, through the awslambda shim
 * (`HttpResponseStream.from` sets status and headers on it). Headers are not flushed here first, or the
 * handler's would be lost.
 */
async function stream(
  handler: ApiHandler,
  event: APIGatewayProxyEvent,
  res: ServerResponse,
  functionName: string,
): Promise<void> {
  if (!isStreamingHandler(handler)) throw new Error(`${functionName} is not a streaming handler`);
  const streaming = handler as unknown as StreamingHandler<APIGatewayProxyEvent>;
  await streaming(event, res, lambdaContext(functionName, STREAMING_TIMEOUT_MS));
  if (!res.writableEnded) res.end();
}

export interface Gateway {
  server: Server;
  url: string;
  /** The dashboard's WebSockets (`/api/ws`), and the stand-in for the management API that posts to them. */
  websockets: LocalWebSockets;
  close(): Promise<void>;
}

/** The dashboard WebSocket's handler (functions/api/dashboard.ts), as its Lambda is deployed. */
export const defaultDashboardLoader = async (): Promise<DashboardSocketHandler> =>
  ((await import('../functions/api/dashboard.ts')) as { handler: DashboardSocketHandler }).handler;

/**
 * A signed link to a run's copy for Jira's importer (store/artifact-links.ts): offline only, where the links are
 * the local service's own (in AWS they are S3's). The bytes, or a refusal naming nothing of the store.
 */
async function serveLink(url: URL, res: ServerResponse): Promise<void> {
  const links = artifactLinks();
  const served =
    links instanceof DiskArtifactLinks
      ? await links.serve(url.pathname, url.searchParams)
      : { status: 404 as const, message: 'There is nothing at this link.' };
  if (served.status !== 200) {
    res.writeHead(served.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify({ message: served.message }));
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(served.size),
    'Cache-Control': 'no-store',
  });
  await pipeline(Readable.fromWeb(served.stream as WebReadableStream), res);
}

export async function startGateway(opts: {
  port: number;
  host?: string;
  loadHandler?: HandlerLoader;
  /** The dashboard WebSocket's handler (tests wrap it as they wrap the route groups'). */
  loadDashboardHandler?: () => Promise<DashboardSocketHandler>;
  onError?: (err: unknown) => void;
  /** The built web console (web/dist), served for every path outside /api (local/static-files.ts). */
  consoleDir?: string;
  /**
   * The client's address for a request: the TCP peer (`peerAddress`) unless given. Tests give one to play
   * clients this machine has no address for (several IPv6 addresses of one /64); `npm start` never does.
   */
  clientAddress?: (req: IncomingMessage) => string;
}): Promise<Gateway> {
  const compiled = routes.map(compile);
  const load = opts.loadHandler ?? defaultHandlerLoader;
  const handlers = new Map<RouteGroup, Promise<ApiHandler>>();

  const websockets = new LocalWebSockets(opts.loadDashboardHandler ?? defaultDashboardLoader, opts.onError);

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      if (url.pathname.startsWith(LOCAL_LINK_PATH) && req.method === 'GET') {
        req.resume();
        return await serveLink(url, res);
      }
      const candidates = compiled.flatMap((c) => {
        const m = c.pattern.exec(url.pathname);
        return m ? [{ c, values: m.slice(1) }] : [];
      });
      const method = req.method ?? 'GET';
      const hit = candidates.find(({ c }) => c.route.method === method);
      if (!hit && opts.consoleDir && !url.pathname.startsWith('/api/') && url.pathname !== '/api') {
        req.resume();
        if (await serveConsole(opts.consoleDir, req, res, url.pathname)) return;
      }
      if (!hit) {
        req.resume();
        if (candidates.length === 0) return sendError(res, errors.routeNotFound(method, url.pathname));
        return sendError(
          res,
          errors.methodNotAllowed(
            method,
            url.pathname,
            candidates.map(({ c }) => c.route.method),
          ),
        );
      }
      const body = await readBody(req);
      if (body === 'too-large') return sendError(res, errors.payloadTooLarge(MAX_REQUEST_BYTES));
      const group = hit.c.route.group;
      if (!handlers.has(group)) handlers.set(group, load(group));
      const handler = await (handlers.get(group) as Promise<ApiHandler>);
      const sourceIp = (opts.clientAddress ?? peerAddress)(req);
      const event = buildEvent(req, url, hit.c, hit.values, body, sourceIp);
      if (hit.c.route.streaming) return await stream(handler, event, res, `api-${group}`);
      const result = await handler(event, lambdaContext(`api-${group}`));
      writeResult(res, result);
    } catch (err) {
      opts.onError?.(err);
      if (!res.headersSent) sendError(res, errors.internal());
      else res.destroy();
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  websockets.attach(server);
  const { port } = server.address() as AddressInfo;
  return {
    server,
    websockets,
    url: `http://${opts.host === '0.0.0.0' ? '127.0.0.1' : (opts.host ?? '127.0.0.1')}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        websockets.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
