/**
 * GET /api/migrations/{runId}/stream?token=...: the run's events as Server-Sent Events, from a Lambda
 * response-streaming handler. Not on the middy stack: the answer is a stream, not a proxy result, and the
 * token comes from the query (an EventSource cannot send an Authorization header). Everything that can refuse
 * the request (token, role, run) is checked before the first byte, so a refusal is an ordinary JSON error;
 * the session is checked again at every poll while the stream lives, and a session that ended ends it.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { StreamQuerySchema } from '#api/requests.ts';
import { routesOf } from '#api/routes.ts';
import { storedId } from '#domain/ids.ts';
import { sseRetry } from '#domain/sse.ts';
import { awslambda } from '#platform/awslambda.ts';
import { nowEpochSeconds, nowMs } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { corsHeadersFor } from '#platform/cors.ts';
import { readEnv } from '#platform/env.ts';
import { errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { type Principal, verifyAccessToken } from '#platform/tokens.ts';
import { parseOrThrow } from '#platform/validation.ts';
import { streamRun } from '#services/run-stream.ts';
import { currentPrincipal, sessionHolds } from '#services/session-check.ts';
import { store } from '#store/index.ts';

const route = routesOf('stream').find((r) => r.operation === 'events');
if (!route || route.access === 'public') throw new Error('route group stream lacks a protected events route');
const allowedRoles: readonly string[] = route.access;

/** Tunable for tests and load: how often the store is polled, and the heartbeat interval. */
const settings = readEnv(['STREAM_POLL_MS', 'STREAM_HEARTBEAT_MS']);

/** A run's trailing events are written just after its status moves; see RunStreamOptions.settleMs. */
const SETTLE_MS = 3_000;
/**
 * Items a read of the run's events asks for. An item is a checkpoint's bundle (its chunk's lines and progress,
 * several KB), so at 200 a replay's read was the 1 MB DynamoDB answers at most, some 11,000 events decoded at once.
 * At 50 (and a page's messages written in pieces, services/run-stream.ts), a 50,000-line replay held the service's
 * event loop 55 ms at most, against 150-270 ms (bench log).
 */
const PAGE_SIZE = 50;
/** What an EventSource waits before reconnecting after the stream ends early (the invocation's time ran out). */
const RETRY_MS = 2_000;
/** Event ids are ours (`02.00000050.0003`, `02.00000050.-...`); anything else is refused, not queried. */
const EVENT_ID = /^[\w.:-]{1,100}$/;
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-store',
  'X-Content-Type-Options': 'nosniff',
  // Proxies that buffer (nginx) would hold the events back.
  'X-Accel-Buffering': 'no',
};

let active = 0;
/** Streams open in this process (tests watch it fall to zero when a client goes away). */
export const activeStreams = (): number => active;

function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (k.toLowerCase() === wanted) return v ?? undefined;
  return undefined;
}

/**
 * Where a reconnecting client resumes: the Last-Event-ID header an EventSource sends by itself, else the
 * `lastEventId` query parameter (for clients that cannot set headers on the first connection).
 */
function resumeAfter(event: APIGatewayProxyEvent): string | undefined {
  const id = (headerOf(event, 'last-event-id') ?? event.queryStringParameters?.lastEventId ?? '').trim();
  if (!id) return undefined;
  if (!EVENT_ID.test(id)) throw errors.validation(['Last-Event-ID is not an event id of this stream']);
  return id;
}

/** Seconds a lease outlives the invocation's deadline (clock skew between instances). */
const LEASE_MARGIN_SECONDS = 5;

/**
 * The last check before the stream opens: a place among the user's STREAM_MAX_PER_USER open streams, counted
 * in the table so every instance agrees. The lease lapses when this invocation must have ended.
 */
async function takeStreamPlace(principal: Principal, context: Context): Promise<StreamPlace> {
  const now = nowEpochSeconds();
  const lease = {
    id: randomUUID(),
    expiresAt: now + Math.ceil(context.getRemainingTimeInMillis() / 1000) + LEASE_MARGIN_SECONDS,
  };
  const max = config().streamMaxPerUser;
  if (!(await store().streamLeases.acquire(principal.tenantId, principal.userId, lease, max, now)))
    throw errors.streamLimit(max);
  return { tenantId: principal.tenantId, userId: principal.userId, leaseId: lease.id };
}

interface StreamPlace {
  tenantId: string;
  userId: string;
  leaseId: string;
}

