/** An id map entry as the create phase leaves it, for tests that put a project's map in the table. */
import type { IdMapEntry } from '../../functions/store/id-map.ts';

/** Item `sourceId` created as MIG-`n` by run-a, phase 2 done; `over` changes any field. */
export const idMapEntry = (
  sourceId: number,
  sourceType: string,
  n: number,
  over: Partial<IdMapEntry> = {},
): IdMapEntry => ({
  sourceId,
  sourceType,
  targetKey: `MIG-${n}`,
  targetId: String(10000 + n),
  origin: 'created',
  runId: 'run-a',
  phasesDone: [2],
  updatedAt: '2026-01-01T10:00:00.000Z',
  ...over,
});
