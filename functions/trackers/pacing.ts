/**
 * How the HTTP layer fills a tracker's limits without overrunning them. Every request is held by three scopes:
 *   - its endpoint (method + path template): a lane whose in-flight requests grow while requests queue for it (so
 *     in flight settles at about rate x latency), that learns the endpoint's rate from a `jira-burst-based` 429
 *     (`X-RateLimit-Limit`) and paces itself under it from then on (a burst 429 slows it alone; only the refused
 *     request waits its Retry-After);
 *   - for a write to one issue: that issue's writes, kept under Jira's per-issue windows (20 in 2 s, 100 in 30 s)
 *     and paused alone by a `jira-per-issue-on-write` 429;
 *   - the client: paused by a 429 that concerns everything (Jira's hourly quota, Azure DevOps' TF400733, or one
 *     that names no limit) and slowed by Azure DevOps' `X-RateLimit-Delay`.
 * Runs working one Jira site share its learnt rates (site-share.ts): the pacer starts from the rates the site's
 * record holds and paces each at its share (`adoptSite`), so a run does not learn through 429s what another run
 * learnt, and N runs together stay under the site's rate.
 * Jira: https://developer.atlassian.com/cloud/jira/platform/rate-limiting ; Azure DevOps:
 * https://learn.microsoft.com/en-us/azure/devops/integrate/concepts/rate-limits
 */
import { flowProbe, type RequestWait } from '#platform/flow-probe.ts';

export interface PacingClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: PacingClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

export interface PacingOptions {
  /** In-flight requests per endpoint to begin with (default: INITIAL_IN_FLIGHT by method). */
  initialConcurrency?: number;
  /** The most in flight per endpoint. */
  maxConcurrency?: number;
  /**
   * Writes allowed per window to one issue (Jira's documented per-issue limit), held from the tracker's first
   * `jira-per-issue-on-write` 429 on (a site without the limit is never slowed by it); none: never paced.
   */
  perIssueWindows?: readonly { writes: number; seconds: number }[];
  clock?: PacingClock;
}

/** What one request is, for pacing. */
export interface RequestKey {
  endpoint: string;
  /** The issue a write changes (Jira), if any. */
  issue?: string;
  write: boolean;
  /**
   * A step of an ordered chain the phase waits on (a long comment thread, one post after another): it takes its
   * lane's next slot and next token ahead of the requests already waiting. Those go on in between; a chain that
   * queued behind them gained their wait at every one of its steps (runs sharing a site's rate queue longest).
   */
  urgent?: boolean;
}

/** Where a 429 applies. */
export type ThrottleScope = 'endpoint' | 'issue' | 'client';

export interface ThrottleInfo {
  /** Jira's `RateLimit-Reason`. */
  reason?: string | null;
  retryAfterMs?: number;
  /** `X-RateLimit-Limit`: for a burst 429, the endpoint's rate per second. */
  limit?: number;
}

/**
 * In-flight requests an endpoint's lane starts at, before it grows: about what the endpoint takes at a real site,
 * rate x latency (Jira's burst defaults, 100/s for GET and POST, 50/s for PUT, DELETE and PATCH, at a write's
 * ~300 ms: 30 and 15), so that a phase's first requests do not queue behind a lane still growing. Jira's bucket
 * holds a second's worth, so this start alone cannot overrun it; a burst 429 cuts the lane as before.
 * https://developer.atlassian.com/cloud/jira/platform/rate-limiting
 */
export const INITIAL_IN_FLIGHT = { default: 32, slowerMethods: 16 } as const;
const SLOWER_METHODS = new Set(['PUT', 'DELETE', 'PATCH']);

/** Jira's documented per-issue write limits. */
export const JIRA_PER_ISSUE_WINDOWS = [
  { writes: 20, seconds: 2 },
  { writes: 100, seconds: 30 },
] as const;

/** A learnt rate is paced a little under what the tracker stated: a real network's arrivals jitter. */
const RATE_MARGIN = 0.95;

/** Sent writes are timed at the client, arrivals at the tracker: windows held a little longer than the tracker's. */
const WINDOW_MARGIN = 1.05;
const WINDOW_SLACK_MS = 50;

const ID_SEGMENT =
  /^(\d+|[A-Z][A-Z0-9_]+-\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{24,})$/i;

