/** The projects' queries: their cache keys (`projectKeys`) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const projectKeys = {
  all: ['projects'] as const,
  list: () => [...projectKeys.all, 'list'] as const,
  detail: (projectId: string) => [...projectKeys.all, 'detail', projectId] as const,
};

/** The tenant's projects, most recent first. */
export const projectsQuery = () =>
  queryOptions({
    queryKey: projectKeys.list(),
    queryFn: async () => unwrap(await api.GET('/api/projects')),
  });

/** One project with its connections, scan summary and status. */
export const projectQuery = (projectId: string) =>
  queryOptions({
    queryKey: projectKeys.detail(projectId),
    queryFn: async () =>
      unwrap(await api.GET('/api/projects/{projectId}', { params: { path: { projectId } } })),
  });
