/**
 * Azure DevOps' global consumption limit (https://learn.microsoft.com/en-us/azure/devops/integrate/concepts/rate-limits):
 * each identity's usage, in Azure DevOps throughput units (TSTUs), over a sliding five-minute window. Past the
 * budget its answers are delayed (more the further past, up to 30 s), with `X-RateLimit-Resource`,
 * `X-RateLimit-Delay`, `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; further past it, its
 * requests are blocked: 429, `TF400733`, `Retry-After`. Microsoft says a call's TSTUs cannot be computed by a
 * formula, so what each call costs is a setting. Pure: the caller passes the time.
 */
import { z } from 'zod';
import { SlidingWindow } from './sliding-window.ts';

export const AdoLimitSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  /** TSTUs an identity may use in the window before its answers are delayed. */
  budget: z.number().positive(),
  windowSeconds: z.number().positive().max(3600),
  /** Usage at budget x this blocks requests (429 TF400733) instead of delaying them. */
  blockAtFactor: z.number().min(1),
  maxDelayMs: z.number().int().min(0).max(60_000),
  /** TSTUs per call by kind; `byEndpoint` (`METHOD /path/{template}`) wins over the kind. */
  costs: z.strictObject({
    read: z.number().min(0),
    write: z.number().min(0),
    query: z.number().min(0),
    byEndpoint: z.record(z.string(), z.number().min(0)),
  }),
});
export type AdoLimitSettings = z.infer<typeof AdoLimitSettingsSchema>;

export const ADO_LIMITS: AdoLimitSettings = {
  enabled: true,
  budget: 200,
  windowSeconds: 300,
  blockAtFactor: 2,
  maxDelayMs: 30_000,
  costs: { read: 0.02, write: 0.05, query: 0.5, byEndpoint: {} },
};
export const ADO_LIMITS_OFF: AdoLimitSettings = { ...ADO_LIMITS, enabled: false };

export type AdoAdmission =
  | { kind: 'go'; delayMs: number; headers: Record<string, string> }
  | { kind: 'blocked'; retryAfterMs: number; headers: Record<string, string> };

const RESOURCE = 'WorkItemTrackingResource';

export class AdoRateLimits {
  private readonly usage = new Map<string, SlidingWindow>();

  constructor(public settings: AdoLimitSettings) {}

  costOf(kind: 'read' | 'write' | 'query', endpoint: string): number {
    const c = this.settings.costs;
    return c.byEndpoint[endpoint] ?? c[kind];
  }

  /** Admits (and charges) one call of `identity` costing `cost`, or blocks it. */
  admit(identity: string, cost: number, now: number): AdoAdmission {
    const s = this.settings;
    if (!s.enabled) return { kind: 'go', delayMs: 0, headers: {} };
    let window = this.usage.get(identity);
    if (!window || window.windowMs !== s.windowSeconds * 1000) {
      window = new SlidingWindow(s.windowSeconds * 1000);
      this.usage.set(identity, window);
    }
    const used = window.used(now);
    const blockAt = s.budget * s.blockAtFactor;
    const resetSeconds = (ms: number) => String(Math.ceil((now + ms) / 1000));
    if (used >= blockAt) {
      const wait = Math.max(1000, window.msUntilFits(now, blockAt, Math.min(cost, blockAt)));
      const seconds = Math.ceil(wait / 1000);
      return {
        kind: 'blocked',
        retryAfterMs: seconds * 1000,
        headers: {
          'Retry-After': String(seconds),
          'X-RateLimit-Resource': RESOURCE,
          'X-RateLimit-Limit': String(s.budget),
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': resetSeconds(seconds * 1000),
        },
      };
    }
    window.add(now, cost);
    if (used < s.budget) return { kind: 'go', delayMs: 0, headers: {} };
    // Past the budget: delayed in proportion to how far towards the block it is.
    const share = (used - s.budget) / Math.max(blockAt - s.budget, 1e-9);
    const delayMs = Math.min(s.maxDelayMs, Math.max(1, Math.round(share * s.maxDelayMs)));
    return {
      kind: 'go',
      delayMs,
      headers: {
        'X-RateLimit-Resource': RESOURCE,
        'X-RateLimit-Delay': (delayMs / 1000).toFixed(3),
        'X-RateLimit-Limit': String(s.budget),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': resetSeconds(window.msUntilFits(now, s.budget, 0)),
      },
    };
  }

  reset(): void {
    this.usage.clear();
  }
}
