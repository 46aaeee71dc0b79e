/**
 * The one resilient HTTP layer under both tracker clients: a timeout per attempt; retries with exponential
 * backoff and jitter (cockatiel) on 429, 5xx and network errors, waiting at least what the tracker asked for
 * (Retry-After, Jira's X-RateLimit-Reset / RateLimit-Reason, ADO's X-RateLimit-Delay); bounded concurrency
 * that halves when the tracker throttles and grows back slowly; and one shared pause for every request to a
 * tracker that just said 429. Credentials ride in headers and are never logged: log lines carry method, path
 * (query string dropped), status, attempt and time only.
 */
import {
  ExponentialBackoff,
  handleWhen,
  type IBackoff,
  type IBackoffFactory,
  type IRetryBackoffContext,
  retry,
} from 'cockatiel';
import type { ConnectionKind } from '#domain/connectors.ts';
import { type OutboundInit, outboundFetch, readTextCapped } from '#outbound/fetch.ts';
import type { Destination } from '#outbound/rules.ts';
import { logger } from '#platform/logger.ts';
import { countTrackerCall, type TrackerCallStatus, type TrackerKind } from '#platform/metrics.ts';

type Body = NonNullable<RequestInit['body']>;

export interface TrackerCallStats {
  calls: number;
  throttled: number;
  retries: number;
  errors: number;
}

export interface HttpOptions {
  tracker: ConnectionKind;
  /** Which product this is, for the `tracker` dimension of the tracker metrics (none recorded without it). */
  name?: TrackerKind;
  baseUrl: string;
  /**
   * Which hosts the outbound policy lets this client reach: `tracker` (the default) the allow-listed tracker
   * hosts; `public` any public host (a plugin's service, whose URL only the operator sets).
   */
  destination?: Destination;
  /** The Authorization header: a fixed value (PAT, API token) or an OAuth token source. Never logged. */
  authorization: string | AuthorizationSource;
  timeoutMs?: number;
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  maxConcurrency?: number;
  stats?: TrackerCallStats;
  /** Ids added to every log line of this client (the engine's tenant and run): which run made the call. */
  logKeys?: Readonly<Record<string, string>>;
}

/**
 * An OAuth access token that expires: the header is asked for before every attempt (the source refreshes it
 * shortly before expiry), and a 401 asks the source once whether a fresher token exists (revoked early, clock
 * skew), after which the request is sent once more. A refused refresh throws from either (TokenExchangeError).
 */
export interface AuthorizationSource {
  header(): Promise<string>;
  /** A request sent at `sentAtMs` got 401: true when a newer token is now available to try once more. */
  rejected(sentAtMs: number): Promise<boolean>;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A body factory for streamed uploads: called again for each attempt, since a stream reads once. */
  rawBody?: () =>
    | Promise<{ body: Body; headers: Record<string, string> }>
    | { body: Body; headers: Record<string, string> };
  headers?: Record<string, string>;
  /** Answers not to treat as errors (e.g. 404 when probing). */
  accept?: number[];
  /** Do not follow redirects: return the 3xx (Jira's attachment-content redirect carries the media id). */
  manualRedirect?: boolean;
  /**
   * A write that must not happen twice (bulk create, comment, worklog): retried only after a 429, which the
   * tracker sends before doing anything. A dropped connection or a 5xx may follow a write that happened, so
   * those surface to the caller, who checks the tracker before trying again.
   */
  notIdempotent?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A tracker answered with an error status (after retries, for retryable ones). */
export class TrackerHttpError extends Error {
  override name = 'TrackerHttpError';
  constructor(
    readonly tracker: ConnectionKind,
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: unknown,
  ) {
    super(`${tracker} tracker answered ${status} to ${method} ${path}`);
  }
}

/** The tracker could not be reached at all (DNS, refused, reset, timeout), after retries. */
export class TrackerUnreachableError extends Error {
  override name = 'TrackerUnreachableError';
  constructor(
    readonly tracker: ConnectionKind,
    readonly host: string,
    readonly reason: string,
  ) {
    super(`${tracker} tracker unreachable at ${host}: ${reason}`);
  }
}

/** Thrown inside an attempt for an answer worth retrying; carries the tracker's hint. */
class RetryableAnswer extends Error {
  constructor(
    readonly response: Response,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`retryable ${response.status}`);
  }
}

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

/** The wait a throttled answer asks for, in ms, from whichever header the tracker uses. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
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

/** Exponential backoff with jitter, never shorter than what the tracker asked for. */
class TrackerBackoff implements IBackoffFactory<IRetryBackoffContext<unknown>> {
  constructor(private readonly inner: IBackoffFactory<IRetryBackoffContext<unknown>>) {}