/** `POST /rest/api/3/issue/MIG-12/comment` -> `POST /rest/api/3/issue/{}/comment`: ids and keys become `{}`. */
export function endpointOf(method: string, pathname: string): string {
  const segments = pathname.split('/');
  // A number after `api` or `agile` is the API's version, not an id.
  const template = segments
    .map((s, i) =>
      ID_SEGMENT.test(decodeURIComponent(s)) && !/^(api|agile)$/.test(segments[i - 1] ?? '') ? '{}' : s,
    )
    .join('/');
  return `${method.toUpperCase()} ${template}`;
}

/** The Jira issue a path is about (`/rest/api/3/issue/{key}/...`), upper-cased; undefined for others. */
export function issueOf(pathname: string): string | undefined {
  const m = /\/rest\/api\/\d+\/issue\/([^/]+)/.exec(pathname);
  const key = m?.[1] ? decodeURIComponent(m[1]) : undefined;
  return key && key !== 'bulk' ? key.toUpperCase() : undefined;
}

/**
 * Where a 429 applies: a per-issue one to that issue's writes, a burst one (or a per-issue one to no issue) to its
 * endpoint, anything else (Jira's hourly quota, Azure DevOps' TF400733, one that names no limit) to the client.
 */
export function throttleScope(key: RequestKey, reason: string | null | undefined): ThrottleScope {
  if (reason === 'jira-per-issue-on-write') return key.issue ? 'issue' : 'endpoint';
  return reason === 'jira-burst-based' ? 'endpoint' : 'client';
}

/** An endpoint's lane: adaptive in-flight limit, a learnt pace, its own pause. */
class Lane {
  limit: number;
  active = 0;
  pausedUntil = 0;
  /** Until when a burst 429 is taken as part of the signal that last cut the limit (see onThrottle). */
  cutUntil = 0;
  /** Requests per second this lane paces at (its share of the stated rate, less a margin); undefined until learnt. */
  rate: number | undefined;
  /** The endpoint's rate as the tracker stated it (`X-RateLimit-Limit` of a burst 429, here or at another run). */
  stated: number | undefined;
  private tokens = 0;
  private tokensAt = 0;
  private readonly queue: (() => void)[] = [];
  /** Urgent requests waiting for a slot: served before `queue`. */
  private readonly urgentQueue: (() => void)[] = [];
  /** Urgent requests waiting on the pace: an ordinary request takes no token while one does. */
  urgentPacing = 0;

  constructor(
    initial: number,
    readonly ceiling: number,
  ) {
    this.limit = initial;
  }

  get waiting(): number {
    return this.queue.length + this.urgentQueue.length;
  }

  async slot(urgent = false): Promise<void> {
    if (this.active < this.limit) this.active++;
    // The releaser hands its slot over.
    else await new Promise<void>((resolve) => (urgent ? this.urgentQueue : this.queue).push(resolve));
  }

  private next(): (() => void) | undefined {
    return this.urgentQueue.shift() ?? this.queue.shift();
  }

  release(): void {
    const next = this.active <= this.limit ? this.next() : undefined;
    if (next) next();
    else this.active--;
  }

  /** Lets waiters in up to a raised limit. */
  admitWaiters(): void {
    while (this.active < this.limit && this.waiting > 0) {
      this.active++;
      this.next()?.();
    }
  }

  /** Ms until this lane's pace allows one more request (and takes it when 0). */
  paceWait(now: number, urgent = false): number {
    if (!this.rate) return 0;
    const capacity = Math.max(1, this.rate / 2);
    this.tokens = Math.min(capacity, this.tokens + ((now - this.tokensAt) / 1000) * this.rate);
    this.tokensAt = now;
    // The next token is an urgent request's: look again a token's time later.
    if (!urgent && this.urgentPacing > 0) return Math.ceil(1000 / this.rate);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }

  learnRate(limit: number, share: number, now: number): void {
    // A little under the tracker's rate (this run's share of it), starting from an empty bucket.
    this.stated = limit;
    this.rate = limit * RATE_MARGIN * share;
    this.tokens = 0;
    this.tokensAt = now;
  }

  /** Another share of the same stated rate: the pace changes, the bucket's tokens stay (capped to the new size). */
  reshare(share: number): void {
    if (this.stated === undefined) return;
    this.rate = this.stated * RATE_MARGIN * share;
    this.tokens = Math.min(this.tokens, Math.max(1, this.rate / 2));
  }
}

/** One issue's recent writes and its pause. */
class IssueWrites {
  pausedUntil = 0;
  private readonly sent: number[] = [];

  constructor(private readonly windows: readonly { writes: number; seconds: number }[]) {}

