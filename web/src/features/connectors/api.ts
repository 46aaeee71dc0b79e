/** The scans' queries: their cache keys (`scanKeys`) and how a scan is read. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

/** How often a background scan's progress is read while it runs. */
const SCAN_POLL_MS = 1_000;

export const scanKeys = {
  all: ['scans'] as const,
  detail: (scanId: string | undefined) => [...scanKeys.all, 'detail', scanId] as const,
};

/** A scan's status, progress and report (none until a scan is known); `poll` while it runs in the background. */
export const scanQuery = (scanId: string | undefined, poll: boolean) =>
  queryOptions({
    queryKey: scanKeys.detail(scanId),
    enabled: scanId !== undefined,
    queryFn: async () =>
      unwrap(await api.GET('/api/audit/{scanId}', { params: { path: { scanId: scanId ?? '' } } })),
    refetchInterval: poll ? SCAN_POLL_MS : false,
  });
