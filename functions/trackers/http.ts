/**
 * The one resilient HTTP layer under every tracker client, requests and downloads alike. One loop carries each
 * call: it waits for the pacer's slot (pacing.ts: in-flight requests per endpoint grown to what the endpoint takes,
 * Jira's per-issue write windows, a learnt pace per endpoint) unless the client handed a wait back, sends one
 * attempt under a timeout, has its outcome classified once (classify.ts: success, throttled with its scope, retry,
 * refresh the token, refused, fail) and acts on that decision. A 429 is retried, however often, only after what the
 * tracker asked for (Retry-After, Jira's X-RateLimit-Reset), with the pause only where the 429 applies
 * (RateLimit-Reason: the endpoint, the issue, or the whole client for Jira's hourly quota and Azure DevOps'
 * TF400733); 5xx and network errors are retried with exponential backoff and jitter. A throttle never fails a
 * request unless the waiting adds up to `maxThrottleWaitMs`. Credentials ride in headers and are never logged: log
 * lines carry method, path (query string dropped), status, attempt and time only.
 */
import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { ConnectionKind } from '#domain/connectors.ts';
import {
  type AnswerHeaders,
  type OutboundAnswer,
  type OutboundInit,
  outboundFetch,
  outboundRequest,
  readTextCapped,
} from '#outbound/fetch.ts';
import type { Destination } from '#outbound/rules.ts';
import { logger } from '#platform/logger.ts';
import { countTrackerCall, type TrackerCallStatus, type TrackerKind } from '#platform/metrics.ts';
import {
  type CallFacts,
  classify,
  type Decision,
  isNetworkError,
  type ThrottledDecision,
} from './classify.ts';
import { Interrupt, InvocationInterrupted } from './interrupt.ts';
import { endpointOf, issueOf, type PacingOptions, type RequestKey, TrackerPacer } from './pacing.ts';
import {
  ThrottleWaitDeferred,
  type ThrottleWaitNotice,
  TrackerHttpError,
  TrackerUnreachableError,
} from './tracker-errors.ts';

export { retryAfterMs } from './classify.ts';
export { ThrottleWaitDeferred, type ThrottleWaitNotice, TrackerHttpError, TrackerUnreachableError };

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
  /**
   * The engine invocation's interrupt: a wait handed back aborts it (the runner answers the state machine from
   * its reason), and once it is aborted with a reason that voids the work under way (a refused token, another
   * client's deferred wait) requests queued or started later end with InvocationInterrupted, unsent. Without it
   * the client keeps one of its own.
   */
  interrupt?: Interrupt;
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
  /** A step of an ordered chain the caller waits on: ahead of its endpoint's other requests (RequestKey.urgent). */
  urgent?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: AnswerHeaders;
  body: T;
}

/**
 * One attempt's answer as the loop reads it: a JSON request's from the outbound policy's light path
 * (outboundRequest), a download's or a streamed upload's from its fetch, whose Response a download hands over.
 */
type Answer = OutboundAnswer & { response?: Response };

/** One request or download as the loop carries it, built once per call; `throttles` and `mayRefreshToken` move. */
interface Call extends CallFacts {
  url: URL;
  options: RequestOptions;
  /** A download: sent with the Authorization header alone, its answer handed over unread. */
  download: boolean;
}

/** Waits shorter than this are not worth telling the run's stream about. */
const NOTICE_AFTER_MS = 5000;

