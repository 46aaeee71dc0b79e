/**
 * The one resilient HTTP layer under both tracker clients: a timeout per attempt; retries with exponential
 * backoff and jitter (cockatiel) on 5xx and network errors; pacing that fills the tracker's limits (pacing.ts:
 * in-flight requests per endpoint grown to what the endpoint takes, Jira's per-issue write windows, a learnt pace
 * per endpoint); and a 429 retried, however often, only after what the tracker asked for (Retry-After, Jira's
 * X-RateLimit-Reset), with the pause only where the 429 applies (RateLimit-Reason: the endpoint, the issue, or the
 * whole client for Jira's hourly quota and Azure DevOps' TF400733). A throttle never fails a request unless the
 * waiting adds up to `maxThrottleWaitMs`. Credentials ride in headers and are never logged: log lines carry
 * method, path (query string dropped), status, attempt and time only.
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
import { endpointOf, issueOf, type PacingOptions, type RequestKey, TrackerPacer } from './pacing.ts';

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
  /** In-flight requests per endpoint to begin with (pacing.ts grows them while requests queue). */
  initialConcurrency?: number;
  /** The most in flight per endpoint. */
  maxConcurrency?: number;
  /** Writes to one issue paced under these windows (Jira's per-issue limit: JIRA_PER_ISSUE_WINDOWS). */
  perIssueWindows?: PacingOptions['perIssueWindows'];
  /** Throttled waits of one request beyond this much in total fail it (default 3 hours: a quota turns hourly). */
  maxThrottleWaitMs?: number;
  /**
   * The longest wait of the whole client (Jira's hourly quota, Azure DevOps blocking) sat out here, asked at each
   * such 429 (the engine: its invocation's remaining time less a margin). A longer one is not slept: every request
   * of the client, then and later, ends with ThrottleWaitDeferred, so the engine can stop at its checkpoint and the
   * state machine wait for the reset. Without it every wait is sat out.
   */
  waitBudgetMs?: () => number;
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

/**
 * A whole-client wait longer than the client may sit out (`waitBudgetMs`): the request was not sent again, and no
 * other request of this client will be. Not a failure of the item at hand: the caller stops and waits elsewhere.
 */
export class ThrottleWaitDeferred extends Error {
  override name = 'ThrottleWaitDeferred';
  constructor(readonly notice: ThrottleWaitNotice) {
    super(`${notice.tracker} tracker asked for a wait until ${notice.until.toISOString()}`);
  }
}

/** A 429, retried by the request's own loop once its scope's wait is over (never by the 5xx/network policy). */
class Throttled extends Error {
  constructor(readonly until: number) {
    super('throttled');
  }
}

/** A long wait the whole client is in (Jira's hourly quota, Azure DevOps blocking), for the run's stream. */
export interface ThrottleWaitNotice {
  tracker: ConnectionKind;
  /** Jira's RateLimit-Reason, when it gave one. */
  reason: string | null;
  until: Date;
}

/** Waits shorter than this are not worth telling the run's stream about. */
const NOTICE_AFTER_MS = 5000;

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);

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

export class TrackerHttp {
  readonly stats: TrackerCallStats;
  readonly pacer: TrackerPacer;
  private readonly policy;
  private readonly origin: string;
  private readonly waitListeners = new Set<(notice: ThrottleWaitNotice) => void>();
  /** Set once a whole-client wait is handed back (waitBudgetMs): every request from then on ends with it. */
  private deferral: ThrottleWaitDeferred | undefined;
  /** Rejected with the deferral: requests queued behind the client's pause stop queuing. */
  private rejectQueued: (err: ThrottleWaitDeferred) => void = () => {};
  private readonly queuedStop = new Promise<never>((_, reject) => {
    this.rejectQueued = reject;
  });

