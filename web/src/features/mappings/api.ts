/** The mappings' queries: their cache keys (`mappingKeys`) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const mappingKeys = {
  all: ['mappings'] as const,
  detail: (projectId: string) => [...mappingKeys.all, 'detail', projectId] as const,
  // A sibling of the mappings, not under them: confirming the mappings does not read Jira's choices again.
  targetMetadata: (projectId: string) => [...mappingKeys.all, 'target-metadata', projectId] as const,
};

/** A project's mappings: suggested, saved or confirmed. */
export const mappingsQuery = (projectId: string) =>
  queryOptions({
    queryKey: mappingKeys.detail(projectId),
    queryFn: async () =>
      unwrap(await api.GET('/api/projects/{projectId}/mappings', { params: { path: { projectId } } })),
  });

/** What the connected Jira project offers the pickers (a minute fresh: each read asks Jira). */
export const targetMetadataQuery = (projectId: string) =>
  queryOptions({
    queryKey: mappingKeys.targetMetadata(projectId),
    queryFn: async () =>
      unwrap(await api.GET('/api/projects/{projectId}/target-metadata', { params: { path: { projectId } } })),
    staleTime: 60_000,
  });
