/** Single sign-on's query: its cache key (`ssoKeys`) and how it is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export const ssoKeys = {
  all: ['sso'] as const,
  config: () => [...ssoKeys.all, 'config'] as const,
};

/** The tenant's OpenID Connect provider (SSO_NOT_CONFIGURED until one is saved). */
export const ssoConfigQuery = () =>
  queryOptions({
    queryKey: ssoKeys.config(),
    queryFn: async () => unwrap(await api.GET('/api/sso')),
  });
