/** Team members: the tenant's users as the owner and admins manage them. */
import { mayAssignRole, mayInvite, mayRemoveMember } from '#domain/team.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import type { Principal, Role } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { User } from '#store/users.ts';
import { closeUserConnections } from './dashboard-connections.ts';
import { forgetSession } from './session-check.ts';

export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  updatedAt: string;
}

export const toMember = (u: User): Member => ({
  id: u.id,
  email: u.email,
  role: u.role,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
});

/**
 * Team changes are judged on the actor's role as stored now, not as the token claimed up to 15 minutes ago:
 * a demoted owner or a removed admin loses these powers at once.
 */
/**
 * A role change or a removal ends the user's sessions: this instance forgets its cached read at once (others
 * within SESSION_CHECK_CACHE_SECONDS), every refresh-token family of the user is revoked, and their dashboard
 * connections are closed and forgotten, so no run event reaches them (a socket would otherwise live up to 2
 * hours).
 */
async function endSessions(store: Store, tenantId: string, userId: string): Promise<void> {
  forgetSession(tenantId, userId);
  await Promise.all([
    store.refreshTokens.revokeUserFamilies(tenantId, userId),
    closeUserConnections(store, tenantId, userId),
  ]);
}

/**
 * Withdraws the pending invitations the user sent that their role (`undefined`: removed) may no longer send.
 * Run after the change is stored: an invitation that outlives this (the function stopped, or the user sent
 * one meanwhile) is void all the same, refused at accept and left out of the list (services/invitations.ts).
 */
async function withdrawInvitationsOf(store: Store, tenantId: string, userId: string, role: Role | undefined) {
  const withdrawn = await store.invitations.revokeSentBy(tenantId, userId, (i) => mayInvite(role, i.role));
  if (withdrawn) logger.info('invitations withdrawn with their inviter', { tenantId, userId, withdrawn });
}

export async function currentRole(store: Store, actor: Principal): Promise<Role> {
  const user = await store.users.get(actor.tenantId, actor.userId);
  if (!user || (user.role !== 'owner' && user.role !== 'admin')) throw errors.forbidden();
  return user.role;
}

export async function listMembers(store: Store, tenantId: string): Promise<Member[]> {
  const users = await store.users.list(tenantId);
  return users.map(toMember).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export async function changeMemberRole(
  store: Store,
  actor: Principal,
  userId: string,
  role: Role,
): Promise<Member> {
  const current = await store.users.get(actor.tenantId, userId);
  if (!current) throw errors.memberNotFound(userId);
  if (!mayAssignRole(await currentRole(store, actor), current.role, role)) throw errors.forbidden();
  const changed = await store.users.changeRole(actor.tenantId, userId, role);
  if (changed.ok) {
    await endSessions(store, actor.tenantId, userId);
    await withdrawInvitationsOf(store, actor.tenantId, userId, role);
    return toMember(changed.user);
  }
  if (changed.reason === 'last-owner') throw errors.lastOwner();
  if (changed.reason === 'not-found') throw errors.memberNotFound(userId);
  return changeMemberRole(store, actor, userId, role); // lost a race with another change: decide again
}

export async function removeMember(store: Store, actor: Principal, userId: string): Promise<void> {
  const current = await store.users.get(actor.tenantId, userId);
  if (!current) throw errors.memberNotFound(userId);
  if (!mayRemoveMember(await currentRole(store, actor), current.role)) throw errors.forbidden();
  const removed = await store.users.delete(actor.tenantId, userId);
  if (removed.ok) {
    await endSessions(store, actor.tenantId, userId);
    await withdrawInvitationsOf(store, actor.tenantId, userId, undefined);
    return;
  }
  if (removed.reason === 'last-owner') throw errors.lastOwner();
  if (removed.reason === 'not-found') throw errors.memberNotFound(userId);
  return removeMember(store, actor, userId);
}
