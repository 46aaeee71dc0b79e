/** /api/team/members and /api/team/invitations: the owner and admins manage who belongs to the tenant. */
import type * as z from 'zod';
import { mailer } from '#adapters/mail.ts';
import { createApiHandler, json, type Operation } from '#api/handler.ts';
import { ChangeRoleSchema, InviteSchema } from '#api/requests.ts';
import type * as R from '#api/responses.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as invitations from '#services/invitations.ts';
import * as team from '#services/team.ts';
import { store } from '#store/index.ts';

const list: Operation = async (req) =>
  json(
    200,
    (await team.listMembers(store(), req.principal.tenantId)) satisfies z.input<typeof R.MemberSchema>[],
  );

const add: Operation = async (req) =>
  json(
    202,
    await invitations.inviteMember(store(), mailer, req.principal, parseOrThrow(InviteSchema, req.body)),
  );

const changeRole: Operation = async (req) => {
  const { role } = parseOrThrow(ChangeRoleSchema, req.body);
  return json(200, await team.changeMemberRole(store(), req.principal, req.params.userId ?? '', role));
};

const remove: Operation = async (req) => {
  await team.removeMember(store(), req.principal, req.params.userId ?? '');
  return json(204);
};

const listInvitations: Operation = async (req) =>
  json(
    200,
    (await invitations.listInvitations(store(), req.principal.tenantId)) satisfies z.input<
      typeof R.InvitationSchema
    >[],
  );

const revokeInvitation: Operation = async (req) => {
  await invitations.revokeInvitation(store(), req.principal, req.params.invitationId ?? '');
  return json(204);
};

export const handler = createApiHandler('team', {
  list,
  add,
  changeRole,
  remove,
  invitations: listInvitations,
  revokeInvitation,
});
