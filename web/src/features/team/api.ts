/** The team's queries: their cache keys (`teamKeys`, members and invitations under one) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const teamKeys = {
  all: ['team'] as const,
  members: () => [...teamKeys.all, 'members'] as const,
  invitations: () => [...teamKeys.all, 'invitations'] as const,
};

export const membersQuery = () =>
  queryOptions({
    queryKey: teamKeys.members(),
    queryFn: async () => unwrap(await api.GET('/api/team/members')),
  });

/** The invitations sent and not yet accepted. */
export const invitationsQuery = () =>
  queryOptions({
    queryKey: teamKeys.invitations(),
    queryFn: async () => unwrap(await api.GET('/api/team/invitations')),
  });
