/**
 * The tenant dashboard: every active or recent run of every project on one screen, newest first, moving live
 * with the tenant's WebSocket events; while the socket is down, the runs lists are polled instead.
 */
import { Alert, Badge, Card, Group, Progress, Stack, Text, Title } from '@mantine/core';
import { useReducedMotion } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { StatusBadge } from '../../components/StatusBadge';
import { projectsQuery } from '../projects/api';
import { isActive, RUN_PHASES, speedText } from '../runs/figures';
import { dashboardRunsQuery, loadRuns } from './api';
import {
  applyEvents,
  type Board,
  type BoardRun,
  busyProjects,
  emptyBoard,
  mergeList,
  pausedText,
  phaseLabel,
  type TenantEvent,
  visibleRuns,
  waitingText,
} from './board';
import { useTenantEvents } from './useTenantEvents';

/** How often the runs lists are read while the socket is down. */
const POLL_MS = 3_000;

export function DashboardPage() {
  const boardRef = useRef<Board>(emptyBoard);
  const [board, setBoard] = useState<Board>(emptyBoard);
  const update = useCallback((change: (b: Board) => Board) => {
    boardRef.current = change(boardRef.current);
    setBoard(boardRef.current);
  }, []);

  const [unknownSeen, setUnknownSeen] = useState(0);
  const onEvents = useCallback(
    (events: TenantEvent[]) => {
      let unknown = false;
      update((b) => {
        const applied = applyEvents(b, events);
        unknown = applied.unknownProjects.size > 0;
        return applied.board;
      });
      // A run started elsewhere: read the lists again for its details (and a new project's name).
      if (unknown) setUnknownSeen((n) => n + 1);
    },
    [update],
  );
  const connection = useTenantEvents(onEvents);
  const live = connection === 'live';

  const projects = useQuery({ ...projectsQuery(), refetchInterval: live ? false : POLL_MS });
  const projectIds = (projects.data ?? []).map((p) => p.id).sort();
  // The runs list is per project, and a tenant may have many: a poll reads only the busy projects' (the
  // projects list, polled too, tells of a new run by its last run); the first read and a catch-up read all.
  const fullReadNext = useRef(true);
  const reasonsRead = useRef(new Set<string>());
  const runs = useQuery({
    ...dashboardRunsQuery(projectIds, () => {
      const full = fullReadNext.current;
      fullReadNext.current = false;
      const ids = full ? projectIds : busyProjects(boardRef.current, projects.data ?? []);
      return loadRuns(ids, reasonsRead.current);
    }),
    enabled: projects.data !== undefined,
    refetchInterval: live ? false : POLL_MS,
  });
  const { refetch: refetchRuns } = runs;
  const { refetch: refetchProjects } = projects;
  useEffect(() => {
    if (runs.data) update((b) => mergeList(b, runs.data));
  }, [runs.data, update]);
  // Back to live (or a run nobody told us about): catch up on what happened meanwhile.
  useEffect(() => {
    if (live || unknownSeen > 0) {
      fullReadNext.current = true;
      void refetchProjects();
      void refetchRuns();
    }
  }, [live, unknownSeen, refetchProjects, refetchRuns]);

  const names = new Map((projects.data ?? []).map((p) => [p.id, p.name]));
  const rows = visibleRuns(board);
  const loading =
    projects.isPending || (projects.data !== undefined && projects.data.length > 0 && runs.isPending);
  return (
    <Stack>
      <Group justify="space-between" align="baseline">
        <PageTitle>Dashboard</PageTitle>
        <Badge
          variant="outline"
          color={live ? 'teal' : 'dark'}
          role="status"
          aria-label={`Updates: ${connection}`}
          data-testid="dashboard-connection"
        >
          {connection}
        </Badge>
      </Group>
      <ErrorNotice error={projects.error ?? runs.error} />
      {!loading && rows.length === 0 && (
        <Text>No runs yet. Start one from a project's "Start a run" tab; it appears here as it moves.</Text>
      )}
      {rows.map((run) => (
        <RunCard key={run.id} run={run} projectName={names.get(run.projectId)} />
      ))}
    </Stack>
  );
}

const shortId = (id: string) => id.slice(-8);

function RunCard({ run, projectName }: { run: BoardRun; projectName: string | undefined }) {
  const reduceMotion = useReducedMotion();
  const titleId = `run-${run.id}-title`;
  const name = projectName ?? `Project ${run.projectId.slice(0, 8)}`;
  const active = isActive(run.status);
  return (
    <Card
      withBorder
      component="article"
      aria-labelledby={titleId}
      data-testid="dashboard-run"
      data-run-id={run.id}
      data-project={name}
      data-status={run.status}
      data-percent={run.percent}
    >
      <Group justify="space-between" align="baseline" mb="xs">
        <Group gap="xs" align="baseline">
          <Title order={2} size="h4" id={titleId}>
            {name}
          </Title>
          <Badge variant="light" color="gray">
            {run.type}
          </Badge>
          {run.dryRun && (
            <Badge variant="light" color="gray">
              dry run
            </Badge>
          )}
        </Group>
        <Group gap="xs">
          <StatusBadge status={run.status} />
          {/* Run ids are UUIDv7: their first characters are a timestamp, alike for runs started together. */}
          <Link href={`/runs/${run.id}`} aria-label={`Open run …${shortId(run.id)} of ${name}`}>
            Run …{shortId(run.id)}
          </Link>
        </Group>
      </Group>
      <Text size="sm" mb={4}>
        {active ? `${phaseLabel(run)} (of ${RUN_PHASES.length}+)` : 'Ended'}
      </Text>
      <Progress
        value={run.percent}
        size="lg"
        aria-label={`Progress of ${name}: ${run.percent}%`}
        // Moving stripes for as long as a run lasts: not for a reader who asked their system for less motion.
        animated={run.status === 'RUNNING' && !reduceMotion}
      />
      <Text size="sm" mt={4}>
        {run.percent}%
        {active && run.progress
          ? ` (${run.progress.current} of ${run.progress.total} in this phase, ${speedText(run.progress)})`
          : ''}
      </Text>
      {run.waiting && (
        <Alert color="yellow" variant="light" mt="xs" title="Waiting" data-testid="run-waiting">
          {waitingText(run.waiting)}
        </Alert>
      )}
      {run.status === 'PAUSED' && (
        <Text size="sm" mt="xs" data-testid="run-paused">
          {pausedText(run.pauseReason)}
        </Text>
      )}
      {run.stats && (
        <Text size="sm" mt="xs" data-testid="run-stats">
          Created {run.stats.created}, skipped {run.stats.skipped}, failed {run.stats.failed}
          {run.finishedAt ? `; ended ${new Date(run.finishedAt).toLocaleString()}` : ''}
        </Text>
      )}
    </Card>
  );
}
