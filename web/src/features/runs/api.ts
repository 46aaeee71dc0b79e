/** The runs' queries: their cache keys (`runKeys`) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { isActive } from './figures';

/** How often an active run's status is read again (its stream moves the page in between). */
const STATUS_POLL_MS = 2_000;

export const runKeys = {
  all: ['runs'] as const,
  list: (projectId: string) => [...runKeys.all, 'list', projectId] as const,
  detail: (runId: string) => [...runKeys.all, 'detail', runId] as const,
};

/** A project's runs, most recent first. */
export const projectRunsQuery = (projectId: string) =>
  queryOptions({
    queryKey: runKeys.list(projectId),
    queryFn: async () => unwrap(await api.GET('/api/migrations', { params: { query: { projectId } } })),
  });

/** A run's status view, read again while the run is active. */
export const runStatusQuery = (runId: string) =>
  queryOptions({
    queryKey: runKeys.detail(runId),
    queryFn: async () =>
      unwrap(await api.GET('/api/migrations/{runId}/status', { params: { path: { runId } } })),
    refetchInterval: (q) => (q.state.data && !isActive(q.state.data.status) ? false : STATUS_POLL_MS),
  });
