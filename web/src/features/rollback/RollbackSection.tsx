/**
 * A finished run's rollback, for owners and admins: a preview first (it reads Jira and writes nothing), its counts
 * per action, what a rollback does not undo and the list to download; only then the confirmation that carries the
 * preview out, with the choice on issues edited after the run (a different choice is previewed again first).
 * While a pass works or is paused: its status, why the service paused it, and Pause / Resume / Cancel (the run's
 * control routes, which steer a rollback for owners and admins only, as this section is shown).
 */
import { Button, Card, Checkbox, Group, List, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ErrorNotice } from '../../components/ErrorNotice';
import { StatusBadge } from '../../components/StatusBadge';
import { controlRun, type RunAction, runKeys, runStatusQuery } from '../runs/api';
import { type RollbackCounts, rollbackKeys, rollbackQuery, startRollback } from './api';

const ROWS: [keyof RollbackCounts, string][] = [
  ['deleted', 'Deleted from Jira'],
  ['keptEdited', 'Kept: edited after the run, or with a sub-task that stays'],
  ['keptLaterRun', 'Kept: changed after the run while a later run of the project was at work'],
  ['keptFound', 'Kept: found by the run, not created'],
  ['keptOtherRun', "Kept: another run's"],
  ['gone', 'Gone from Jira already'],
  ['removedComments', 'Issues the run did not create: comments it added, removed'],
  ['removedIssueLinks', 'Issues the run did not create: issue links it added, removed'],
  ['removedRemoteLinks', 'Issues the run did not create: remote links it added, removed'],
  ['removedAttachments', 'Issues the run did not create: files it added, removed'],
  ['removedWorklogs', 'Issues the run did not create: worklogs it added, removed'],
  ['removedTestSteps', 'Issues the run did not create: test steps it added in the add-on, removed'],
  ['restoredFields', 'Issues the run did not create: fields it changed, restored'],
  [
    'keptChanges',
    'Issues the run did not create: kept (changed after the run, by a person or a later run, or refused by Jira)',
  ],
  ['changesGone', 'Issues the run did not create: gone already'],
  ['statusesNotUndone', 'Issues the run did not create: status moves, not moved back'],
  ['removedSprints', 'Sprints the run made, removed (empty)'],
  ['removedComponents', 'Components the run made, removed (empty)'],
  ['keptMade', 'Kept: made by the run, an issue still in it (or its delete refused)'],
];

function CountsTable({ counts, label }: { counts: RollbackCounts; label: string }) {
  return (
    <Table aria-label={label} data-testid="rollback-counts" withTableBorder>
      <Table.Tbody>
        {ROWS.map(([key, text]) => (
          <Table.Tr key={key}>
            <Table.Td>{text}</Table.Td>
            <Table.Td ta="right" data-testid={`rollback-${key}`}>
              {counts[key]}
            </Table.Td>
          </Table.Tr>
        ))}
        <Table.Tr>
          <Table.Td fw={700}>Items of the run</Table.Td>
          <Table.Td ta="right" fw={700} data-testid="rollback-items">
            {counts.items}
          </Table.Td>
        </Table.Tr>
      </Table.Tbody>
    </Table>
  );
}