async function admit(event: APIGatewayProxyEvent, context: Context) {
  const token = event.queryStringParameters?.token;
  if (!token) throw errors.unauthorized();
  const principal = await currentPrincipal(store(), await verifyAccessToken(token));
  if (!allowedRoles.includes(principal.role)) throw errors.forbidden();
  const runId = event.pathParameters?.runId ?? '';
  // Run ids are UUIDs, stored lower case: any other id is simply not found, without a read.
  const id = storedId(runId);
  const run = id ? await store().runs.get(principal.tenantId, id) : undefined;
  if (!run) throw errors.migrationNotFound(runId);
  const after = resumeAfter(event);
  const { tail } = parseOrThrow(StreamQuerySchema, event.queryStringParameters ?? {}, 'query');
  return { principal, run, after, tail, place: await takeStreamPlace(principal, context) };
}

function refuse(event: APIGatewayProxyEvent, responseStream: Writable, err: unknown): void {
  if (!(err instanceof HttpError)) {
    const e = err as Error | undefined;
    logger.error('stream refused on an unexpected error', { errorName: e?.name, errorMessage: e?.message });
  }
  const httpError = err instanceof HttpError ? err : errors.internal();
  const out = awslambda.HttpResponseStream.from(responseStream, {
    statusCode: httpError.statusCode,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      ...httpError.headers,
      ...corsHeadersFor(event.headers),
    },
  });
  out.end(JSON.stringify(httpError.toBody()));
}

async function serve(event: APIGatewayProxyEvent, responseStream: Writable, context: Context): Promise<void> {
  let admitted: Awaited<ReturnType<typeof admit>>;
  try {
    admitted = await admit(event, context);
  } catch (err) {
    refuse(event, responseStream, err);
    return;
  }
  const { principal, run, after, tail, place } = admitted;
  const out = awslambda.HttpResponseStream.from(responseStream, {
    statusCode: 200,
    // An EventSource of another origin (withCredentials or not) reads the stream only with these.
    headers: { ...SSE_HEADERS, ...corsHeadersFor(event.headers) },
  });
  const closed = new AbortController();
  const stop = () => closed.abort();
  out.once('close', stop);
  out.on('error', stop);
  active += 1;
  try {
    // The first bytes also send the headers, so the client knows it is connected before any event exists.
    out.write(sseRetry(RETRY_MS));
    const runs = store().runs;
    // Without a place to resume from, `tail` starts the stream at the run's newest events: a page that shows the
    // end of a long run's log is not sent its whole history to throw away. A resume (what a reconnecting
    // EventSource sends, on the same URL) wins over it.
    const from =
      after ??
      (tail === undefined
        ? undefined
        : await runs.eventIdBeforeNewest(run.tenantId, run.projectId, run.id, tail));
    const end = await streamRun(
      {
        readEvents: (afterId, limit) => runs.events(run.tenantId, run.projectId, run.id, afterId, limit),
        readRun: () => runs.get(run.tenantId, run.id),
        write: async (text) => {
          if (closed.signal.aborted) return;
          if (!out.write(text)) await once(out, 'drain', { signal: closed.signal }).catch(() => undefined);
        },
        sleep: (ms, signal) => delay(ms, undefined, { signal }).catch(() => undefined),
        now: nowMs,
        // Through the session check's cache, as every API request: the user is read again at most every
        // SESSION_CHECK_CACHE_SECONDS, and at once where this instance made the change.
        sessionHolds: () => sessionHolds(store(), principal),
      },
      {
        lastEventId: from,
        pollMs: settings.STREAM_POLL_MS,
        heartbeatMs: settings.STREAM_HEARTBEAT_MS,
        settleMs: SETTLE_MS,
        pageSize: PAGE_SIZE,
        signal: closed.signal,
        remainingMs: () => context.getRemainingTimeInMillis(),
      },
    );
    logger.debug('run stream ended', { runId: run.id, tenantId: run.tenantId, end });
  } catch (err) {
    const e = err as Error;
    logger.error('run stream failed', { runId: run.id, errorName: e.name, errorMessage: e.message });
  } finally {
    active -= 1;
    await store()
      .streamLeases.release(place.tenantId, place.userId, place.leaseId)
      .catch((err: Error) => logger.warn('stream lease not released', { errorName: err.name }));
    out.off('close', stop);
    if (!out.writableEnded && !out.destroyed) out.end();
  }
}

export const handler = awslambda.streamifyResponse<APIGatewayProxyEvent>(serve);
