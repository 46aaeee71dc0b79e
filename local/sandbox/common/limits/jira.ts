/**
 * Jira Cloud's three independent rate-limiting systems, as Atlassian documents them
 * (https://developer.atlassian.com/cloud/jira/platform/rate-limiting and
 * https://developer.atlassian.com/cloud/jira/platform/build-an-app-that-respects-rate-limits/):
 *   - burst: a token bucket per tenant and endpoint (method + path template), GET/POST 100/s and PUT/DELETE
 *     50/s by default with per-endpoint overrides; one endpoint's limit does not slow another;
 *   - per issue: at most 20 writes in 2 s and 100 in 30 s to one issue;
 *   - points quota, OAuth 2.0 (3LO) traffic only (API-token traffic is exempt): 65,000 points an hour, a write
 *     costing 1 and a read 1 + 1 per object it returns; once spent, everything is refused until the window
 *     (the UTC hour) turns.
 * The sandbox is one tenant, so "per tenant" is per sandbox. Pure: the caller passes the time.
 */
import { z } from 'zod';
import { SlidingWindow } from './sliding-window.ts';
import { TokenBucket } from './token-bucket.ts';

export const JiraLimitSettingsSchema = z.strictObject({
  burst: z.strictObject({
    enabled: z.boolean(),
    /** Requests per second by HTTP method (GET, POST, PUT, DELETE, PATCH). */
    perMethod: z.record(z.string(), z.number().positive()),
    /** Requests per second for one endpoint, by `METHOD /path/{template}`, over the method's default. */
    overrides: z.record(z.string(), z.number().positive()),
    /** The bucket holds this many seconds' worth of requests (the burst buffer). */
    burstSeconds: z.number().positive().max(60),
  }),
  perIssue: z.strictObject({
    enabled: z.boolean(),
    windows: z.array(z.strictObject({ writes: z.number().int().min(1), seconds: z.number().positive() })),
  }),
  quota: z.strictObject({
    enabled: z.boolean(),
    points: z.number().int().min(1),
    /** Windows are aligned to the epoch: 3600 turns at the top of each UTC hour. */
    windowSeconds: z.number().int().min(1).max(86_400),
    /** API-token traffic is exempt on the real site; tests may count it too (false). */
    apiTokenExempt: z.boolean(),
  }),
});
export type JiraLimitSettings = z.infer<typeof JiraLimitSettingsSchema>;

export const JIRA_LIMITS: JiraLimitSettings = {
  burst: {
    enabled: true,
    perMethod: { GET: 100, POST: 100, PUT: 50, DELETE: 50, PATCH: 50 },
    overrides: {
      'GET /rest/api/3/issue/{issueIdOrKey}': 150,
      'GET /rest/api/3/attachment/content/{id}': 300,
      'GET /rest/api/3/user': 150,
    },
    burstSeconds: 1,
  },
  perIssue: {
    enabled: true,
    windows: [
      { writes: 20, seconds: 2 },
      { writes: 100, seconds: 30 },
    ],
  },
  quota: { enabled: true, points: 65_000, windowSeconds: 3600, apiTokenExempt: true },
};

export const JIRA_LIMITS_OFF: JiraLimitSettings = {
  burst: { ...JIRA_LIMITS.burst, enabled: false },
  perIssue: { ...JIRA_LIMITS.perIssue, enabled: false },
  quota: { ...JIRA_LIMITS.quota, enabled: false },
};

/** The reasons of Jira's 429s (RateLimit-Reason), one per limit; the burst first (the most common). */
export const JIRA_LIMIT_REASONS = [
  'jira-burst-based',
  'jira-per-issue-on-write',
  'jira-quota-global-based',
] as const;
export type JiraLimitReason = (typeof JIRA_LIMIT_REASONS)[number];

export interface JiraRefusal {
  reason: JiraLimitReason;
  retryAfterMs: number;
  headers: Record<string, string>;
}

export interface JiraRequestFacts {
  method: string;
  /** The route's path template, `/rest/api/3/issue/{issueIdOrKey}`. */
  template: string;
  /** The issues a write changes (canonical keys); empty for reads. */
  issues: string[];
  /** Whether it came through the OAuth 2.0 (3LO) gateway (the quota's traffic). */
  oauth: boolean;
  write: boolean;
}

/** ISO 8601 to the second, as Jira's `X-RateLimit-Reset`. */
const isoSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** The headers of Jira's 429 for `reason`: wait `seconds` (whole: a client that waits it out is never early). */
export function jiraRefusalHeaders(
  reason: JiraLimitReason,
  seconds: number,
  limit: number,
  now: number,
): Record<string, string> {
  return {
    'Retry-After': String(seconds),
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': isoSeconds(now + seconds * 1000),
    'RateLimit-Reason': reason,
  };
}

export class JiraRateLimits {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly issueWindows = new Map<string, SlidingWindow[]>();
  private quotaWindow = -1;
  private pointsUsed = 0;

  constructor(public settings: JiraLimitSettings) {}