  next(context: IRetryBackoffContext<unknown>): IBackoff<IRetryBackoffContext<unknown>> {
    return wrapBackoff(this.inner.next(context), context);
  }
}

function wrapBackoff(
  inner: IBackoff<IRetryBackoffContext<unknown>>,
  context: IRetryBackoffContext<unknown>,
): IBackoff<IRetryBackoffContext<unknown>> {
  const reason = context.result;
  const hinted =
    'error' in reason && reason.error instanceof RetryableAnswer ? reason.error.retryAfterMs : undefined;
  return {
    duration: hinted !== undefined ? Math.max(hinted, 0) : inner.duration,
    next: (c) => wrapBackoff(inner.next(c), c),
  };
}

/**
 * Concurrency that adapts: halves on a throttle (down to 1), grows by one after a run of successes (up to the
 * ceiling). Waiters queue in order.
 */
export class AdaptiveConcurrency {
  private limit: number;
  private active = 0;
  private successes = 0;
  private readonly queue: (() => void)[] = [];
  /** Until when every request waits, after a 429 with a Retry-After. */
  private pausedUntil = 0;

  constructor(private readonly ceiling: number) {
    this.limit = ceiling;
  }

  get currentLimit(): number {
    return this.limit;
  }

  async acquire(): Promise<void> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.queue.push(resolve)); // the releaser hands its slot over
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  release(): void {
    // Over the (lowered) limit, the slot is freed; otherwise it passes straight to the next waiter.
    const next = this.active <= this.limit ? this.queue.shift() : undefined;
    if (next) next();
    else this.active--;
  }

  onThrottle(retryAfter: number | undefined): void {
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.successes = 0;
    if (retryAfter) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + retryAfter);
  }

  onSuccess(): void {
    if (++this.successes >= 20 && this.limit < this.ceiling) {
      this.limit++;
      this.successes = 0;
    }
  }
}

export class TrackerHttp {
  readonly stats: TrackerCallStats;
  readonly concurrency: AdaptiveConcurrency;
  private readonly policy;
  private readonly origin: string;

  constructor(private readonly opts: HttpOptions) {
    this.stats = opts.stats ?? { calls: 0, throttled: 0, retries: 0, errors: 0 };
    this.concurrency = new AdaptiveConcurrency(opts.maxConcurrency ?? 8);
    this.origin = new URL(opts.baseUrl).host;
    this.policy = retry(
      handleWhen((err) => err instanceof RetryableAnswer || isNetworkError(err)),
      {
        maxAttempts: (opts.maxAttempts ?? 6) - 1,
        backoff: new TrackerBackoff(
          new ExponentialBackoff({
            initialDelay: opts.initialDelayMs ?? 200,
            maxDelay: opts.maxDelayMs ?? 30_000,
          }),
        ),
      },
    );
    this.policy.onRetry(() => {
      this.stats.retries++;
    });
  }

  /** The longest one attempt may take: a write begun at T has landed, if at all, by T + this. */
  get timeoutMs(): number {
    return this.opts.timeoutMs ?? 30_000;
  }

  get baseUrl(): string {
    return this.opts.baseUrl;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const url = new URL(path.startsWith('http') ? path : `${this.opts.baseUrl.replace(/\/$/, '')}${path}`);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    return this.withFreshToken(() => this.send<T>(method, url, options));
  }

  /** Runs `call`; a 401 under an OAuth token source is tried once more when the source has a newer token. */
  private async withFreshToken<T>(call: () => Promise<T>): Promise<T> {
    const source = this.opts.authorization;
    const sentAt = Date.now();
    try {
      return await call();
    } catch (err) {
      if (typeof source === 'string' || !(err instanceof TrackerHttpError) || err.status !== 401) throw err;
      if (!(await source.rejected(sentAt))) throw err;
      return call();
    }
  }

  private authorizationHeader(): Promise<string> {
    const a = this.opts.authorization;
    return typeof a === 'string' ? Promise.resolve(a) : a.header();
  }

