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
import { useSearchParams } from 'wouter';
import { api, type JsonBody, type Schemas, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';
import { projectKeys } from '../projects/api';

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
    onSuccess: () => void client.invalidateQueries({ queryKey: projectKeys.detail(project.id) }),
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

interface Field {
  key: string;
  label: string;
  secret?: boolean;
}

/** One tracker's connection form: what it asks, the test body it sends, and its OAuth sign-in. */
interface TrackerSpec {
  kind: 'source' | 'target';
  type: 'azure_devops' | 'jira';
  title: string;
  fields: Field[];
  oauthLabel: string;
  /** The OAuth start body from the form (what the provider's grant does not tell), or undefined if incomplete. */
  oauthBody(values: Record<string, string>): Record<string, string> | undefined;
}

const TRACKERS: TrackerSpec[] = [
  {
    kind: 'source',
    type: 'azure_devops',
    title: 'Source: Azure DevOps',
    fields: [
      { key: 'organization_url', label: 'Organization URL' },
      { key: 'project', label: 'Project' },
      { key: 'personal_access_token', label: 'Personal access token', secret: true },
    ],
    oauthLabel: 'Connect with Microsoft',
    oauthBody: (v) =>
      v.organization_url && v.project
        ? { organization_url: v.organization_url, project: v.project }
        : undefined,
  },
  {
    kind: 'target',
    type: 'jira',
    title: 'Target: Jira Cloud',
    fields: [
      { key: 'base_url', label: 'Site URL' },
      { key: 'email', label: 'E-mail' },
      { key: 'api_token', label: 'API token', secret: true },
      { key: 'project_key', label: 'Project key' },
    ],
    oauthLabel: 'Connect with Atlassian',
    oauthBody: (v) => (v.project_key ? { project_key: v.project_key } : undefined),
  },
];

function TrackerForm({ project, spec }: { project: Project; spec: TrackerSpec }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const test = useConnectionTest(project);
  const oauth = useOAuth(project, spec.kind);
  const stored = project.connections[spec.kind];
  const oauthBody = spec.oauthBody(values);
  const titleId = `${spec.kind}-title`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    test.mutate({ type: spec.type, projectId: project.id, credentials: values } as JsonBody<
      '/api/connectors/test',
      'post'
    >);
  };
  return (
    <Card withBorder component="section" aria-labelledby={titleId}>
      <Title order={2} size="h4" id={titleId} mb="xs">
        {spec.title}
      </Title>
      <Stored connection={stored} />
      <OAuthReturn kind={spec.kind} />
      <form onSubmit={submit}>
        <Stack mt="sm">
          {spec.fields.map((f) => {
            const Input = f.secret ? PasswordInput : TextInput;
            return (
              <Input
                key={f.key}
                label={f.label}
                required
                value={values[f.key] ?? ''}
                onChange={(e) => {
                  // Read now: React clears currentTarget once the handler returns, before the updater runs.
                  const value = e.currentTarget.value;
                  setValues((v) => ({ ...v, [f.key]: value }));
                }}
              />
            );
          })}
          <Group>
            <Button type="submit" loading={test.isPending}>
              Test and save {spec.kind}
            </Button>
            <Button
              variant="default"
              disabled={!oauthBody}
              loading={oauth.isPending}
              onClick={() => oauthBody && oauth.mutate(oauthBody)}
            >
              {spec.oauthLabel}
            </Button>
            {stored && (
              <Button
                variant="subtle"
                onClick={() => test.mutate({ type: spec.type, projectId: project.id })}
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

/**
 * Back from the provider (`?connection=<kind>&status=error&code&message`, functions/services/tracker-oauth.ts):
 * why the OAuth connection was not made, on the tracker's own card. The message is the API's, shown as text.
 */
function OAuthReturn({ kind }: { kind: 'source' | 'target' }) {
  const [params] = useSearchParams();
  if (params.get('connection') !== kind || params.get('status') !== 'error') return null;
  return (
    <Alert color="red" mt="sm" title="The OAuth connection was not made" role="alert">
      {params.get('message') ?? 'The provider did not grant access'}
    </Alert>
  );
}

export function ConnectSection({ project }: { project: Project }) {
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      {TRACKERS.map((spec) => (
        <TrackerForm key={spec.kind} project={project} spec={spec} />
      ))}
    </SimpleGrid>
  );
}
