/**
 * How the project's runs write into Jira, chosen with what each way keeps and costs said beside it: Jira's REST
 * API (the default) or files for Jira's JSON importer. Owner and admin choose; everyone sees the choice.
 */
import { Alert, Button, Card, Group, NumberInput, Radio, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Schemas, unwrap } from '../../api/client';
import { allowed } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { projectKeys } from './api';

type Project = Schemas['ProjectDetail'];
type Mode = Project['deliveryMode'];

const MODES: { value: Mode; label: string; keeps: string; costs: string }[] = [
  {
    value: 'rest',
    label: "Jira's REST API (default)",
    keeps:
      'Jira records the service account as the author and the migration time as every date; the original authors and dates are kept as text.',
    costs: "Nobody needs to act in Jira; a run goes at the REST phases' pace.",
  },
  {
    value: 'jira-import',
    label: "Jira's JSON importer",
    keeps:
      'The original authors, created and resolved dates, comments and change history are kept as real Jira data.',
    costs:
      "About 1,500 issues an hour per file on Atlassian's side, and a Jira administrator must upload each file (Jira settings > System > External System Import > JSON).",
  },
];

export function DeliverySection({ project }: { project: Project }) {
  const { session } = useAuth();
  const client = useQueryClient();
  const canChoose = allowed('PUT /api/projects/{projectId}/delivery', session?.role);
  const [mode, setMode] = useState<Mode>(project.deliveryMode);
  const [size, setSize] = useState<number | string>(project.importBatchSize);
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/api/projects/{projectId}/delivery', {
          params: { path: { projectId: project.id } },
          body: { deliveryMode: mode, ...(typeof size === 'number' ? { importBatchSize: size } : {}) },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: projectKeys.detail(project.id) }),
  });
  const changed = mode !== project.deliveryMode || size !== project.importBatchSize;
  return (
    <Stack data-testid="delivery" maw={760}>
      <Radio.Group
        value={mode}
        onChange={(v) => setMode(v as Mode)}
        label="How runs write into Jira"
        readOnly={!canChoose}
      >
        <Stack mt="xs">
          {MODES.map((m) => (
            <Card key={m.value} withBorder>
              <Radio value={m.value} label={m.label} disabled={!canChoose} />
              <Text size="sm" mt="xs">
                {m.keeps}
              </Text>
              <Text size="sm" c="dimmed">
                {m.costs}
              </Text>
            </Card>
          ))}
        </Stack>
      </Radio.Group>
      {mode === 'jira-import' && (
        <>
          <NumberInput
            label="Issues per import file"
            description="1 to 1,500: Atlassian recommends at most 1,500 per file. A smaller first file makes a quick trial."
            min={1}
            max={1500}
            allowDecimal={false}
            value={size}
            onChange={setSize}
            disabled={!canChoose}
            w={260}
          />
          <Alert color="yellow" title="Each file waits for a Jira administrator">
            A run builds the files, then pauses before each batch until a Jira administrator imports its file
            (Jira settings &gt; System &gt; External System Import &gt; JSON) and resumes the run.
          </Alert>
        </>
      )}
      <ErrorNotice error={save.error} title="Could not save the delivery" />
      {canChoose ? (
        <Group>
          <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!changed}>
            Save delivery
          </Button>
        </Group>
      ) : (
        <Text size="sm">Only an owner or admin can change how runs write into Jira.</Text>
      )}
    </Stack>
  );
}