  private async send<T>(method: string, url: URL, options: RequestOptions): Promise<HttpResponse<T>> {
    const logPath = url.pathname;
    try {
      return await this.policy.execute(async ({ attempt }) => {
        await this.concurrency.acquire();
        const started = performance.now();
        try {
          let response: Response;
          try {
            response = await this.attempt(method, url, options);
          } catch (err) {
            if (isNetworkError(err)) this.countCall('network');
            if (options.notIdempotent && isNetworkError(err)) {
              this.stats.errors++;
              throw new TrackerUnreachableError(this.opts.tracker, this.origin, networkReason(err));
            }
            throw err;
          }
          this.stats.calls++;
          this.countCall(response.status);
          logger.debug('tracker call', {
            ...this.opts.logKeys,
            tracker: this.opts.tracker,
            method,
            path: logPath,
            status: response.status,
            attempt,
            ms: Math.round(performance.now() - started),
          });
          if (RETRYABLE_STATUS.has(response.status) && !(options.notIdempotent && response.status !== 429)) {
            const hint = retryAfterMs(response.headers);
            if (response.status === 429) {
              this.stats.throttled++;
              this.concurrency.onThrottle(hint);
            }
            await response.body?.cancel();
            throw new RetryableAnswer(response, hint);
          }
          this.concurrency.onSuccess();
          return await this.toResponse<T>(method, logPath, response, options);
        } finally {
          this.concurrency.release();
        }
      });
    } catch (err) {
      if (err instanceof RetryableAnswer) {
        this.stats.errors++;
        throw new TrackerHttpError(this.opts.tracker, err.response.status, method, logPath, undefined);
      }
      if (isNetworkError(err)) {
        this.stats.errors++;
        throw new TrackerUnreachableError(this.opts.tracker, this.origin, networkReason(err));
      }
      throw err;
    }
  }

  /** One attempt, in the tracker metrics: TrackerCalls, plus TrackerThrottles on 429, TrackerErrors on 5xx. */
  private countCall(status: TrackerCallStatus): void {
    if (this.opts.name) countTrackerCall({ tracker: this.opts.name, status });
  }

  private async attempt(method: string, url: URL, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = {
      Authorization: await this.authorizationHeader(),
      Accept: 'application/json',
      ...options.headers,
    };
    let body: Body | undefined;
    if (options.rawBody) {
      const raw = await options.rawBody();
      body = raw.body;
      Object.assign(headers, raw.headers);
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    // The outbound policy (functions/outbound/) checks the URL, pins the address and follows redirects itself.
    return outboundFetch(url, {
      destination: this.opts.destination ?? 'tracker',
      method,
      headers,
      body,
      redirect: options.manualRedirect ? 'manual' : 'follow',
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as OutboundInit);
  }

  private async toResponse<T>(
    method: string,
    path: string,
    response: Response,
    options: RequestOptions,
  ): Promise<HttpResponse<T>> {
    const type = response.headers.get('content-type') ?? '';
    const ok =
      response.ok ||
      (response.status >= 300 && response.status < 400 && options.manualRedirect) ||
      options.accept?.includes(response.status);
    // A tracker answer is read whole only up to OUTBOUND_MAX_RESPONSE_BYTES.
    const text = response.status === 204 ? '' : await readTextCapped(response);
    let body: unknown = text;
    if (text && /json/i.test(type)) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!ok) throw new TrackerHttpError(this.opts.tracker, response.status, method, path, body);
    return { status: response.status, headers: response.headers, body: body as T };
  }

  /** Streams a download: the caller consumes `response.body`. Retried only until the answer starts. */
  async stream(path: string): Promise<Response> {
    const url = new URL(path.startsWith('http') ? path : `${this.opts.baseUrl.replace(/\/$/, '')}${path}`);
    return this.withFreshToken(() => this.streamOnce(url));
  }

  private streamOnce(url: URL): Promise<Response> {
    return this.policy.execute(async () => {
      await this.concurrency.acquire();
      try {
        const response = await outboundFetch(url, {
          destination: this.opts.destination ?? 'tracker',
          headers: { Authorization: await this.authorizationHeader() },
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        }).catch((err: unknown) => {
          if (isNetworkError(err)) this.countCall('network');
          throw err;
        });
        this.stats.calls++;
        this.countCall(response.status);
        if (RETRYABLE_STATUS.has(response.status)) {
          const hint = retryAfterMs(response.headers);
          if (response.status === 429) {
            this.stats.throttled++;
            this.concurrency.onThrottle(hint);
          }
          await response.body?.cancel();
          throw new RetryableAnswer(response, hint);
        }
        if (!response.ok)
          throw new TrackerHttpError(
            this.opts.tracker,
            response.status,
            'GET',
            url.pathname,
            await readTextCapped(response),
          );
        return response;
      } finally {
        this.concurrency.release();
      }
    });
  }
}

function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return true;
  // undici wraps socket failures as TypeError('fetch failed') with the cause attached.
  return err instanceof TypeError && err.message === 'fetch failed';
}

function networkReason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
