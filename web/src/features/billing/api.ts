/** Billing's queries: their cache keys (`billingKeys`) and how each is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const billingKeys = {
  all: ['billing'] as const,
  summary: () => [...billingKeys.all, 'summary'] as const,
  quote: (projectId: string) => [...billingKeys.all, 'quote', projectId] as const,
};

/** What the tenant spent per project, and every payment. */
export const billingQuery = () =>
  queryOptions({
    queryKey: billingKeys.summary(),
    queryFn: async () => unwrap(await api.GET('/api/billing')),
  });

/** A project's quote and where its payment stands. */
export const quoteQuery = (projectId: string) =>
  queryOptions({
    queryKey: billingKeys.quote(projectId),
    queryFn: async () =>
      unwrap(await api.GET('/api/projects/{projectId}/quote', { params: { path: { projectId } } })),
  });