export function RollbackSection({
  runId,
  onDownload,
}: {
  runId: string;
  /** Saves a file the API answers (the page's download, with the session's token). */
  onDownload: (path: string, filename: string) => void;
}) {
  const client = useQueryClient();
  const view = useQuery(rollbackQuery(runId));
  // The run's status view (the page's query): why the service paused the pass, if it did.
  const run = useQuery(runStatusQuery(runId));
  const [includeEdited, setIncludeEdited] = useState<boolean>();
  const [confirming, setConfirming] = useState(false);
  const [confirmCancel, setConfirmCancel] = useState(false);
  // A pause is answered at once; the engine stops at its next checkpoint, and the status says so only then.
  const [pauseAsked, setPauseAsked] = useState(false);
  const start = useMutation({
    mutationFn: (body: Parameters<typeof startRollback>[1]) => startRollback(runId, body),
    onSuccess: () => {
      setConfirming(false);
      void client.invalidateQueries({ queryKey: rollbackKeys.detail(runId) });
    },
  });
  const control = useMutation({
    mutationFn: (action: RunAction) => controlRun(runId, action),
    onSuccess: (_answer, action) => {
      setConfirmCancel(false);
      setPauseAsked(action === 'pause');
      void client.invalidateQueries({ queryKey: rollbackKeys.detail(runId) });
      void client.invalidateQueries({ queryKey: runKeys.detail(runId) });
    },
  });
  const v = view.data;
  const status = v?.status;
  // The run's own status moves with each pass (back as it ended, or ROLLED_BACK): the page reads it again.
  useEffect(() => {
    if (status) void client.invalidateQueries({ queryKey: runKeys.detail(runId) });
  }, [status, client, runId]);
  if (!v) return <ErrorNotice error={view.error} />;

  const preview = v.preview;
  const chosen = includeEdited ?? preview?.includeEdited ?? false;
  const rolling = v.status === 'ROLLING_BACK' || v.status === 'ROLLBACK_PAUSED';
  const paused = v.status === 'ROLLBACK_PAUSED';
  const pausing = pauseAsked && v.status === 'ROLLING_BACK';
  const pass = v.underWay?.preview ? 'Previewing the rollback' : 'Rolling back';
  const pauseReason = paused ? run.data?.pauseReason : undefined;
  return (
    <Card withBorder component="section" aria-labelledby="rollback-title">
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4" id="rollback-title">
          Rollback
        </Title>
        {rolling && <StatusBadge status={v.status} />}
      </Group>
      <ErrorNotice error={start.error ?? control.error ?? view.error} />
      {v.status === 'ROLLED_BACK' && v.rollback ? (
        <Stack>
          <Text data-testid="rollback-state">
            Rolled back: {v.rollback.deleted} of {v.rollback.items} issues deleted from Jira.
          </Text>
          <CountsTable counts={v.rollback} label="What the rollback did" />
          <Group>
            <Button
              variant="default"
              onClick={() =>
                onDownload(`/api/migrations/${runId}/rollback/list?of=rollback`, `rollback-${runId}.csv`)
              }
            >
              Download what it did (CSV)
            </Button>
          </Group>
        </Stack>
      ) : rolling ? (
        <Stack>
          <Text data-testid="rollback-state">
            {pass}
            {paused ? ': paused' : pausing ? ': pausing at its next checkpoint…' : '…'}
          </Text>
          {pauseReason && (
            <Text size="sm" data-testid="rollback-pause-reason">
              Paused by the service: {pauseReason}
            </Text>
          )}
          <Group>
            {v.status === 'ROLLING_BACK' && (
              <Button
                variant="default"
                onClick={() => control.mutate('pause')}
                loading={control.isPending && control.variables === 'pause'}
                disabled={pausing}
              >
                Pause rollback
              </Button>
            )}
            {paused && (
              <Button
                onClick={() => control.mutate('resume')}
                loading={control.isPending && control.variables === 'resume'}
              >
                Resume rollback
              </Button>
            )}
            <Button color="red" variant="light" onClick={() => setConfirmCancel(true)}>
              Cancel rollback…
            </Button>
          </Group>
        </Stack>
      ) : preview ? (
        <Stack>
          <Text data-testid="rollback-state">
            Preview of {new Date(preview.at).toLocaleString()}: {preview.summary.deleted} of{' '}
            {preview.summary.items} issues would be deleted; nothing is deleted yet.
          </Text>
          <CountsTable counts={preview.summary} label="What the rollback would do" />
          <Text size="sm" fw={600}>
            A rollback does not undo:
          </Text>
          <List size="sm" data-testid="rollback-not-undone">
            {v.notUndone.map((line) => (
              <List.Item key={line}>{line}</List.Item>
            ))}
          </List>
          <Checkbox
            label="Also delete issues edited in Jira after the run"
            checked={chosen}
            onChange={(e) => setIncludeEdited(e.currentTarget.checked)}
          />
          <Group>
            <Button
              variant="default"
              onClick={() =>
                onDownload(`/api/migrations/${runId}/rollback/list`, `rollback-preview-${runId}.csv`)
              }
            >
              Download the list (CSV)
            </Button>
            {chosen === preview.includeEdited ? (
              <Button color="red" onClick={() => setConfirming(true)}>
                Roll back for real…
              </Button>
            ) : (
              <Button
                onClick={() => start.mutate({ preview: true, includeEdited: chosen })}
                loading={start.isPending}
              >
                Preview again with this choice
              </Button>
            )}
          </Group>
        </Stack>
      ) : (
        <Stack>
          <Text size="sm">
            A rollback deletes from Jira the issues this run created that nobody changed since. It starts with
            a preview, which writes nothing.
          </Text>
          <Group>
            <Button
              variant="light"
              color="red"
              onClick={() => start.mutate({ preview: true, includeEdited: false })}
              loading={start.isPending}
            >
              Roll back…
            </Button>
          </Group>
        </Stack>
      )}
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={confirmCancel}
        onClose={() => setConfirmCancel(false)}
        title={v.underWay?.preview ? 'Cancel this rollback preview?' : 'Cancel this rollback?'}
      >
        <Stack>
          <Text>
            {v.underWay?.preview
              ? 'The preview stops: it has deleted nothing. The run goes back to how it ended.'
              : 'The rollback stops: what it has deleted stays deleted, the rest stays in Jira. The run goes back to how it ended, and a new preview lists what is left.'}
          </Text>
          <Group justify="end">
            <Button variant="default" onClick={() => setConfirmCancel(false)}>
              Keep going
            </Button>
            <Button
              color="red"
              onClick={() => control.mutate('cancel')}
              loading={control.isPending && control.variables === 'cancel'}
            >
              Cancel rollback
            </Button>
          </Group>
        </Stack>
      </Modal>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={confirming}
        onClose={() => setConfirming(false)}
        title="Delete these issues from Jira?"
      >
        <Stack>
          <Text>
            The rollback deletes the {preview?.summary.deleted ?? 0} issues its preview lists
            {chosen ? ', edited ones included' : ''}. Deleted issues cannot be brought back.
          </Text>
          <Group justify="end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Keep them
            </Button>
            <Button
              color="red"
              onClick={() => start.mutate({ preview: false, confirm: true, includeEdited: chosen })}
              loading={start.isPending}
            >
              Delete {preview?.summary.deleted ?? 0} issues
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Card>
  );
}
