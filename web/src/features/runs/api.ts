/** The runs' queries: their cache keys (`runKeys`) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { isWorking } from './figures';

/** How often an active run's status is read again (its stream moves the page in between). */
const STATUS_POLL_MS = 2_000;

export const runKeys = {
  all: ['runs'] as const,
  list: (projectId: string) => [...runKeys.all, 'list', projectId] as const,
  detail: (runId: string) => [...runKeys.all, 'detail', runId] as const,
  importFiles: (runId: string) => [...runKeys.detail(runId), 'import-files'] as const,
};

/** A project's runs, most recent first. */
export const projectRunsQuery = (projectId: string) =>
  queryOptions({
    queryKey: runKeys.list(projectId),
    queryFn: async () => unwrap(await api.GET('/api/migrations', { params: { query: { projectId } } })),
  });

/** A run's status view, read again while the run is worked on (active, or being verified or rolled back). */
export const runStatusQuery = (runId: string) =>
  queryOptions({
    queryKey: runKeys.detail(runId),
    queryFn: async () =>
      unwrap(await api.GET('/api/migrations/{runId}/status', { params: { path: { runId } } })),
    refetchInterval: (q) => (q.state.data && !isWorking(q.state.data.status) ? false : STATUS_POLL_MS),
  });

export type RunAction = 'pause' | 'resume' | 'cancel';

/**
 * Pauses, resumes or cancels a run; a rollback (or its preview) under way is steered by the same routes, by an
 * owner or admin only (a member's pause or resume of one is 403: docs/api.md, "Rollback of a run").
 */
export async function controlRun(runId: string, action: RunAction) {
  const params = { params: { path: { runId } } };
  if (action === 'pause') return unwrap(await api.POST('/api/migrations/{runId}/pause', params));
  if (action === 'resume') return unwrap(await api.POST('/api/migrations/{runId}/resume', params));
  return unwrap(await api.POST('/api/migrations/{runId}/cancel', params));
}

/** A run's verification: started by POST, its summary on the run status (`verification`), its audit downloaded. */
export async function startVerification(runId: string) {
  return unwrap(await api.POST('/api/migrations/{runId}/verification', { params: { path: { runId } } }));
}

/**
 * A Jira-import run's files (owner, admin); null until the run has written them (404), read again while it works.
 */
export const importFilesQuery = (runId: string, working: boolean) =>
  queryOptions({
    queryKey: runKeys.importFiles(runId),
    queryFn: async () => {
      const res = await api.GET('/api/migrations/{runId}/import-files', { params: { path: { runId } } });
      if (res.response.status === 404) return null;
      return unwrap(res);
    },
    refetchInterval: working ? 5_000 : false,
  });
