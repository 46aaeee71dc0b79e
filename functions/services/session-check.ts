/**
 * Sessions follow the user record. An access token is honoured only while its user exists and still has the
 * token version it was signed with, and it acts with the role stored now (#store/session-standing.ts holds
 * the rule and its short cache).
 */
import { errors } from '#platform/errors.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import { forgetStanding, type SessionRef, standingRole } from '#store/session-standing.ts';

/** The verified token's principal as the user record stands now; 401 SESSION_REVOKED when it no longer holds. */
export async function currentPrincipal(store: Store, principal: Principal): Promise<Principal> {
  const role = await standingRole(store.users, principal);
  if (!role) throw errors.sessionRevoked();
  return { ...principal, role };
}

/** Whether the session still stands (no error): for what lives on after its admission (a stream, a socket). */
export async function sessionHolds(
  store: Store,
  session: SessionRef,
  opts: { fresh?: boolean } = {},
): Promise<boolean> {
  return (await standingRole(store.users, session, opts)) !== undefined;
}

/** Called by whatever changed the user (role, removal), so this instance honours the change at once. */
export function forgetSession(tenantId: string, userId: string): void {
  forgetStanding(tenantId, userId);
}
