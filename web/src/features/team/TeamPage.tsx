/**
 * Team members: list, invite by e-mail with a role (the invitee sets a password from the e-mailed link), pending
 * invitations (revoke), change a role, remove. Owner and admins; admins cannot make owners.
 */
import { Button, Card, Group, Select, Table, TextInput, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../../api/client';
import type { Role } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { invitationsQuery, membersQuery, teamKeys } from './api';

export function TeamPage() {
  const { session } = useAuth();
  const client = useQueryClient();
  const members = useQuery(membersQuery());
  const roles: Role[] = session?.role === 'owner' ? ['owner', 'admin', 'member'] : ['admin', 'member'];
  // Members and invitations both: inviting adds an invitation, revoking takes one away.
  const refresh = () => void client.invalidateQueries({ queryKey: teamKeys.all });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const add = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/team/members', { body: { email, role } })),
    onSuccess: () => {
      setEmail('');
      refresh();
    },
  });
  const invitations = useQuery(invitationsQuery());
  const revoke = useMutation({
    mutationFn: async (invitationId: string) =>
      unwrap(
        await api.DELETE('/api/team/invitations/{invitationId}', { params: { path: { invitationId } } }),
      ),
    onSuccess: refresh,
  });
  const change = useMutation({
    mutationFn: async (v: { userId: string; role: Role }) =>
      unwrap(
        await api.PATCH('/api/team/members/{userId}', {
          params: { path: { userId: v.userId } },
          body: { role: v.role },
        }),
      ),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: async (userId: string) =>
      unwrap(await api.DELETE('/api/team/members/{userId}', { params: { path: { userId } } })),
    onSuccess: refresh,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  return (
    <>
      <PageTitle>Team</PageTitle>
      <Card withBorder mb="lg" component="section" aria-label="Invite a member">
        <form onSubmit={submit}>
          <ErrorNotice error={add.error} title="Could not invite the member" />
          <Group align="end">
            <TextInput
              label="E-mail"
              type="email"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <Select
              label="Role"
              data={roles}
              value={role}
              allowDeselect={false}
              onChange={(v) => setRole((v as Role) ?? 'member')}
            />
            <Button type="submit" loading={add.isPending}>
              Invite member
            </Button>
          </Group>
        </form>
      </Card>
      {(invitations.data?.length ?? 0) > 0 && (
        <Table aria-label="Pending invitations" mb="lg">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Invited</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Invited by</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(invitations.data ?? []).map((i) => (
              <Table.Tr key={i.id}>
                <Table.Td>{i.email}</Table.Td>
                <Table.Td>{i.role}</Table.Td>
                <Table.Td>{i.invitedBy.email}</Table.Td>
                <Table.Td>{new Date(i.expiresAt).toLocaleDateString()}</Table.Td>
                <Table.Td>
                  <Button size="xs" variant="default" onClick={() => revoke.mutate(i.id)}>
                    Revoke invitation for {i.email}
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <ErrorNotice
        error={members.error ?? invitations.error ?? change.error ?? remove.error ?? revoke.error}
      />
      <Table aria-label="Members" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>E-mail</Table.Th>
            <Table.Th>Role</Table.Th>
            <Table.Th>Since</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(members.data ?? []).map((m) => {
            const editable = session?.role === 'owner' || m.role !== 'owner';
            return (
              <Table.Tr key={m.id}>
                <Table.Td>{m.email}</Table.Td>
                <Table.Td>
                  {editable ? (
                    <Select
                      aria-label={`Role of ${m.email}`}
                      data={roles}
                      value={m.role}
                      allowDeselect={false}
                      onChange={(v) => v && v !== m.role && change.mutate({ userId: m.id, role: v as Role })}
                    />
                  ) : (
                    m.role
                  )}
                </Table.Td>
                <Table.Td>{new Date(m.createdAt).toLocaleDateString()}</Table.Td>
                <Table.Td>
                  {editable && m.email !== session?.email && (
                    <Button size="xs" color="red" variant="light" onClick={() => remove.mutate(m.id)}>
                      Remove {m.email}
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </>
  );
}
