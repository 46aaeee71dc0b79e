/** The plugins' query: its cache key (`pluginKeys`) and how it is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const pluginKeys = {
  all: ['plugins'] as const,
  list: () => [...pluginKeys.all, 'list'] as const,
};

/** The plugins the operator enabled for the tenant. */
export const pluginsQuery = () =>
  queryOptions({
    queryKey: pluginKeys.list(),
    queryFn: async () => unwrap(await api.GET('/api/plugins')),
  });
