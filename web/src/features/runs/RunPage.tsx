/**
 * The live run: phase stepper, progress with speed and ETA, counters, the log tail, pause / resume / cancel,
 * fed by the run's event stream; when it ends, the failure report, the id map, a dry run's preview and, for
 * owners and admins, the rollback (its preview, its confirmation, and its own pause / resume / cancel).
 */
import {
  Badge,
  Button,
  Card,
  Code,
  Group,
  Modal,
  Progress,
  SimpleGrid,
  Stack,
  Stepper,
  Text,
  Title,
} from '@mantine/core';
import { useReducedMotion } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useParams } from 'wouter';
import { ApiError, currentToken } from '../../api/client';
import { allowed } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { StatusBadge } from '../../components/StatusBadge';
import { projectQuery } from '../projects/api';
import { RollbackSection } from '../rollback/RollbackSection';
import { controlRun, type RunAction, runKeys, runStatusQuery } from './api';
import { etaText, isRollingBack, isWorking, RUN_PHASES, speedText } from './figures';
import { ImportFilesSection } from './ImportFilesSection';
import { useRunStream } from './useRunStream';
import { VerificationSection, verifiable } from './VerificationSection';

function Counter({ label, value }: { label: string; value: number | string }) {
  return (
    <Card withBorder>
      <Text size="sm">{label}</Text>
      <Text fw={700} size="xl" data-testid={`counter-${label.toLowerCase()}`}>
        {value}
      </Text>
    </Card>
  );
}

