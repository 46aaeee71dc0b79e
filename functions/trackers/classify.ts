/**
 * One decision per tracker response (Airbyte's `ErrorResolution`): what one attempt's outcome, an answer or what
 * the attempt threw, means for the request, decided once and in one place; the HTTP layer's one loop (http.ts)
 * acts on it. Pure: no I/O, no pacer, no clock but the one a date-form Retry-After is read against.
 */
import type { ConnectionKind } from '#domain/connectors.ts';
import type { AnswerHeaders } from '#outbound/fetch.ts';
import { type RequestKey, type ThrottleScope, throttleScope } from './pacing.ts';
import { TrackerHttpError, TrackerUnreachableError } from './tracker-errors.ts';

/** What classify needs to know of the request an outcome belongs to. */
export interface CallFacts {
  tracker: ConnectionKind;
  /** The tracker's host, for TrackerUnreachableError. */
  host: string;
  method: string;
  /** The path without its query string: what errors and log lines name. */
  path: string;
  key: RequestKey;
  /** Error statuses the caller takes as answers (e.g. 404 when probing). */
  accept?: readonly number[] | undefined;
  /** A 3xx is the answer (not followed). */
  manualRedirect?: boolean | undefined;
  /** A write that must not happen twice: retried only after a 429. */
  notIdempotent?: boolean | undefined;
  /** Under an OAuth token source not yet asked for a fresher token in this request: a 401 asks it once. */
  mayRefreshToken: boolean;
  /** 429s this request has had so far: without a hint from the tracker, the wait doubles with each. */
  throttles: number;
}

/** What to do with one attempt's outcome. */
export type Decision =
  /** The answer is the request's: a 2xx, a 3xx under manualRedirect, an accepted status. */
  | { readonly kind: 'success' }
  /** A 429: pause the scope it applies to, then send again, however often, after `retryAfterMs`. */
  | {
      readonly kind: 'throttled';
      readonly scope: ThrottleScope;
      readonly retryAfterMs: number;
      /** Jira's RateLimit-Reason, when it gave one. */
      readonly reason: string | null;
      /** X-RateLimit-Limit: for a burst 429, the endpoint's rate per second. */
      readonly limit?: number;
    }
  /** A 5xx or a network error: send again after the tracker's hint or a backoff, while attempts are left. */
  | {
      readonly kind: 'retry';
      readonly retryAfterMs: number | undefined;
      /** What the request ends with when no attempt is left. */
      readonly error: TrackerHttpError | TrackerUnreachableError;
    }
  /** A 401 under an OAuth token source: ask it once for a fresher token and send again. */
  | { readonly kind: 'refresh-token' }
  /** An error answer that stands: the request ends with TrackerHttpError carrying the answer's body. */
  | { readonly kind: 'refused' }
  /** Not an answer, nor worth another attempt: the request ends with `error`. */
  | { readonly kind: 'fail'; readonly error: unknown };

export type ThrottledDecision = Extract<Decision, { kind: 'throttled' }>;

// The answers without details are shared: the hot path's success allocates nothing.
const SUCCESS: Decision = Object.freeze({ kind: 'success' });
const REFRESH_TOKEN: Decision = Object.freeze({ kind: 'refresh-token' });
const REFUSED: Decision = Object.freeze({ kind: 'refused' });

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);

/** An answer as classify reads it: a fetch Response, or the outbound policy's light answer. */
export interface TrackerAnswer {
  readonly status: number;
  readonly headers: AnswerHeaders;
}

const isAnswer = (outcome: unknown): outcome is TrackerAnswer =>
  typeof outcome === 'object' &&
  outcome !== null &&
  !(outcome instanceof Error) &&
  typeof (outcome as { status?: unknown }).status === 'number' &&
  typeof (outcome as { headers?: { get?: unknown } }).headers?.get === 'function';

/**
 * Decides what one attempt's outcome means: `outcome` is the tracker's answer, or what the attempt threw
 * (a network error, a timeout, the outbound policy's refusal, a refused token refresh).
 */
export function classify(outcome: unknown, call: CallFacts): Decision {
  if (!isAnswer(outcome)) return classifyThrown(outcome, call);
  const status = outcome.status;
  // A 429 comes before the tracker does anything: safe to send again, also for a write.
  if (status === 429) return throttled(outcome.headers, call);
  if (RETRYABLE_STATUS.has(status) && !call.notIdempotent)
    return {
      kind: 'retry',
      retryAfterMs: retryAfterMs(outcome.headers),
      error: new TrackerHttpError(call.tracker, status, call.method, call.path, undefined),
    };
  if (
    (status >= 200 && status < 300) ||
    (call.manualRedirect && status >= 300 && status < 400) ||
    call.accept?.includes(status)
  )
    return SUCCESS;
  if (status === 401 && call.mayRefreshToken) return REFRESH_TOKEN;
  // A 5xx to a write that must not happen twice may follow a write that happened: the caller checks first.
  return REFUSED;
}

function throttled(headers: AnswerHeaders, call: CallFacts): ThrottledDecision {
  const reason = headers.get('ratelimit-reason');
  const limit = Number(headers.get('x-ratelimit-limit'));
  return {
    kind: 'throttled',
    scope: throttleScope(call.key, reason),
    // Without a hint: 1 s, doubling, at most 30 s.
    retryAfterMs: retryAfterMs(headers) ?? Math.min(30_000, 1000 * 2 ** call.throttles),
    reason,
    ...(Number.isFinite(limit) && limit > 0 ? { limit } : {}),
  };
}

function classifyThrown(err: unknown, call: CallFacts): Decision {
  if (!isNetworkError(err)) return { kind: 'fail', error: err };
  const unreachable = new TrackerUnreachableError(call.tracker, call.host, networkReason(err));
  // A dropped connection may follow a write that happened: a write that must not happen twice is not sent again.
  if (call.notIdempotent) return { kind: 'fail', error: unreachable };
  return { kind: 'retry', retryAfterMs: undefined, error: unreachable };
}

/** The wait a throttled answer asks for, in ms, from whichever header the tracker uses. */
export function retryAfterMs(headers: AnswerHeaders, now = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const adoDelay = headers.get('x-ratelimit-delay'); // ADO: seconds (may be fractional)
  if (adoDelay && Number.isFinite(Number(adoDelay))) return Math.max(0, Number(adoDelay) * 1000);
  const reset = headers.get('x-ratelimit-reset'); // Jira: an ISO timestamp
  if (reset && headers.get('ratelimit-reason')) {
    const at = Date.parse(reset);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  return undefined;
}

/** A failure to reach the tracker at all: a timeout, or undici's socket failures. */
export function isNetworkError(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return true;
  // undici wraps socket failures as TypeError('fetch failed') with the cause attached.
  return err instanceof TypeError && err.message === 'fetch failed';
}

function networkReason(err: Error): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
