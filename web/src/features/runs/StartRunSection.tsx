/**
 * Start a run: type, dry run, filters, options, overrides and the trackers' details (secrets only for a tracker
 * not connected by OAuth). What the project's status allows is said in place; the API's refusal is shown as is.
 */
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Group,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useLocation } from 'wouter';
import { api, type JsonBody, type Schemas, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';

type Project = Schemas['ProjectDetail'];
type StartBody = JsonBody<'/api/migrations/project/{projectId}/start', 'post'>;

const STATUS_HELP: Record<string, string> = {
  DRAFT:
    'Connect both trackers, scan, confirm the mappings and pay the quote first. A SAMPLE dry run needs a scan only.',
  CONNECTED: 'Scan the source next; after the mappings and payment a FULL run can start.',
  SCANNED: 'Confirm the mappings and pay the quote before a FULL run.',
  MAPPED: 'Pay the quote before a FULL run.',
  READY: 'Paid: a FULL run can start.',
  MIGRATING: 'A run is active: starting the same run again answers it; anything else waits until it ends.',
  COMPLETED: 'Migrated. An INCREMENTAL run brings over what changed since.',
  FAILED: 'The last run failed: start it again (no new payment needed).',
  CANCELLED: 'The last run was cancelled: start again when ready.',
};

/** `Bug=Defect, Task=Sub-task` -> { Bug: 'Defect', Task: 'Sub-task' } */
function parseOverrides(text: string): Record<string, string> | undefined {
  const pairs = text
    .split(/[,\n]/)
    .map((p) => p.split('=').map((s) => s.trim()))
    .filter((p): p is [string, string] => p.length === 2 && Boolean(p[0]) && Boolean(p[1]));
  return pairs.length ? Object.fromEntries(pairs) : undefined;
}

export function StartRunSection({ project }: { project: Project }) {
  const [, navigate] = useLocation();
  const source = project.connections.source;
  const target = project.connections.target;
  const [type, setType] = useState<'FULL' | 'SAMPLE' | 'INCREMENTAL'>('FULL');
  const [dryRun, setDryRun] = useState(false);
  const [attachments, setAttachments] = useState(true);
  const [comments, setComments] = useState(true);
  const [links, setLinks] = useState(true);
  const [verify, setVerify] = useState(true);
  const [org, setOrg] = useState(String(source?.organizationUrl ?? ''));
  const [adoProject, setAdoProject] = useState(String(source?.projectName ?? ''));
  const [pat, setPat] = useState('');
  const [areaFilter, setAreaFilter] = useState('');
  const [typeFilter, setTypeFilter] = useState('');
  const [baseUrl, setBaseUrl] = useState(String(target?.baseUrl ?? ''));
  const [email, setEmail] = useState(String(target?.email ?? ''));
  const [token, setToken] = useState('');
  const [key, setKey] = useState(String(target?.projectKey ?? ''));
  const [typeOverrides, setTypeOverrides] = useState('');
  const [stateOverrides, setStateOverrides] = useState('');
  const sourceOAuth = source?.method === 'oauth';
  const targetOAuth = target?.method === 'oauth';

  const start = useMutation({
    mutationFn: async (body: StartBody) =>
      unwrap(
        await api.POST('/api/migrations/project/{projectId}/start', {
          params: { path: { projectId: project.id } },
          body,
        }),
      ),
    onSuccess: (run) => navigate(`/runs/${run.id}`),
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate({
      type,
      enginePayload: {
        source: {
          org,
          project: adoProject,
          ...(pat || !sourceOAuth ? { pat } : {}),
          ...(areaFilter ? { area_filter: areaFilter } : {}),
          ...(typeFilter ? { type_filter: typeFilter } : {}),
        },
        target: {
          base_url: baseUrl,
          project_key: key,
          ...(email || !targetOAuth ? { email } : {}),
          ...(token || !targetOAuth ? { api_token: token } : {}),
        },
        options: {
          dry_run: dryRun,
          migrate_attachments: attachments,
          migrate_comments: comments,
          migrate_links: links,
          ...(dryRun ? {} : { verify }),
          ...(parseOverrides(typeOverrides) ? { type_overrides: parseOverrides(typeOverrides) } : {}),
          ...(parseOverrides(stateOverrides) ? { state_overrides: parseOverrides(stateOverrides) } : {}),
        },
      },
    } as StartBody);
  };

  return (
    <form onSubmit={submit}>
      <Stack>
        <Alert color="indigo" title={`Project status: ${project.status}`}>
          {STATUS_HELP[project.status] ?? ''}
        </Alert>
        <ErrorNotice error={start.error} title="The run did not start" />
        <Group align="end">
          <Select
            label="Run type"
            data={['FULL', 'SAMPLE', 'INCREMENTAL']}
            value={type}
            allowDeselect={false}
            onChange={(v) => setType((v as typeof type) ?? 'FULL')}
          />
          <Checkbox
            label="Dry run (writes nothing to Jira)"
            checked={dryRun}
            onChange={(e) => setDryRun(e.currentTarget.checked)}
          />
          <Checkbox
            label="Attachments"
            checked={attachments}
            onChange={(e) => setAttachments(e.currentTarget.checked)}
          />
          <Checkbox
            label="Comments"
            checked={comments}
            onChange={(e) => setComments(e.currentTarget.checked)}
          />
          <Checkbox label="Links" checked={links} onChange={(e) => setLinks(e.currentTarget.checked)} />
          <Checkbox
            label="Verify every item at the end"
            description="Reads each issue back from Jira and compares it with its source: about one more read per item"
            checked={verify && !dryRun}
            disabled={dryRun}
            onChange={(e) => setVerify(e.currentTarget.checked)}
          />
        </Group>
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Card withBorder component="fieldset">
            <Title order={2} size="h4" component="legend">
              Azure DevOps
            </Title>
            <Stack>
              <TextInput
                label="Organization"
                required
                value={org}
                onChange={(e) => setOrg(e.currentTarget.value)}
              />
              <TextInput
                label="Project"
                required
                value={adoProject}
                onChange={(e) => setAdoProject(e.currentTarget.value)}
              />
              <PasswordInput
                label={
                  sourceOAuth
                    ? 'Personal access token (optional: connected by OAuth)'
                    : 'Personal access token'
                }
                required={!sourceOAuth}
                value={pat}
                onChange={(e) => setPat(e.currentTarget.value)}
              />
              <TextInput
                label="Area filter"
                value={areaFilter}
                onChange={(e) => setAreaFilter(e.currentTarget.value)}
              />
              <TextInput
                label="Type filter (comma separated)"
                value={typeFilter}
                onChange={(e) => setTypeFilter(e.currentTarget.value)}
              />
            </Stack>
          </Card>
          <Card withBorder component="fieldset">
            <Title order={2} size="h4" component="legend">
              Jira
            </Title>
            <Stack>
              <TextInput
                label="Site URL"
                required
                value={baseUrl}
                onChange={(e) => setBaseUrl(e.currentTarget.value)}
              />
              <TextInput
                label="Project key"
                required
                value={key}
                onChange={(e) => setKey(e.currentTarget.value)}
              />
              <TextInput
                label={targetOAuth ? 'E-mail (optional: connected by OAuth)' : 'E-mail'}
                required={!targetOAuth}
                value={email}
                onChange={(e) => setEmail(e.currentTarget.value)}
              />
              <PasswordInput
                label={targetOAuth ? 'API token (optional: connected by OAuth)' : 'API token'}
                required={!targetOAuth}
                value={token}
                onChange={(e) => setToken(e.currentTarget.value)}
              />
            </Stack>
          </Card>
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Textarea
            label="Type overrides (Bug=Defect, one per line)"
            value={typeOverrides}
            onChange={(e) => setTypeOverrides(e.currentTarget.value)}
          />
          <Textarea
            label="State overrides (Resolved=Done, one per line)"
            value={stateOverrides}
            onChange={(e) => setStateOverrides(e.currentTarget.value)}
          />
        </SimpleGrid>
        <Button type="submit" loading={start.isPending} w="fit-content">
          Start the run
        </Button>
      </Stack>
    </form>
  );
}
