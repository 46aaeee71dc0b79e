/** Projects: most recent first, create (owner, admin), delete with a confirmation that names what goes. */
import {
  Button,
  Card,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  VisuallyHidden,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api, type Schemas, unwrap } from '../../api/client';
import { allowed } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { StatusBadge } from '../../components/StatusBadge';
import { projectKeys, projectsQuery } from './api';

/** The project's latest run: its type and status, when it ended (or started), linked to its page. */
function LastRun({ run }: { run: Schemas['LastRun'] | undefined }) {
  if (!run) return <Text size="sm">Never run</Text>;
  const at = run.finishedAt ?? run.startedAt ?? run.createdAt;
  return (
    <Link href={`/runs/${run.id}`} data-testid="last-run">
      <Group gap={6} wrap="nowrap" component="span">
        <StatusBadge status={run.status} />
        <Text size="sm" component="span">
          {run.type}, {run.finishedAt ? 'ended' : 'started'} {new Date(at).toLocaleString()}
        </Text>
      </Group>
    </Link>
  );
}

export function ProjectsPage() {
  const { session } = useAuth();
  const role = session?.role;
  const projects = useQuery(projectsQuery());
  const [doomed, setDoomed] = useState<Schemas['ProjectSummary'] | undefined>();
  return (
    <>
      <PageTitle>Projects</PageTitle>
      {allowed('POST /api/projects', role) && <CreateProject />}
      <ErrorNotice error={projects.error} />
      <Table striped highlightOnHover aria-label="Projects" data-testid="projects-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Last run</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Updated</Table.Th>
            {allowed('DELETE /api/projects/{projectId}', role) && (
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(projects.data ?? []).map((p) => (
            <Table.Tr key={p.id}>
              <Table.Td>
                <Link href={`/projects/${p.id}`}>{p.name}</Link>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={p.status} />
              </Table.Td>
              <Table.Td>
                <LastRun run={p.lastRun} />
              </Table.Td>
              <Table.Td>{new Date(p.createdAt).toLocaleString()}</Table.Td>
              <Table.Td>{new Date(p.updatedAt).toLocaleString()}</Table.Td>
              {allowed('DELETE /api/projects/{projectId}', role) && (
                <Table.Td>
                  <Button size="xs" color="red" variant="light" onClick={() => setDoomed(p)}>
                    Delete {p.name}
                  </Button>
                </Table.Td>
              )}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {projects.data?.length === 0 && <Text mt="md">No projects yet.</Text>}
      <DeleteProject project={doomed} onClose={() => setDoomed(undefined)} />
    </>
  );
}

function CreateProject() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/projects', {
          body: { name, description, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
        }),
      ),
    onSuccess: () => {
      setName('');
      setDescription('');
      void client.invalidateQueries({ queryKey: projectKeys.list() });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Card withBorder mb="lg" component="section" aria-label="New project">
      <form onSubmit={submit}>
        <ErrorNotice error={create.error} title="Could not create the project" />
        <Group align="end">
          <TextInput
            label="Project name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <TextInput
            label="Description"
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          <Select label="Source" data={['AZURE_DEVOPS']} value="AZURE_DEVOPS" readOnly />
          <Select label="Target" data={['JIRA_CLOUD']} value="JIRA_CLOUD" readOnly />
          <Button type="submit" loading={create.isPending}>
            Create project
          </Button>
        </Group>
      </form>
    </Card>
  );
}

function DeleteProject({ project, onClose }: { project?: Schemas['ProjectSummary']; onClose(): void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/api/projects/{projectId}', { params: { path: { projectId: id } } })),
    onSuccess: () => {
      onClose();
      void client.invalidateQueries({ queryKey: projectKeys.list() });
    },
  });
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={project !== undefined}
      onClose={onClose}
      title={`Delete ${project?.name ?? ''}?`}
    >
      <Stack>
        <Text>
          The project <strong>{project?.name}</strong> goes, with its stored tracker connections, scans,
          mappings, quote and run history. Work items already created in Jira stay there.
        </Text>
        <ErrorNotice error={remove.error} title="Could not delete the project" />
        <Group justify="end">
          <Button variant="default" onClick={onClose}>
            Keep it
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => project && remove.mutate(project.id)}>
            Delete project
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
