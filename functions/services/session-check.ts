/**
 * Sessions follow the user record. An access token is honoured only while its user exists and still has the
 * token version it was signed with (a removal deletes the user, a role change bumps the version), and it acts
 * with the role stored now. Each warm function keeps its last read of a user for SESSION_CHECK_CACHE_SECONDS
 * at most, so a change reaches every instance within that; the instance that made the change forgets at once.
 */
import { nowMs } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { errors } from '#platform/errors.ts';
import type { Principal, Role } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';

interface Seen {
  /** undefined: no such user (removed). */
  current: { role: Role; tokenVersion: number } | undefined;
  until: number;
}

/** Bounded so a flood of distinct tokens cannot grow a warm function's memory without limit. */
const MAX_ENTRIES = 10_000;
const seen = new Map<string, Seen>();
const keyOf = (tenantId: string, userId: string) => `${tenantId}#${userId}`;

async function currentOf(store: Store, tenantId: string, userId: string): Promise<Seen['current']> {
  const key = keyOf(tenantId, userId);
  const now = nowMs();
  const hit = seen.get(key);
  if (hit && hit.until > now) return hit.current;
  const user = await store.users.get(tenantId, userId);
  const current = user ? { role: user.role, tokenVersion: user.tokenVersion ?? 0 } : undefined;
  const ttlMs = config().sessionCheckCacheSeconds * 1000;
  if (ttlMs > 0) {
    if (seen.size >= MAX_ENTRIES) seen.clear();
    seen.set(key, { current, until: now + ttlMs });
  }
  return current;
}

/** The verified token's principal as the user record stands now; 401 SESSION_REVOKED when it no longer holds. */
export async function currentPrincipal(store: Store, principal: Principal): Promise<Principal> {
  const current = await currentOf(store, principal.tenantId, principal.userId);
  if (!current || current.tokenVersion !== principal.tokenVersion) throw errors.sessionRevoked();
  return { ...principal, role: current.role };
}

/** Called by whatever changed the user (role, removal), so this instance honours the change at once. */
export function forgetSession(tenantId: string, userId: string): void {
  seen.delete(keyOf(tenantId, userId));
}
