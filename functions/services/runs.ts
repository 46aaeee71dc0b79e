/** A new run record, as a start makes it (services/migrations.ts stores it with the project's lock). */
import { v7 as uuidv7 } from 'uuid';
import type { Run, RunOptions, RunType } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  migrateAttachments: true,
  migrateComments: true,
  migrateLinks: true,
  dryRun: false,
  areaFilter: null,
  typeFilter: null,
  typeOverrides: {},
  stateOverrides: {},
};

/** A new run record, RUNNING from the start (the spec's start answers RUNNING), not yet stored. */
export function newRun(
  tenantId: string,
  projectId: string,
  type: RunType,
  options: Partial<RunOptions> = {},
): Run {
  const now = nowIso();
  return {
    id: uuidv7(),
    tenantId,
    projectId,
    type,
    status: 'RUNNING',
    options: { ...DEFAULT_RUN_OPTIONS, ...options },
    totalItems: 0,
    successCount: 0,
    failureCount: 0,
    skippedCount: 0,
    progressPercent: 0,
    currentPhase: 1,
    cursor: { phase: 1, index: 0 },
    control: 'run',
    createdAt: now,
    startedAt: now,
    finishedAt: null,
    failureReason: null,
  };
}