  constructor(private readonly opts: HttpOptions) {
    this.queuedStop.catch(() => {}); // rejected on purpose; only racing requests care
    this.stats = opts.stats ?? { calls: 0, throttled: 0, retries: 0, errors: 0 };
    this.pacer = new TrackerPacer({
      ...(opts.initialConcurrency !== undefined ? { initialConcurrency: opts.initialConcurrency } : {}),
      ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
      ...(opts.perIssueWindows ? { perIssueWindows: opts.perIssueWindows } : {}),
    });
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

  /** Tells `listener` of every long wait the whole client goes into; answers the unsubscribe. */
  onThrottleWait(listener: (notice: ThrottleWaitNotice) => void): () => void {
    this.waitListeners.add(listener);
    return () => this.waitListeners.delete(listener);
  }

  /** The whole-client wait handed back to the caller (waitBudgetMs), if any. */
  get deferredWait(): ThrottleWaitDeferred | undefined {
    return this.deferral;
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

  private keyOf(method: string, url: URL): RequestKey {
    const issue = issueOf(url.pathname);
    const write = method !== 'GET' && method !== 'HEAD' && !url.pathname.endsWith('/search/jql');
    return { endpoint: endpointOf(method, url.pathname), write, ...(issue ? { issue } : {}) };
  }

  /** Runs `once` until it is not throttled, each retry after the wait the tracker asked for. */
  private async untilNotThrottled<T>(
    method: string,
    path: string,
    once: (throttles: number) => Promise<T>,
  ): Promise<T> {
    let waited = 0;
    for (let throttles = 0; ; throttles++) {
      try {
        return await once(throttles);
      } catch (err) {
        if (!(err instanceof Throttled)) throw err;
        const wait = Math.max(0, err.until - Date.now());
        waited += wait;
        if (waited > (this.opts.maxThrottleWaitMs ?? 3 * 3600_000)) {
          this.stats.errors++;
          throw new TrackerHttpError(this.opts.tracker, 429, method, path, undefined);
        }
        this.stats.retries++;
        // Never before the tracker's time: the scope's pause holds the others, this wait the request itself.
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** A 429: pauses where it applies, tells the stream of a long wait of the whole client, and throws Throttled. */
  private async throttled(key: RequestKey, response: Response, throttles: number): Promise<never> {
    this.stats.throttled++;
    const reason = response.headers.get('ratelimit-reason');
    // Without a hint: 1 s, doubling, at most 30 s.
    const hint = retryAfterMs(response.headers) ?? Math.min(30_000, 1000 * 2 ** throttles);
    const limit = Number(response.headers.get('x-ratelimit-limit'));
    const scope = this.pacer.onThrottle(key, {
      reason,
      retryAfterMs: hint,
      ...(Number.isFinite(limit) && limit > 0 ? { limit } : {}),
    });
    await response.body?.cancel();
    const until = Date.now() + hint;
    if (scope === 'client' && this.opts.waitBudgetMs && hint > this.opts.waitBudgetMs()) {
      this.defer(new ThrottleWaitDeferred({ tracker: this.opts.tracker, reason, until: new Date(until) }));
    }
    if (this.deferral) throw this.deferral;
    if (scope === 'client' && (reason === 'jira-quota-global-based' || hint >= NOTICE_AFTER_MS)) {
      const notice = { tracker: this.opts.tracker, reason, until: new Date(until) };
      logger.warn('tracker throttled: waiting', { ...this.opts.logKeys, ...notice });
      for (const listener of this.waitListeners) listener(notice);
    }
    throw new Throttled(until);
  }

  /** Hands a whole-client wait back once (the latest reset wins if two 429s race); queued requests stop. */
  private defer(deferral: ThrottleWaitDeferred): void {
    logger.warn('tracker throttled: wait handed back', { ...this.opts.logKeys, ...deferral.notice });
    if (this.deferral && this.deferral.notice.until >= deferral.notice.until) return;
    const first = !this.deferral;
    this.deferral = deferral;
    if (first) this.rejectQueued(deferral);
  }

  /** The pacer's slot, unless the client handed a wait back meanwhile (the slot is then given back at once). */
  private async acquire(key: RequestKey): Promise<() => void> {
    if (this.deferral) throw this.deferral;
    const acquiring = this.pacer.acquire(key);
    try {
      return await Promise.race([acquiring, this.queuedStop]);
    } catch (err) {
      void acquiring.then((release) => release());
      throw this.deferral ?? err;
    }
  }

  /** Azure DevOps delayed this answer: slow what follows (X-RateLimit-Delay, seconds). */
  private noteDelay(key: RequestKey, response: Response): void {
    const delay = Number(response.headers.get('x-ratelimit-delay'));
    if (Number.isFinite(delay) && delay > 0) this.pacer.onDelay(key, delay * 1000);
  }

  private async send<T>(method: string, url: URL, options: RequestOptions): Promise<HttpResponse<T>> {
    const logPath = url.pathname;
    const key = this.keyOf(method, url);
    try {
      return await this.untilNotThrottled(method, logPath, (throttles) =>
        this.policy.execute(async ({ attempt }) => {
          const release = await this.acquire(key);
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
            // A 429 comes before the tracker does anything: safe to send again, also for a write.
            if (response.status === 429) return await this.throttled(key, response, throttles);
            if (RETRYABLE_STATUS.has(response.status) && !options.notIdempotent) {
              const hint = retryAfterMs(response.headers);
              await response.body?.cancel();
              throw new RetryableAnswer(response, hint);
            }
            this.noteDelay(key, response);
            this.pacer.onSuccess(key);
            return await this.toResponse<T>(method, logPath, response, options);
          } finally {
            release();
          }
        }),
      );
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
    const key = this.keyOf('GET', url);
    return this.withFreshToken(() =>
      this.untilNotThrottled('GET', url.pathname, (throttles) => this.streamOnce(url, key, throttles)),
    );
  }

  private streamOnce(url: URL, key: RequestKey, throttles: number): Promise<Response> {
    return this.policy.execute(async () => {
      const release = await this.pacer.acquire(key);
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
        if (response.status === 429) return await this.throttled(key, response, throttles);
        if (RETRYABLE_STATUS.has(response.status)) {
          const hint = retryAfterMs(response.headers);
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
        this.noteDelay(key, response);
        this.pacer.onSuccess(key);
        return response;
      } finally {
        release();
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