  /** Ms until one more write fits every window (and records it when 0). */
  take(now: number): number {
    if (this.pausedUntil > now) return this.pausedUntil - now;
    const longest = Math.max(
      0,
      ...this.windows.map((w) => w.seconds * 1000 * WINDOW_MARGIN + WINDOW_SLACK_MS),
    );
    while (this.sent.length > 0 && (this.sent[0] as number) <= now - longest) this.sent.shift();
    let wait = 0;
    for (const w of this.windows) {
      const span = w.seconds * 1000 * WINDOW_MARGIN + WINDOW_SLACK_MS;
      const inWindow = this.sent.filter((t) => t > now - span);
      if (inWindow.length >= w.writes) {
        const oldest = inWindow[inWindow.length - w.writes] as number;
        wait = Math.max(wait, oldest + span - now);
      }
    }
    if (wait <= 0) this.sent.push(now);
    return Math.max(0, Math.ceil(wait));
  }

  /** When it last wrote or was paused to. */
  get lastAt(): number {
    return Math.max(this.pausedUntil, this.sent.at(-1) ?? 0);
  }
}

export class TrackerPacer {
  private readonly lanes = new Map<string, Lane>();
  private readonly issues = new Map<string, IssueWrites>();
  private clientPausedUntil = 0;
  /** Set by the first per-issue 429: from then on every issue's writes are held under `perIssueWindows`. */
  private perIssueLimited = false;
  /** This run's share of the site's rates (1 / the runs working the site; 1 alone). */
  private share = 1;
  private readonly clock: PacingClock;
  private readonly initial: number | undefined;
  private readonly ceiling: number;

  constructor(private readonly opts: PacingOptions = {}) {
    this.clock = opts.clock ?? REAL_CLOCK;
    this.initial = opts.initialConcurrency;
    this.ceiling = Math.max(this.initial ?? 1, opts.maxConcurrency ?? 64);
  }

  lane(endpoint: string): Lane {
    let lane = this.lanes.get(endpoint);
    if (!lane) {
      const method = endpoint.split(' ')[0] ?? '';
      const initial =
        this.initial ??
        (SLOWER_METHODS.has(method) ? INITIAL_IN_FLIGHT.slowerMethods : INITIAL_IN_FLIGHT.default);
      lane = new Lane(Math.min(initial, this.ceiling), this.ceiling);
      this.lanes.set(endpoint, lane);
    }
    return lane;
  }

  /** The endpoint's in-flight limit and learnt rate, for stats and tests. */
  laneState(endpoint: string): { limit: number; rate: number | undefined; active: number } {
    const lane = this.lane(endpoint);
    return { limit: lane.limit, rate: lane.rate, active: lane.active };
  }

  /** Until when everything waits (0: no pause). */
  get clientPause(): number {
    return this.clientPausedUntil;
  }

  /** The rates the tracker stated per endpoint (burst 429s), here or adopted from the site: what a site shares. */
  statedRates(): Record<string, number> {
    const rates: Record<string, number> = {};
    for (const [endpoint, lane] of this.lanes) if (lane.stated !== undefined) rates[endpoint] = lane.stated;
    return rates;
  }

  /**
   * What the site's record says (site-share.ts): the rates other runs learnt, and this run's share of every rate.
   * An endpoint not yet learnt here starts paced (no 429 of its own needed); a learnt one keeps its bucket.
   */
  adoptSite(rates: Readonly<Record<string, number>>, share: number): void {
    const now = this.clock.now();
    this.share = share;
    for (const [endpoint, limit] of Object.entries(rates)) {
      const lane = this.lane(endpoint);
      if (lane.stated !== limit) lane.learnRate(limit, share, now);
    }
    for (const lane of this.lanes.values()) lane.reshare(share);
  }

  /** The whole site refused until `until` (another run met its quota): everything waits, as after such a 429. */
  pauseClient(until: number): void {
    this.clientPausedUntil = Math.max(this.clientPausedUntil, until);
  }

