/** Jira's limits (jira.ts) as the sandbox's hooks apply them: which issues a write touches, OAuth or not, points. */
import type { FastifyRequest } from 'fastify';
import type { SandboxProfile, TrackerLimits } from './install.ts';
import {
  JIRA_LIMITS,
  JIRA_LIMITS_OFF,
  type JiraLimitSettings,
  JiraLimitSettingsSchema,
  JiraRateLimits,
} from './jira.ts';
import { type LatencySettings, NO_LATENCY } from './latency.ts';

/** A Jira Cloud site's latency: reads ~150 ms, writes ~300 ms, rare multi-second stragglers, ~10 MiB/s transfers. */
export const JIRA_LATENCY: LatencySettings = {
  read: { medianMs: 150, p95Ms: 500 },
  write: { medianMs: 300, p95Ms: 900 },
  transferMsPerMiB: 100,
};

export const JIRA_PROFILES: Record<SandboxProfile, { latency: LatencySettings; limits: JiraLimitSettings }> =
  {
    realistic: { latency: JIRA_LATENCY, limits: JIRA_LIMITS },
    off: { latency: NO_LATENCY, limits: JIRA_LIMITS_OFF },
  };

/** Searches are POSTs that only read. */
export const isJiraWrite = (req: FastifyRequest) =>
  req.method !== 'GET' && req.method !== 'HEAD' && !(req.url.split('?')[0] ?? '').endsWith('/search/jql');

/** How many objects an answer holds, for the quota's "1 + 1 per object read". */
function objectsIn(payload: unknown): number {
  if (typeof payload !== 'string' || (!payload.startsWith('{') && !payload.startsWith('['))) return 1;
  try {
    const body = JSON.parse(payload) as unknown;
    if (Array.isArray(body)) return body.length;
    const o = body as Record<string, unknown>;
    for (const k of ['issues', 'values', 'comments', 'worklogs', 'transitions']) {
      const list = o[k];
      if (Array.isArray(list)) return list.length;
    }
    return 1;
  } catch {
    return 1;
  }
}

export function jiraLimits(opts: {
  /** Canonical key of an issue id or key (so `10001` and `MIG-1` are one issue); undefined when unknown. */
  issueKey: (idOrKey: string) => string | undefined;
  isOAuth: (req: FastifyRequest) => boolean;
  errorBody: (message: string) => unknown;
}): TrackerLimits<JiraLimitSettings> {
  const limiter = new JiraRateLimits(JIRA_LIMITS_OFF);
  const issuesOf = (req: FastifyRequest): string[] => {
    const params = (req.params ?? {}) as Record<string, string | undefined>;
    const body = (req.body ?? {}) as Record<string, { key?: string; id?: string } | undefined>;
    const named = [
      params.issueIdOrKey,
      // An issue link changes both of its issues.
      body.inwardIssue?.key ?? body.inwardIssue?.id,
      body.outwardIssue?.key ?? body.outwardIssue?.id,
    ].filter((v): v is string => typeof v === 'string' && v.length > 0);
    return [...new Set(named.map((k) => opts.issueKey(k) ?? k.toUpperCase()))];
  };
  return {
    schema: JiraLimitSettingsSchema,
    get settings() {
      return limiter.settings;
    },
    set settings(s) {
      limiter.settings = s;
    },
    admit(req, facts, now) {
      const refusal = limiter.admit(
        {
          method: facts.method,
          template: facts.template,
          write: facts.write,
          issues: facts.write ? issuesOf(req) : [],
          oauth: opts.isOAuth(req),
        },
        now,
      );
      if (!refusal) return { kind: 'go', delayMs: 0, headers: {} };
      return {
        kind: 'refused',
        reason: refusal.reason,
        headers: refusal.headers,
        body: opts.errorBody('Rate limit exceeded.'),
      };
    },
    answered(req, facts, payload, now) {
      const oauth = opts.isOAuth(req);
      // Traffic the quota does not count costs nothing, and its answer is not parsed again to count objects
      // (that parse was 2% of an engine test file's CPU).
      if (!limiter.counts(oauth)) return {};
      limiter.charge(oauth, facts.write ? 1 : 1 + objectsIn(payload), now);
      return limiter.quotaHeaders(now);
    },
    reset: () => limiter.reset(),
  };
}
