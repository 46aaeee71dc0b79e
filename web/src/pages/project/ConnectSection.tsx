/**
 * Connect the source (Azure DevOps) and the target (Jira): a pasted token, tested by the API (a refusal shows
 * the connection test's exact message), or OAuth (the browser goes to the provider and comes back here).
 */
import {
  Alert,
  Button,
  Card,
  Group,
  PasswordInput,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type JsonBody, type Schemas, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';

type Project = Schemas['ProjectDetail'];
type TestResult = Schemas['ConnectionTestResult'];

function Stored({ connection }: { connection: Schemas['ConnectionView'] | null }) {
  if (!connection) return <Text size="sm">Not connected yet.</Text>;
  return (
    <Text size="sm" c={connection.ok ? 'green.9' : 'red.9'}>
      {connection.ok ? 'Connected' : 'Not working'} ({connection.method}): {connection.message}
      {connection.reconnectRequired ? ' Reconnect required.' : ''}
    </Text>
  );
}

function Result({ result }: { result?: TestResult }) {
  if (!result) return null;
  return (
    <Alert
      color={result.success ? 'green' : 'red'}
      title={result.success ? 'Connection works' : 'Connection test failed'}
      role="status"
      data-testid="connection-result"
    >
      {result.message}
    </Alert>
  );
}

function useConnectionTest(project: Project) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: JsonBody<'/api/connectors/test', 'post'>) =>
      unwrap(await api.POST('/api/connectors/test', { body })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['project', project.id] }),
  });
}

function useOAuth(project: Project, kind: 'source' | 'target') {
  return useMutation({
    mutationFn: async (body: Record<string, string>) =>
      unwrap(
        await api.POST('/api/projects/{projectId}/connections/{kind}/oauth', {
          params: { path: { projectId: project.id, kind } },
          body: { ...body, returnTo: `/projects/${project.id}?tab=connect` } as never,
        }),
      ),
    onSuccess: (answer) => location.assign(answer.authorizationUrl),
  });
}

function SourceForm({ project }: { project: Project }) {
  const [org, setOrg] = useState('');
  const [name, setName] = useState('');
  const [pat, setPat] = useState('');
  const test = useConnectionTest(project);
  const oauth = useOAuth(project, 'source');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    test.mutate({
      type: 'azure_devops',
      projectId: project.id,
      credentials: { organization_url: org, project: name, personal_access_token: pat },
    });
  };
  return (
    <Card withBorder component="section" aria-labelledby="source-title">
      <Title order={2} size="h4" id="source-title" mb="xs">
        Source: Azure DevOps
      </Title>
      <Stored connection={project.connections.source} />
      <form onSubmit={submit}>
        <Stack mt="sm">
          <TextInput
            label="Organization URL"
            required
            value={org}
            onChange={(e) => setOrg(e.currentTarget.value)}
          />
          <TextInput label="Project" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <PasswordInput
            label="Personal access token"
            required
            value={pat}
            onChange={(e) => setPat(e.currentTarget.value)}
          />
          <Group>
            <Button type="submit" loading={test.isPending}>
              Test and save source
            </Button>
            <Button
              variant="default"
              disabled={!org || !name}
              loading={oauth.isPending}
              onClick={() => oauth.mutate({ organization_url: org, project: name })}
            >
              Connect with Microsoft
            </Button>
            {project.connections.source && (
              <Button
                variant="subtle"
                onClick={() => test.mutate({ type: 'azure_devops', projectId: project.id })}
                loading={test.isPending}
              >
                Test stored connection
              </Button>
            )}
          </Group>
        </Stack>
      </form>
      <ErrorNotice error={test.error ?? oauth.error} />
      <Result result={test.data} />
    </Card>
  );
}

function TargetForm({ project }: { project: Project }) {
  const [baseUrl, setBaseUrl] = useState('');
  const [email, setEmail] = useState('');
  const [token, setToken] = useState('');
  const [key, setKey] = useState('');
  const test = useConnectionTest(project);
  const oauth = useOAuth(project, 'target');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    test.mutate({
      type: 'jira',
      projectId: project.id,
      credentials: { base_url: baseUrl, email, api_token: token, project_key: key },
    });
  };
  return (
    <Card withBorder component="section" aria-labelledby="target-title">
      <Title order={2} size="h4" id="target-title" mb="xs">
        Target: Jira Cloud
      </Title>
      <Stored connection={project.connections.target} />
      <form onSubmit={submit}>
        <Stack mt="sm">
          <TextInput
            label="Site URL"
            required
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.currentTarget.value)}
          />
          <TextInput
            label="E-mail"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <PasswordInput
            label="API token"
            required
            value={token}
            onChange={(e) => setToken(e.currentTarget.value)}
          />
          <TextInput
            label="Project key"
            required
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
          />
          <Group>
            <Button type="submit" loading={test.isPending}>
              Test and save target
            </Button>
            <Button
              variant="default"
              disabled={!key}
              loading={oauth.isPending}
              onClick={() => oauth.mutate({ project_key: key })}
            >
              Connect with Atlassian
            </Button>
            {project.connections.target && (
              <Button
                variant="subtle"
                onClick={() => test.mutate({ type: 'jira', projectId: project.id })}
                loading={test.isPending}
              >
                Test stored connection
              </Button>
            )}
          </Group>
        </Stack>
      </form>
      <ErrorNotice error={test.error ?? oauth.error} />
      <Result result={test.data} />
    </Card>
  );
}

export function ConnectSection({ project }: { project: Project }) {
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <SourceForm project={project} />
      <TargetForm project={project} />
    </SimpleGrid>
  );
}
