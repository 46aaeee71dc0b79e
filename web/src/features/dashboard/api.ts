/**
 * The dashboard's query: its cache key (`dashboardKeys`) and how the runs of many projects are read into the
 * board's rows.
 */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { ListedRun } from './board';

export const dashboardKeys = {
  all: ['dashboard'] as const,
  runs: (projectIds: readonly string[]) => [...dashboardKeys.all, 'runs', projectIds] as const,
};

/**
 * Every named project's runs (the runs list is per project: `projectId` is required). A paused run's reason is
 * only on its status view: read once a pause (`reasonsRead` holds the runs read while they stay paused). A
 * project deleted since the projects list was read has no runs.
 */
export async function loadRuns(
  projectIds: readonly string[],
  reasonsRead: Set<string>,
): Promise<ListedRun[]> {
  const lists = await Promise.all(
    projectIds.map(async (projectId) => {
      const res = await api.GET('/api/migrations', { params: { query: { projectId } } });
      return res.response.status === 404 ? [] : unwrap(res);
    }),
  );
  return Promise.all(
    lists.flat().map(async (run): Promise<ListedRun> => {
      if (run.status !== 'PAUSED') reasonsRead.delete(run.id);
      if (run.status !== 'PAUSED' || reasonsRead.has(run.id)) return run;
      reasonsRead.add(run.id);
      const status = await api.GET('/api/migrations/{runId}/status', { params: { path: { runId: run.id } } });
      return { ...run, pauseReason: status.data?.pauseReason ?? null };
    }),
  );
}

/**
 * The runs of the tenant's projects (`projectIds`, the key); `read` decides which lists a read fetches (all of
 * them, or the busy projects' only while polling).
 */
export const dashboardRunsQuery = (projectIds: readonly string[], read: () => Promise<ListedRun[]>) =>
  queryOptions({ queryKey: dashboardKeys.runs(projectIds), queryFn: read });