  /**
   * Waits until the request may be sent: its issue's windows and pause, its endpoint's slot, pause and pace, the
   * client's pause. Answers the release to call once the answer is in.
   */
  async acquire(key: RequestKey): Promise<() => void> {
    const probe = flowProbe();
    let at = probe ? this.clock.now() : 0;
    /** Tells the probe how long the request waited on `on` since the last step. */
    const waited = (on: RequestWait) => {
      if (!probe) return;
      const now = this.clock.now();
      if (now > at) probe.waited(on, key.endpoint, now - at);
      at = now;
    };
    // An issue is held once paused, or once the site showed it limits writes per issue.
    const known = key.write && key.issue ? this.issues.get(key.issue) : undefined;
    const issue =
      known ?? (key.write && key.issue && this.perIssueLimited ? this.issueWrites(key.issue) : undefined);
    if (issue) {
      for (let wait = issue.take(this.clock.now()); wait > 0; wait = issue.take(this.clock.now()))
        await this.clock.sleep(wait);
      waited('issue');
    }
    const lane = this.lane(key.endpoint);
    const urgent = key.urgent === true;
    await lane.slot(urgent);
    waited('lane');
    if (urgent) lane.urgentPacing++;
    try {
      for (;;) {
        const now = this.clock.now();
        const paused = Math.max(this.clientPausedUntil, lane.pausedUntil) - now;
        if (paused > 0) {
          await this.clock.sleep(paused);
          waited('pause');
          continue;
        }
        const pace = lane.paceWait(now, urgent);
        if (pace <= 0) break;
        await this.clock.sleep(pace);
        waited('pace');
      }
    } finally {
      if (urgent) lane.urgentPacing--;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      lane.release();
    };
  }

  /** A success: the lane grows by one while requests queue for it (more in flight is what it lacked). */
  onSuccess(key: RequestKey): void {
    const lane = this.lane(key.endpoint);
    if (lane.waiting > 0 && lane.limit < lane.ceiling) {
      lane.limit++;
      lane.admitWaiters();
    }
  }

  /** A 429: pauses the scope it applies to (throttleScope) until the tracker's time is up. Answers that scope. */
  onThrottle(key: RequestKey, info: ThrottleInfo): ThrottleScope {
    const now = this.clock.now();
    const until = now + (info.retryAfterMs ?? 1000);
    const scope = throttleScope(key, info.reason);
    if (scope === 'issue' && key.issue) {
      this.perIssueLimited = (this.opts.perIssueWindows?.length ?? 0) > 0;
      const issue = this.issueWrites(key.issue);
      issue.pausedUntil = Math.max(issue.pausedUntil, until);
      return 'issue';
    }
    if (scope === 'endpoint') {
      const lane = this.lane(key.endpoint);
      // Cut once per signal: the 429s of requests already in flight when the bucket ran dry come back over a
      // latency or so, and each cutting again took the lane from 50 to 9 in flight on six of them (as TCP
      // cuts its window once per round trip, not once per lost segment).
      if (now >= lane.cutUntil) {
        lane.limit = Math.max(1, Math.floor(lane.limit * 0.75));
        lane.cutUntil = until;
      }
      // Told its rate, the endpoint is slowed to it from an empty bucket rather than stopped: Atlassian asks a
      // burst 429 to slow down that endpoint, and the Retry-After is for reissuing the refused request, which
      // waits it out itself (the HTTP layer's retry). Without a rate to pace at, the lane waits it out too.
      // https://developer.atlassian.com/cloud/jira/platform/build-an-app-that-respects-rate-limits/
      if (info.reason === 'jira-burst-based' && info.limit && info.limit > 0)
        lane.learnRate(info.limit, this.share, now);
      else lane.pausedUntil = Math.max(lane.pausedUntil, until);
      return 'endpoint';
    }
    this.clientPausedUntil = Math.max(this.clientPausedUntil, until);
    for (const lane of this.lanes.values()) lane.limit = Math.max(1, Math.floor(lane.limit / 2));
    return 'client';
  }

  /** Azure DevOps delayed an answer (`X-RateLimit-Delay`): hold back the next requests as long, and fewer at once. */
  onDelay(key: RequestKey, delayMs: number): void {
    if (delayMs <= 0) return;
    this.clientPausedUntil = Math.max(this.clientPausedUntil, this.clock.now() + delayMs);
    const lane = this.lane(key.endpoint);
    lane.limit = Math.max(1, Math.floor(lane.limit / 2));
  }

  private issueWrites(key: string): IssueWrites {
    let issue = this.issues.get(key);
    if (!issue) {
      // Issues idle for a minute are forgotten: a long run touches thousands.
      if (this.issues.size >= 5000) {
        const stale = this.clock.now() - 60_000;
        for (const [k, v] of this.issues) if (v.lastAt < stale) this.issues.delete(k);
      }
      issue = new IssueWrites(this.opts.perIssueWindows ?? []);
      this.issues.set(key, issue);
    }
    return issue;
  }
}