/** Fetches a report with the session's token and hands it to the browser as a file. */
async function download(path: string, filename: string): Promise<void> {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${currentToken() ?? ''}` } });
  if (!res.ok) {
    // The API's error body, shown as every other error is (its message and code), not as raw JSON.
    const body = await res.json().catch(() => undefined);
    throw new ApiError(
      body && typeof body === 'object' && 'code' in body && 'message' in body
        ? body
        : {
            statusCode: res.status,
            message: res.statusText || 'Download failed',
            error: res.statusText,
            code: 'INTERNAL_ERROR',
          },
    );
  }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The statuses of a run the rollback section is shown for: ended, or being (or rolled) back. */
const ROLLBACK_STATUSES: ReadonlySet<string> = new Set([
  'COMPLETED',
  'PARTIAL',
  'FAILED',
  'CANCELLED',
  'ROLLING_BACK',
  'ROLLBACK_PAUSED',
  'ROLLED_BACK',
]);

export function RunPage() {
  const reduceMotion = useReducedMotion();
  const { runId = '' } = useParams<{ runId: string }>();
  const { session } = useAuth();
  const client = useQueryClient();
  const [confirmCancel, setConfirmCancel] = useState(false);
  const status = useQuery(runStatusQuery(runId));
  // Followed while the state machine works on the run, again when a verification or a rollback starts after its
  // end: the Log card then shows the pass's lines as they come.
  const stream = useRunStream(runId, status.data ? isWorking(status.data.status) : true);
  const control = useMutation({
    mutationFn: (action: RunAction) => controlRun(runId, action),
    onSuccess: () => {
      setConfirmCancel(false);
      void client.invalidateQueries({ queryKey: runKeys.detail(runId) });
    },
  });
  const [downloadError, setDownloadError] = useState<unknown>();
  const run = status.data;
  // How the run delivers is the project's: a Jira-import run shows its files and the admin's steps.
  const project = useQuery({ ...projectQuery(run?.projectId ?? ''), enabled: run !== undefined });
  const importDelivery =
    project.data?.deliveryMode === 'jira-import' &&
    allowed('GET /api/migrations/{runId}/import-files', session?.role);
  const runStatus =
    stream.status && run && isWorking(run.status) ? stream.status : (run?.status ?? stream.status);
  const phase = Math.min(run?.currentPhase ?? 1, RUN_PHASES.length);
  // A rollback is steered from its own section (pause, resume, cancel); the run itself had ended: its reports,
  // no cancel of the run here.
  const ended = runStatus !== undefined && (!isWorking(runStatus) || isRollingBack(runStatus));
  const verifying = runStatus === 'VERIFYING';
  // The stream's last progress event is a phase's; once the run ended, the run's own figure is the truth.
  const progress = ended ? undefined : stream.progress;
  const percent = ended
    ? (run?.progressPercent ?? stream.progress?.percent ?? 0)
    : (progress?.percent ?? run?.progressPercent ?? 0);
  // A dry run writes its preview as it finishes (COMPLETED or PARTIAL); a cancelled or failed one has none.
  const hasPreview = run?.dryRun === true && (run.status === 'COMPLETED' || run.status === 'PARTIAL');
  // A run that wrote to Jira and ended (or is being rolled back) can be taken back, by an owner or admin.
  const canRollBack =
    run?.dryRun === false &&
    ROLLBACK_STATUSES.has(run.status) &&
    allowed('POST /api/migrations/{runId}/rollback', session?.role);
  // The stream said the run ended: read its final figures now rather than at the next poll.
  useEffect(() => {
    if (ended) void client.invalidateQueries({ queryKey: runKeys.detail(runId) });
  }, [ended, client, runId]);
  const eta = progress && !verifying ? etaText(progress) : undefined;
  const role = session?.role;

  const save = (path: string, filename: string) => {
    setDownloadError(undefined);
    download(path, filename).catch(setDownloadError);
  };

  return (
    <Stack>
      <Group justify="space-between" align="baseline">
        <PageTitle>Run {runId.slice(0, 8)}</PageTitle>
        <Group>
          {run?.dryRun && (
            <Badge variant="light" color="gray" data-testid="run-dry-run">
              dry run
            </Badge>
          )}
          {runStatus && <StatusBadge status={runStatus} />}
          <Badge
            variant="outline"
            color={stream.connection === 'open' ? 'teal' : 'dark'}
            data-testid="stream-state"
          >
            stream {stream.connection}
          </Badge>
        </Group>
      </Group>
      <ErrorNotice error={status.error ?? control.error} />
      {run?.pauseReason && <ErrorNotice error={new Error(run.pauseReason)} title="Paused by the service" />}
      <Stepper
        active={ended && runStatus === 'COMPLETED' ? RUN_PHASES.length : phase - 1}
        size="sm"
        aria-label="Phases"
      >
        {RUN_PHASES.map((p, i) => (
          <Stepper.Step key={p} label={`${i + 1}. ${p}`} />
        ))}
      </Stepper>
      <Progress
        value={percent}
        size="xl"
        aria-label={`Progress ${percent}%`}
        // Stripes that move for as long as a run lasts: not for a reader who asked their system for less motion.
        animated={runStatus === 'RUNNING' && !reduceMotion}
        data-testid="run-progress"
      />
      <Text size="sm">
        {percent}% {progress ? `(${progress.current} of ${progress.total} in this phase)` : ''}
        {progress ? `, ${speedText(progress)}` : ''}
        {eta ? `, ${eta}` : ''}
      </Text>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Counter label="Items" value={run?.totalItems ?? 0} />
        <Counter label="Created" value={stream.done?.created ?? run?.successCount ?? 0} />
        <Counter label="Skipped" value={stream.done?.skipped ?? run?.skippedCount ?? 0} />
        <Counter label="Failed" value={stream.done?.failed ?? run?.failureCount ?? 0} />
      </SimpleGrid>
      <Group>
        {runStatus === 'RUNNING' && allowed('POST /api/migrations/{runId}/pause', role) && (
          <Button onClick={() => control.mutate('pause')} loading={control.isPending}>
            Pause
          </Button>
        )}
        {runStatus === 'PAUSED' && allowed('POST /api/migrations/{runId}/resume', role) && (
          <Button onClick={() => control.mutate('resume')} loading={control.isPending}>
            Resume
          </Button>
        )}
        {!ended && allowed('POST /api/migrations/{runId}/cancel', role) && (
          <Button color="red" variant="light" onClick={() => setConfirmCancel(true)}>
            {verifying ? 'Cancel verification' : 'Cancel run'}
          </Button>
        )}
        {ended && (
          <>
            <Button
              variant="default"
              onClick={() => save(`/api/migrations/${runId}/failures`, `failures-${runId}.json`)}
            >
              Download failure report
            </Button>
            <Button
              variant="default"
              onClick={() => save(`/api/migrations/${runId}/id-map?format=csv`, `id-map-${runId}.csv`)}
            >
              Download id map (CSV)
            </Button>
            {hasPreview && (
              <Button
                variant="default"
                onClick={() => save(`/api/migrations/${runId}/preview`, `preview-${runId}.json`)}
              >
                Download dry-run preview
              </Button>
            )}
          </>
        )}
      </Group>
      <ErrorNotice error={downloadError} title="Download failed" />
      {run && runStatus && verifiable(runStatus, run.dryRun) && (
        <VerificationSection
          runId={runId}
          status={runStatus}
          summary={run.verification}
          role={role}
          save={save}
        />
      )}
      {run && importDelivery && (
        <ImportFilesSection
          runId={runId}
          siteUrl={
            typeof project.data?.connections.target?.baseUrl === 'string'
              ? project.data.connections.target.baseUrl
              : undefined
          }
          working={isWorking(run.status) && !isRollingBack(run.status)}
          save={save}
        />
      )}
      {canRollBack && <RollbackSection runId={runId} onDownload={save} />}
      <Card withBorder component="section" aria-labelledby="log-title">
        <Title order={2} size="h4" id="log-title" mb="xs">
          Log
        </Title>
        {/* A log region people can focus and scroll with the keyboard; screen readers hear new lines. */}
        <Code
          block
          tabIndex={0}
          role="log"
          aria-label="Run log"
          data-testid="run-log"
          style={{ maxHeight: 240, overflow: 'auto' }}
        >
          {stream.logs.length ? stream.logs.map((l) => l.message).join('\n') : 'Waiting for events…'}
        </Code>
      </Card>
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={confirmCancel}
        onClose={() => setConfirmCancel(false)}
        title={verifying ? 'Cancel this verification?' : 'Cancel this run?'}
      >
        <Stack>
          <Text>
            {verifying
              ? 'The verification stops; the run stays as it ended, with the audit of its last finished verification.'
              : 'A cancelled run cannot be resumed. Work items already created in Jira stay there.'}
          </Text>
          <Group justify="end">
            <Button variant="default" onClick={() => setConfirmCancel(false)}>
              Keep running
            </Button>
            <Button color="red" onClick={() => control.mutate('cancel')} loading={control.isPending}>
              {verifying ? 'Cancel verification' : 'Cancel run'}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