  /** Endpoint key and its rate. */
  rateOf(method: string, template: string): { endpoint: string; rate: number } {
    const endpoint = `${method} ${template}`;
    const s = this.settings.burst;
    return { endpoint, rate: s.overrides[endpoint] ?? s.perMethod[method] ?? s.perMethod.GET ?? 100 };
  }

  /** Undefined when the request may go on (its burst token and per-issue writes are then spent). */
  admit(req: JiraRequestFacts, now: number): JiraRefusal | undefined {
    const quota = this.quotaRefusal(req, now);
    if (quota) return quota;
    const perIssue = this.perIssueRefusal(req, now);
    if (perIssue) return perIssue;
    const burst = this.settings.burst;
    if (burst.enabled) {
      const { endpoint, rate } = this.rateOf(req.method, req.template);
      let bucket = this.buckets.get(endpoint);
      if (!bucket || bucket.ratePerSecond !== rate) {
        bucket = new TokenBucket(rate, Math.max(1, rate * burst.burstSeconds), now);
        this.buckets.set(endpoint, bucket);
      }
      const answer = bucket.take(now);
      if (!answer.ok) return this.refusal('jira-burst-based', answer.waitMs, rate, now);
    }
    if (this.settings.perIssue.enabled && req.write) {
      for (const key of req.issues) for (const w of this.windowsOf(key)) w.add(now);
    }
    return undefined;
  }

  /** Whether the quota counts this traffic (OAuth 2.0 only, unless a setting says otherwise). */
  counts(oauth: boolean): boolean {
    const q = this.settings.quota;
    return q.enabled && (oauth || !q.apiTokenExempt);
  }

  /** Spends the points an answered request cost (the traffic the quota counts). */
  charge(oauth: boolean, points: number, now: number): void {
    if (!this.counts(oauth)) return;
    this.rollQuota(now);
    this.pointsUsed += points;
  }

  /** The `Beta-RateLimit-*` headers every OAuth answer carries while the quota is on. */
  quotaHeaders(now: number): Record<string, string> {
    const q = this.settings.quota;
    if (!q.enabled) return {};
    this.rollQuota(now);
    const resetMs = this.quotaResetAt(now);
    return {
      'Beta-RateLimit-Policy': `"global-app-quota";q=${q.points};w=${q.windowSeconds}`,
      'Beta-RateLimit': `"global-app-quota";r=${Math.max(0, q.points - this.pointsUsed)};t=${Math.ceil((resetMs - now) / 1000)}`,
    };
  }

  reset(): void {
    this.buckets.clear();
    this.issueWindows.clear();
    this.quotaWindow = -1;
    this.pointsUsed = 0;
  }

  private quotaResetAt(now: number): number {
    const w = this.settings.quota.windowSeconds * 1000;
    return (Math.floor(now / w) + 1) * w;
  }

  private rollQuota(now: number): void {
    const id = Math.floor(now / (this.settings.quota.windowSeconds * 1000));
    if (id !== this.quotaWindow) {
      this.quotaWindow = id;
      this.pointsUsed = 0;
    }
  }

  private quotaRefusal(req: JiraRequestFacts, now: number): JiraRefusal | undefined {
    const q = this.settings.quota;
    if (!this.counts(req.oauth)) return undefined;
    this.rollQuota(now);
    if (this.pointsUsed < q.points) return undefined;
    const refusal = this.refusal('jira-quota-global-based', this.quotaResetAt(now) - now, q.points, now);
    Object.assign(refusal.headers, this.quotaHeaders(now), {
      'X-Beta-RateLimit-Reason': 'jira-quota-global-based',
    });
    return refusal;
  }

  private windowsOf(issue: string): SlidingWindow[] {
    let windows = this.issueWindows.get(issue);
    const wanted = this.settings.perIssue.windows;
    if (
      !windows ||
      windows.length !== wanted.length ||
      windows.some((w, i) => w.windowMs !== (wanted[i]?.seconds ?? 0) * 1000)
    ) {
      windows = wanted.map((w) => new SlidingWindow(w.seconds * 1000));
      this.issueWindows.set(issue, windows);
    }
    return windows;
  }

  private perIssueRefusal(req: JiraRequestFacts, now: number): JiraRefusal | undefined {
    if (!this.settings.perIssue.enabled || !req.write) return undefined;
    for (const key of req.issues) {
      const windows = this.windowsOf(key);
      for (const [i, limit] of this.settings.perIssue.windows.entries()) {
        const wait = windows[i]?.msUntilFits(now, limit.writes) ?? 0;
        if (wait > 0) return this.refusal('jira-per-issue-on-write', wait, limit.writes, now);
      }
    }
    return undefined;
  }

  private refusal(reason: JiraLimitReason, waitMs: number, limit: number, now: number): JiraRefusal {
    // Retry-After is whole seconds: a client that waits it out is never early.
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return { reason, retryAfterMs: seconds * 1000, headers: jiraRefusalHeaders(reason, seconds, limit, now) };
  }
}
