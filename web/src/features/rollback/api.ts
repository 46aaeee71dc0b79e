/** A run's rollback: its cache key (`rollbackKeys`), how it is read (polled while a pass works), how one starts. */
import { queryOptions } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client';

/** How often a rollback's pass is read while it works (its counts come at its end). */
const POLL_MS = 1_000;

export const rollbackKeys = {
  all: ['rollback'] as const,
  detail: (runId: string) => [...rollbackKeys.all, runId] as const,
};

export type RollbackView = Schemas['RollbackView'];
export type RollbackCounts = Schemas['RollbackSummary'];

/** The run's rollback: the pass under way, the last finished preview, the rollback's counts. */
export const rollbackQuery = (runId: string) =>
  queryOptions({
    queryKey: rollbackKeys.detail(runId),
    queryFn: async () =>
      unwrap(await api.GET('/api/migrations/{runId}/rollback', { params: { path: { runId } } })),
    refetchInterval: (q) => (q.state.data?.status === 'ROLLING_BACK' ? POLL_MS : false),
  });

/** Starts a pass: the preview (reads only), or the rollback of the last finished preview (`confirm`). */
export async function startRollback(
  runId: string,
  body: { preview: true; includeEdited: boolean } | { preview: false; confirm: true; includeEdited: boolean },
) {
  return unwrap(await api.POST('/api/migrations/{runId}/rollback', { params: { path: { runId } }, body }));
}
