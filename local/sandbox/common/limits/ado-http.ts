/** Azure DevOps' limits (ado.ts) as the sandbox's hooks apply them: per identity, a cost per kind of call. */
import type { FastifyRequest } from 'fastify';
import {
  ADO_LIMITS,
  ADO_LIMITS_OFF,
  type AdoLimitSettings,
  AdoLimitSettingsSchema,
  AdoRateLimits,
} from './ado.ts';
import type { SandboxProfile, TrackerLimits } from './install.ts';
import { type LatencySettings, NO_LATENCY } from './latency.ts';

/** Azure DevOps Services' latency: reads ~120 ms, writes ~250 ms, rare stragglers, ~12 MiB/s transfers. */
export const ADO_LATENCY: LatencySettings = {
  read: { medianMs: 120, p95Ms: 400 },
  write: { medianMs: 250, p95Ms: 800 },
  transferMsPerMiB: 80,
};

export const ADO_PROFILES: Record<SandboxProfile, { latency: LatencySettings; limits: AdoLimitSettings }> = {
  realistic: { latency: ADO_LATENCY, limits: ADO_LIMITS },
  off: { latency: NO_LATENCY, limits: ADO_LIMITS_OFF },
};

const path = (req: FastifyRequest) => (req.url.split('?')[0] ?? '').toLowerCase();
/** WIQL queries and batch reads are POSTs that only read. */
export const isAdoWrite = (req: FastifyRequest) =>
  req.method !== 'GET' &&
  !/\/_apis\/wit\/(wiql|workitemsbatch)$/.test(path(req)) &&
  !path(req).endsWith('/wiql');

export function adoLimits(opts: { blockedBody: () => unknown }): TrackerLimits<AdoLimitSettings> {
  const limiter = new AdoRateLimits(ADO_LIMITS_OFF);
  return {
    schema: AdoLimitSettingsSchema,
    get settings() {
      return limiter.settings;
    },
    set settings(s) {
      limiter.settings = s;
    },
    admit(req, facts, now) {
      // The identity: whoever the Authorization header names (a PAT, or an Entra token's user).
      const identity = req.headers.authorization ?? 'anonymous';
      const kind = /\/wiql$/.test(path(req)) ? 'query' : facts.write ? 'write' : 'read';
      const answer = limiter.admit(identity, limiter.costOf(kind, `${facts.method} ${facts.template}`), now);
      if (answer.kind === 'blocked')
        return {
          kind: 'refused',
          reason: 'ado-tstu-blocked',
          headers: answer.headers,
          body: opts.blockedBody(),
        };
      return {
        kind: 'go',
        delayMs: answer.delayMs,
        headers: answer.headers,
        ...(answer.delayMs > 0 ? { reason: 'ado-tstu-delayed' } : {}),
      };
    },
    answered: () => ({}),
    reset: () => limiter.reset(),
  };
}
