/** Who may give which role, and see what of other people. Pure. */
import type { Role } from '#platform/tokens.ts';

/**
 * Owners manage every role. Admins manage admins and members but can neither make an owner nor touch one,
 * so an admin can never lock the owners out of their own tenant.
 */
export function mayAssignRole(actor: Role, currentRole: Role | undefined, newRole: Role): boolean {
  if (actor === 'owner') return true;
  if (actor !== 'admin') return false;
  return newRole !== 'owner' && currentRole !== 'owner';
}

/**
 * Whether an invitation to `invited` still stands on its inviter's authority: the inviter is a user of the
 * tenant (`undefined`: removed) whose role may give that role now. An invitation is only as good as the
 * person who sent it: removing or demoting them withdraws what they may no longer send.
 */
export function mayInvite(inviter: Role | undefined, invited: Role): boolean {
  return inviter !== undefined && mayAssignRole(inviter, undefined, invited);
}

export function mayRemoveMember(actor: Role, memberRole: Role): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && memberRole !== 'owner';
}

/**
 * Invitations one tenant may send in a UTC day (a fixed window). Each mails an address the tenant chose through our sender,
 * so without a cap a tenant could use the service to mail strangers; an admin's real team fits well within it.
 */
export const INVITATIONS_PER_DAY = 50;

/**
 * Jira users' e-mail addresses (the mappings editor's people): owners and admins map people, which is what the
 * addresses help with; a member edits no mapping, and an account id and a display name tell them who is who.
 */
export const seesPeopleEmails = (role: Role): boolean => role !== 'member';
