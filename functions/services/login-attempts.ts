/**
 * Password login's counters per account (functions/domain/rate-limits.ts): the e-mail address, and the address
 * with the tenant named. Every attempt is counted before its password is compared, with one atomic ADD per
 * counter, so parallel guesses cannot all slip under the limit; a counter past its limit refuses the attempt
 * before any comparison, whatever the password, so the lock is no oracle. A successful login gives back its own
 * count and nothing more: a success never wipes failures, or one who holds a password of the address (in one
 * tenant) could reset the lock between guesses at another.
 */
import { LOGIN_FAILURE_WINDOW_SECONDS, loginCounters } from '#domain/rate-limits.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import type { LoginFailureLimits } from '#platform/config.ts';
import { errors } from '#platform/errors.ts';
import type { Store } from '#store/index.ts';

export interface CountedLoginAttempt {
  /** The attempt succeeded: it was no failure, take its count back. */
  succeeded(): Promise<void>;
}

/** Counts a login attempt against its account's counters; throws 429 `RATE_LIMITED` when one is spent. */
export async function countLoginAttempt(
  store: Store,
  email: string,
  tenantId: string | undefined,
  limits: LoginFailureLimits,
): Promise<CountedLoginAttempt> {
  const now = nowEpochSeconds();
  const counters = loginCounters(email, tenantId, limits);
  const windows = await Promise.all(
    counters.map((c) => store.rateLimits.hit(c.bucket, c.subject, now, LOGIN_FAILURE_WINDOW_SECONDS)),
  );
  const spent = counters.findIndex((c, i) => (windows[i]?.count ?? 0) > c.limit);
  const window = windows[spent];
  const counter = counters[spent];
  if (window && counter)
    throw errors.loginLocked(Math.max(1, window.resetAt - now), counter.limit, window.resetAt);
  return {
    succeeded: async () => {
      await Promise.all(
        counters.map((c, i) =>
          store.rateLimits.giveBack(c.bucket, c.subject, windows[i] as (typeof windows)[number]),
        ),
      );
    },
  };
}
