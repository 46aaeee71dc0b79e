/**
 * Invitations instead of claims: adding a member sends a one-time link to the address; until the person
 * accepts (and chooses a password) nothing exists in the tenant, and nothing anywhere else is touched.
 * Addresses are unique per tenant, so whether another tenant has the address changes no answer here.
 */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Mailer } from '#adapters/mail.ts';
import { INVITATION_TTL_SECONDS, invitationLink, invitationMail } from '#domain/invitations.ts';
import { INVITATIONS_PER_DAY, mayAssignRole, mayInvite } from '#domain/team.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { hashPassword } from '#platform/passwords.ts';
import { type Principal, type Role, sha256Url } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { Invitation } from '#store/invitations.ts';
import { type Session, startSession } from './auth.ts';
import { currentRole } from './team.ts';

const DAY_SECONDS = 86_400;

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  status: 'PENDING';
  /** Who sent it: the invitation stands only while they may (mayInvite). */
  invitedBy: { id: string; email: string };
  createdAt: string;
  expiresAt: string;
}

const viewOf = (i: Invitation, inviter: { id: string; email: string }): InvitationView => ({
  id: i.id,
  email: i.email,
  role: i.role,
  status: 'PENDING',
  invitedBy: { id: inviter.id, email: inviter.email },
  createdAt: i.createdAt,
  expiresAt: new Date(i.expiresAt * 1000).toISOString(),
});

/** Invites an address to the actor's tenant with a role the actor may give; 409 only if it is already a member here. */
export async function inviteMember(
  store: Store,
  mail: () => Mailer,
  actor: Principal,
  input: { email: string; role: Role },
): Promise<InvitationView> {
  if (!mayAssignRole(await currentRole(store, actor), undefined, input.role)) throw errors.forbidden();
  const email = input.email.toLowerCase();
  if (await store.users.findInTenant(actor.tenantId, email)) throw errors.emailTaken();
  const tenant = await store.tenants.get(actor.tenantId);
  if (!tenant) throw errors.forbidden();
  const now = nowEpochSeconds();
  const sent = await store.rateLimits.hit('invitations', actor.tenantId, now, DAY_SECONDS);
  if (sent.count > INVITATIONS_PER_DAY)
    throw errors.rateLimited(Math.max(1, sent.resetAt - now), INVITATIONS_PER_DAY, sent.resetAt);
  const token = randomBytes(32).toString('base64url');
  const invitation: Invitation = {
    id: uuidv7(),
    tenantId: actor.tenantId,
    email,
    role: input.role,
    invitedBy: actor.userId,
    createdAt: nowIso(),
    expiresAt: nowEpochSeconds() + INVITATION_TTL_SECONDS,
  };
  const tokenHash = sha256Url(token);
  await store.invitations.create(invitation, tokenHash);
  const message = invitationMail({
    tenantName: tenant.name,
    tenantId: tenant.id,
    role: invitation.role,
    link: invitationLink(config().appUrl, token),
    expiresAt: invitation.expiresAt,
  });
  try {
    await mail().send({ to: email, ...message });
  } catch (err) {
    // A link nobody received must not stay valid.
    await store.invitations.revoke(actor.tenantId, invitation.id);
    logger.error('invitation mail not sent', { tenantId: actor.tenantId, errorName: (err as Error).name });
    throw errors.mailUnavailable();
  }
  logger.info('member invited', {
    tenantId: actor.tenantId,
    invitationId: invitation.id,
    role: invitation.role,
  });
  return viewOf(invitation, { id: actor.userId, email: actor.email });
}

/**
 * The tenant's pending invitations with who sent them. One whose inviter was removed or demoted since is void
 * (refused at accept) and not listed, even if the sweep of the change that voided it has not removed it (yet).
 */
export async function listInvitations(store: Store, tenantId: string): Promise<InvitationView[]> {
  const [pending, users] = await Promise.all([store.invitations.list(tenantId), store.users.list(tenantId)]);
  const byId = new Map(users.map((u) => [u.id, u]));
  return pending.flatMap((i) => {
    const inviter = byId.get(i.invitedBy);
    return inviter && mayInvite(inviter.role, i.role) ? [viewOf(i, inviter)] : [];
  });
}

/** Whether the invitation's inviter still is a user of its tenant whose role may give the invited role. */
export async function inviterStillAllows(store: Store, invitation: Invitation): Promise<boolean> {
  const inviter = await store.users.get(invitation.tenantId, invitation.invitedBy);
  return mayInvite(inviter?.role, invitation.role);
}

export async function revokeInvitation(store: Store, actor: Principal, id: string): Promise<void> {
  await currentRole(store, actor);
  if (!(await store.invitations.revoke(actor.tenantId, id))) throw errors.invitationNotFound(id);
}

/**
 * The link's holder accepts: the invitation is spent, the user is made in the inviting tenant with the
 * invited role and the chosen password, and signed in. A used, revoked, expired or unknown link answers alike;
 * one whose inviter was removed or demoted since is withdrawn (spent all the same).
 */
export async function acceptInvitation(store: Store, token: string, password: string): Promise<Session> {
  const invitation = await store.invitations.consume(sha256Url(token));
  if (!invitation) throw errors.invitationInvalid();
  if (!(await inviterStillAllows(store, invitation))) {
    logger.warn('invitation withdrawn at accept: its inviter may no longer send it', {
      tenantId: invitation.tenantId,
      invitationId: invitation.id,
    });
    throw errors.invitationWithdrawn();
  }
  const created = await store.users.create({
    tenantId: invitation.tenantId,
    email: invitation.email,
    role: invitation.role,
    passwordHash: await hashPassword(password),
    // The tenant asked for this person: a removal of the address before is over.
    ifRemoved: 'clear',
  });
  if (!created.ok) {
    // Already a member of that tenant (told to the address's holder only), or the tenant is gone.
    if (created.reason === 'email-taken') throw errors.emailTaken();
    throw errors.invitationInvalid();
  }
  logger.info('invitation accepted', { tenantId: invitation.tenantId, userId: created.user.id });
  return startSession(store, created.user);
}
