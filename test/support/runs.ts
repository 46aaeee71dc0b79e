/**
 * Runs made directly in the table, for tests that drive the engine or the stream without the start API (which
 * also takes the project's lock and checks its status), and the control flag set as the run API would.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Run, RunOptions, RunType } from '../../functions/domain/runs.ts';
import { nowIso } from '../../functions/platform/clock.ts';
import { newRun } from '../../functions/services/runs.ts';
import type { Store } from '../../functions/store/index.ts';
import { keys } from '../../functions/store/keys.ts';
import { runItem } from '../../functions/store/runs.ts';

/** A new RUNNING run of the project, stored (no lock). */
export async function createRun(
  store: Store,
  tenantId: string,
  projectId: string,
  type: RunType,
  options: Partial<RunOptions> = {},
): Promise<Run> {
  const run = newRun(tenantId, projectId, type, options);
  await store.table.db.send(
    new PutCommand({
      TableName: store.table.name,
      Item: runItem(run),
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return run;
}

/** Sets the run's control flag (pause, cancel, run) whatever its status. */
export async function setRunControl(
  store: Store,
  tenantId: string,
  runId: string,
  control: Run['control'],
): Promise<void> {
  await store.table.db.send(
    new UpdateCommand({
      TableName: store.table.name,
      Key: keys.run(tenantId, runId),
      UpdateExpression: 'SET control = :c, updatedAt = :now',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':c': control, ':now': nowIso() },
    }),
  );
}

/**
 * What the runner does with a chunk's outcome when it checkpoints it: records the failures its units carried
 * (for tests that drive a phase chunk by chunk themselves).
 */
export async function recordFailures(
  ctx: { deps: { store: Store }; run: Run },
  phase: number,
  outcome: { failures: { sourceId: number; reason: string }[] },
): Promise<void> {
  const { run } = ctx;
  for (const f of outcome.failures)
    await ctx.deps.store.runFailures.record(run.tenantId, run.projectId, run.id, {
      ...f,
      phase,
      at: nowIso(),
    });
}
