/** Runs, their checkpoints and the control flag, each change one conditional write. */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Run, RunCursor, RunStatus } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import { keys, TABLE_KEYS } from './keys.ts';
import { isConditionFailure, type Table, withoutKeys } from './table.ts';

export interface CheckpointUpdate {
  from: RunCursor;
  to: RunCursor;
  success?: number;
  failure?: number;
  skipped?: number;
  progressPercent: number;
  totalItems?: number;
}

export class RunRepository {
  constructor(private readonly table: Table) {}

  async create(run: Run): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: {
          ...keys.run(run.tenantId, run.id),
          [TABLE_KEYS.gsi1.partitionKey]: keys.projectRunsIndex(run.tenantId, run.projectId),
          [TABLE_KEYS.gsi1.sortKey]: run.id,
          ...run,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(tenantId: string, runId: string): Promise<Run | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.run(tenantId, runId), ConsistentRead: true }),
    );
    return out.Item ? (withoutKeys(out.Item) as unknown as Run) : undefined;
  }

  /**
   * Advances the checkpoint from exactly `from` to `to` with the chunk's counters. Two invocations racing on
   * the same chunk cannot both advance it: the loser learns so (false) and stops.
   */
  async checkpoint(tenantId: string, runId: string, u: CheckpointUpdate): Promise<boolean> {
    try {
      await this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression:
            'SET #cursor = :to, currentPhase = :phase, progressPercent = :pct' +
            (u.totalItems !== undefined ? ', totalItems = :total' : '') +
            ' ADD successCount :s, failureCount :f, skippedCount :k',
          ConditionExpression: '#cursor.phase = :fromPhase AND #cursor.#index = :fromIndex',
          ExpressionAttributeNames: { '#cursor': 'cursor', '#index': 'index' },
          ExpressionAttributeValues: {
            ':to': u.to,
            ':phase': u.to.phase,
            ':pct': u.progressPercent,
            ':s': u.success ?? 0,
            ':f': u.failure ?? 0,
            ':k': u.skipped ?? 0,
            ':fromPhase': u.from.phase,
            ':fromIndex': u.from.index,
            ...(u.totalItems !== undefined ? { ':total': u.totalItems } : {}),
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Moves the status only from one of `from`; answers whether it moved. */
  async setStatus(
    tenantId: string,
    runId: string,
    from: RunStatus[],
    to: RunStatus,
    extra: Partial<
      Pick<Run, 'startedAt' | 'finishedAt' | 'failureReason' | 'progressPercent' | 'control'>
    > = {},
  ): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':to': to };
    from.forEach((s, i) => {
      values[`:from${i}`] = s;
    });
    const sets = ['#status = :to'];
    Object.entries(extra).forEach(([k, v], i) => {
      names[`#e${i}`] = k;
      values[`:e${i}`] = v;
      sets.push(`#e${i} = :e${i}`);
    });
    try {
      await this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async setControl(tenantId: string, runId: string, control: Run['control']): Promise<void> {
    await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.run(tenantId, runId),
        UpdateExpression: 'SET control = :c, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':c': control, ':now': nowIso() },
      }),
    );
  }
}
