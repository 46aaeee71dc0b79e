/**
 * Whether a session still stands: its user exists and still has the token version the session was signed
 * with (a removal deletes the user, a role change bumps the version). Read through a short per-process cache:
 * a warm function keeps its last read of a user for SESSION_CHECK_CACHE_SECONDS at most, so a change made
 * elsewhere reaches every instance within that; the instance that made the change forgets at once. The API's
 * session check, the event stream and the dashboard's sockets all ask here (docs/security.md).
 */
import { nowMs } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import type { Role } from '#platform/tokens.ts';
import type { UserRepository } from './users.ts';

/** The part of a session its standing is judged on. */
export interface SessionRef {
  tenantId: string;
  userId: string;
  tokenVersion: number;
}

interface Seen {
  /** undefined: no such user (removed). */
  current: { role: Role; tokenVersion: number } | undefined;
  until: number;
}

/** Bounded so a flood of distinct tokens cannot grow a warm function's memory without limit. */
const MAX_ENTRIES = 10_000;
const seen = new Map<string, Seen>();
const keyOf = (tenantId: string, userId: string) => `${tenantId}#${userId}`;

async function currentOf(
  users: UserRepository,
  tenantId: string,
  userId: string,
  fresh: boolean,
): Promise<Seen['current']> {
  const key = keyOf(tenantId, userId);
  const now = nowMs();
  const hit = seen.get(key);
  if (!fresh && hit && hit.until > now) return hit.current;
  const user = await users.get(tenantId, userId);
  const current = user ? { role: user.role, tokenVersion: user.tokenVersion ?? 0 } : undefined;
  const ttlMs = config().sessionCheckCacheSeconds * 1000;
  if (ttlMs > 0) {
    if (seen.size >= MAX_ENTRIES) seen.clear();
    seen.set(key, { current, until: now + ttlMs });
  }
  return current;
}

/**
 * The user's role as stored now when the session still stands; undefined when it ended. `fresh` skips the
 * cache: for a check that must see a change made a moment ago on another instance.
 */
export async function standingRole(
  users: UserRepository,
  session: SessionRef,
  opts: { fresh?: boolean } = {},
): Promise<Role | undefined> {
  const current = await currentOf(users, session.tenantId, session.userId, opts.fresh ?? false);
  return current && current.tokenVersion === session.tokenVersion ? current.role : undefined;
}

/** Called by whatever changed the user (role, removal), so this instance honours the change at once. */
export function forgetStanding(tenantId: string, userId: string): void {
  seen.delete(keyOf(tenantId, userId));
}