const NO_OPTIONS: RequestOptions = Object.freeze({});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class TrackerHttp {
  readonly stats: TrackerCallStats;
  readonly pacer: TrackerPacer;
  private readonly origin: string;
  private readonly maxAttempts: number;
  /**
   * The wait between 5xx and network retries when the tracker gave no hint: cockatiel's exponential backoff with
   * decorrelated jitter, used alone. Its retry policy no longer runs the attempts: it would be a second loop
   * deciding a response's fate beside the one that handles 429s, tokens and deferrals.
   */
  private readonly backoff: ExponentialBackoff<unknown>;
  private readonly waitListeners = new Set<(notice: ThrottleWaitNotice) => void>();
  /** Set once a whole-client wait is handed back (waitBudgetMs): every request from then on ends with it. */
  private deferral: ThrottleWaitDeferred | undefined;
  private readonly interrupt: Interrupt;

  constructor(private readonly opts: HttpOptions) {
    this.interrupt = opts.interrupt ?? new Interrupt();
    this.stats = opts.stats ?? { calls: 0, throttled: 0, retries: 0, errors: 0 };
    this.pacer = new TrackerPacer({
      ...(opts.initialConcurrency !== undefined ? { initialConcurrency: opts.initialConcurrency } : {}),
      ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
      ...(opts.perIssueWindows ? { perIssueWindows: opts.perIssueWindows } : {}),
    });
    this.origin = new URL(opts.baseUrl).host;
    this.maxAttempts = opts.maxAttempts ?? 6;
    this.backoff = new ExponentialBackoff({
      initialDelay: opts.initialDelayMs ?? 200,
      maxDelay: opts.maxDelayMs ?? 30_000,
    });
  }

  /** Tells `listener` of every long wait the whole client goes into; answers the unsubscribe. */
  onThrottleWait(listener: (notice: ThrottleWaitNotice) => void): () => void {
    this.waitListeners.add(listener);
    return () => this.waitListeners.delete(listener);
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
    options: RequestOptions = NO_OPTIONS,
  ): Promise<HttpResponse<T>> {
    const url = this.urlOf(path);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    return this.exchange(this.callOf(method, url, options, false), readAnswer<T>);
  }

  /** Streams a download: the caller consumes `response.body`. Retried only until the answer starts. */
  async stream(path: string): Promise<Response> {
    return this.exchange(this.callOf('GET', this.urlOf(path), NO_OPTIONS, true), handOver);
  }

  private urlOf(path: string): URL {
    return new URL(path.startsWith('http') ? path : `${this.opts.baseUrl.replace(/\/$/, '')}${path}`);
  }

  private callOf(method: string, url: URL, options: RequestOptions, download: boolean): Call {
    const path = url.pathname;
    const issue = issueOf(path);
    const write = method !== 'GET' && method !== 'HEAD' && !path.endsWith('/search/jql');
    return {
      tracker: this.opts.tracker,
      host: this.origin,
      method,
      path,
      key: {
        endpoint: endpointOf(method, path),
        write,
        ...(issue ? { issue } : {}),
        ...(options.urgent ? { urgent: true } : {}),
      },
      accept: options.accept,
      manualRedirect: options.manualRedirect,
      notIdempotent: options.notIdempotent,
      mayRefreshToken: typeof this.opts.authorization !== 'string',
      throttles: 0,
      url,
      options,
      download,
    };
  }

  /**
   * The one loop of every request and download: the pacer's slot (or the handed-back wait), one attempt, one
   * decision on its outcome, and what that decision asks for. `read` turns a successful answer into the result,
   * within the attempt: a network error while reading is an outcome like any other.
   */
  private async exchange<R>(call: Call, read: (answer: Answer) => Promise<R>): Promise<R> {
    /** 5xx and network attempts since the last 429: each 429 grants them afresh. */
    let attempt = 0;
    let backoff: IBackoff<unknown> | undefined;
    let throttledMs = 0;
    for (;;) {
      const release = await this.acquire(call.key);
      const sentAt = call.mayRefreshToken ? Date.now() : 0;
      let decision: Decision;
      let status = 0;
      /** The body of an error answer, for the TrackerHttpError the request may end with. */
      let refusal: unknown;
      let until = 0;
      try {
        try {
          const response = await this.send(call, attempt);
          status = response.status;
          decision = classify(response, call);
          if (decision.kind === 'success') {
            this.noteDelay(call.key, response);
            this.pacer.onSuccess(call.key);
            return await read(response);
          }
          if (decision.kind === 'throttled') {
            this.stats.throttled++;
            this.pacer.onThrottle(call.key, decision);
          }
          if (decision.kind === 'refused' || decision.kind === 'refresh-token')
            refusal = await bodyOf(response);
          else await response.discard();
        } catch (err) {
          decision = classify(err, call);
        }
        // Within the slot, as the pause it sets: no request of this client slips out before it.
        if (decision.kind === 'throttled') until = this.throttled(decision);
      } finally {
        release();
      }
      switch (decision.kind) {
        case 'throttled': {
          const wait = Math.max(0, until - Date.now());
          throttledMs += wait;
          if (throttledMs > (this.opts.maxThrottleWaitMs ?? 3 * 3600_000)) {
            this.stats.errors++;
            throw new TrackerHttpError(call.tracker, 429, call.method, call.path, undefined);
          }
          this.stats.retries++;
          call.throttles++;
          attempt = 0;
          backoff = undefined;
          // Never before the tracker's time: the scope's pause holds the others, this wait the request itself.
          if (wait > 0) await sleep(wait);
          break;
        }
        case 'retry': {
          if (attempt + 1 >= this.maxAttempts) {
            this.stats.errors++;
            throw decision.error;
          }
          backoff = backoff ? backoff.next(undefined) : this.backoff.next();
          // Never shorter than what the tracker asked for.
          const wait = decision.retryAfterMs ?? backoff.duration;
          this.stats.retries++;
          attempt++;
          if (wait > 0) await sleep(wait);
          break;
        }
        case 'refresh-token':
          call.mayRefreshToken = false;
          if (await (this.opts.authorization as AuthorizationSource).rejected(sentAt)) break;
          throw new TrackerHttpError(call.tracker, status, call.method, call.path, refusal);
        case 'refused':
          throw new TrackerHttpError(call.tracker, status, call.method, call.path, refusal);
        case 'fail':
          // The tracker's failure only when unreachable (a write that must not happen twice surfaces at once);
          // the outbound policy's refusal or a refused token refresh is not.
          if (decision.error instanceof TrackerUnreachableError) this.stats.errors++;
          throw decision.error;
      }
    }
  }

  /** A 429 in the slot: hands back a whole-client wait beyond the budget, tells the stream of a long one. */
  private throttled(decision: ThrottledDecision): number {
    const { scope, reason, retryAfterMs } = decision;
    const until = Date.now() + retryAfterMs;
    if (scope === 'client' && this.opts.waitBudgetMs && retryAfterMs > this.opts.waitBudgetMs()) {
      this.defer(new ThrottleWaitDeferred({ tracker: this.opts.tracker, reason, until: new Date(until) }));
    }
    if (this.deferral) throw this.deferral;
    if (scope === 'client' && (reason === 'jira-quota-global-based' || retryAfterMs >= NOTICE_AFTER_MS)) {
      const notice = { tracker: this.opts.tracker, reason, until: new Date(until) };
      logger.warn('tracker throttled: waiting', { ...this.opts.logKeys, ...notice });
      for (const listener of this.waitListeners) listener(notice);
    }
    return until;
  }

  /**
   * The site's record says the whole site refuses until `until` (another run met Jira's quota, site-share.ts):
   * held as that 429 would be, sat out within the wait budget, else handed back.
   */
  holdForSite(until: number): void {
    const wait = until - Date.now();
    if (wait <= 0) return;
    if (this.opts.waitBudgetMs && wait > this.opts.waitBudgetMs()) {
      const reason = 'jira-quota-global-based';
      this.defer(new ThrottleWaitDeferred({ tracker: this.opts.tracker, reason, until: new Date(until) }));
    } else this.pacer.pauseClient(until);
  }

  /** Hands a whole-client wait back once (the latest reset wins if two 429s race); queued requests stop. */
  private defer(deferral: ThrottleWaitDeferred): void {
    logger.warn('tracker throttled: wait handed back', { ...this.opts.logKeys, ...deferral.notice });
    if (this.deferral && this.deferral.notice.until >= deferral.notice.until) return;
    this.deferral = deferral;
    this.interrupt.abort({ kind: 'wait-deferred', wait: deferral.notice });
  }

  /** What a request not sent because of the interrupt ends with: this client's own wait, or the interrupt. */
  private stopError(): Error {
    return this.deferral ?? new InvocationInterrupted(this.interrupt.reason ?? { kind: 'time-budget' });
  }

  /** The pacer's slot, unless the work under way turned void meanwhile (the slot is then given back at once). */
  private async acquire(key: RequestKey): Promise<() => void> {
    if (this.deferral || this.interrupt.voided) throw this.stopError();
    const acquiring = this.pacer.acquire(key);
    // A stop of this call's own, dropped once it has its slot: a race with one promise for the client's life (which
    // settles only if the work turns void) left a reaction on it at every call, each keeping its slot reachable.
    let unsubscribe = () => {};
    const stopped = new Promise<never>((_, reject) => {
      unsubscribe = this.interrupt.onVoided(() => reject(this.stopError()));
    });
    try {
      return await Promise.race([acquiring, stopped]);
    } catch (err) {
      void acquiring.then((release) => release());
      throw this.deferral ?? err;
    } finally {
      unsubscribe();
    }
  }

  /** Azure DevOps delayed this answer: slow what follows (X-RateLimit-Delay, seconds). */
  private noteDelay(key: RequestKey, response: Answer): void {
    const delay = Number(response.headers.get('x-ratelimit-delay'));
    if (Number.isFinite(delay) && delay > 0) this.pacer.onDelay(key, delay * 1000);
  }

  /** One attempt, in the tracker metrics (per attempt) and the debug log: the answer, or what it threw. */
  private async send(call: Call, attempt: number): Promise<Answer> {
    const started = performance.now();
    let response: Answer;
    try {
      response = await this.fetch(call);
    } catch (err) {
      if (isNetworkError(err)) this.countCall('network');
      throw err;
    }
    this.stats.calls++;
    this.countCall(response.status);
    logger.debug('tracker call', {
      ...this.opts.logKeys,
      tracker: this.opts.tracker,
      method: call.method,
      path: call.path,
      status: response.status,
      attempt,
      ms: Math.round(performance.now() - started),
    });
    return response;
  }

  /** TrackerCalls, plus TrackerThrottles on 429, TrackerErrors on 5xx. */
  private countCall(status: TrackerCallStatus): void {
    if (this.opts.name) countTrackerCall({ tracker: this.opts.name, status });
  }

  private async fetch(call: Call): Promise<Answer> {
    const { options } = call;
    const authorization = await this.authorizationHeader();
    // A download asks for the file itself: no Accept: application/json.
    const headers: Record<string, string> = call.download
      ? { Authorization: authorization }
      : { Authorization: authorization, Accept: 'application/json', ...options.headers };
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
    const policy = {
      destination: this.opts.destination ?? 'tracker',
      method: call.method,
      headers,
      redirect: options.manualRedirect ? ('manual' as const) : ('follow' as const),
      signal: AbortSignal.timeout(this.timeoutMs),
    };
    // A JSON request (or none) takes the light path; a download and a streamed upload keep fetch's streams.
    if (!call.download && (body === undefined || typeof body === 'string'))
      return outboundRequest(call.url, { ...policy, ...(body !== undefined ? { body } : {}) });
    const response = await outboundFetch(call.url, {
      ...policy,
      body,
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as OutboundInit);
    return fromResponse(response);
  }

  private authorizationHeader(): Promise<string> {
    const a = this.opts.authorization;
    return typeof a === 'string' ? Promise.resolve(a) : a.header();
  }
}

/** A fetch Response as the loop reads an answer, kept for a download to hand over. */
function fromResponse(response: Response): Answer {
  return {
    status: response.status,
    headers: response.headers,
    text: (limit) => readTextCapped(response, limit),
    discard: async () => {
      await response.body?.cancel();
    },
    response,
  };
}

/** A request's answer, its body read whole: JSON when it says so, else its text. */
async function readAnswer<T>(answer: Answer): Promise<HttpResponse<T>> {
  return { status: answer.status, headers: answer.headers, body: (await bodyOf(answer)) as T };
}

/** A download's answer, its body left to the caller. */
async function handOver(answer: Answer): Promise<Response> {
  if (!answer.response) throw new Error('a download is sent through fetch');
  return answer.response;
}

/** An answer's body up to OUTBOUND_MAX_RESPONSE_BYTES: parsed when JSON, else its text ('' for a 204). */
async function bodyOf(answer: Answer): Promise<unknown> {
  const type = answer.headers.get('content-type') ?? '';
  const text = answer.status === 204 ? '' : await answer.text();
  if (!text || !/json/i.test(type)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
