/**
 * The service's notion of "now". Everything time-dependent (token expiry, TTLs, rate windows) reads it here,
 * so tests can move time forward without touching the process clock the SDKs depend on.
 */
export const clock = {
  now(): Date {
    return new Date();
  },
};

export const nowMs = (): number => clock.now().getTime();
export const nowIso = (): string => clock.now().toISOString();
export const nowEpochSeconds = (): number => Math.floor(nowMs() / 1000);
