/** Runs, their checkpoints and the control flag, each change one conditional write. */
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { RunEvent } from '#domain/run-events.ts';
import type { Run, RunCursor, RunStatus } from '#domain/runs.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { keys, TABLE_KEYS } from './keys.ts';
import { failedConditions, isConditionFailure, queryAll, type Table, withoutKeys } from './table.ts';

/** How long a run's events stay readable for the stream and its replays. */
const EVENT_TTL_SECONDS = 30 * 24 * 3600;

export interface StoredRunEvent {
  id: string;
  event: RunEvent;
  at: string;
}

export interface CheckpointUpdate {
  from: RunCursor;
  to: RunCursor;
  success?: number;
  failure?: number;
  skipped?: number;
  progressPercent: number;
  totalItems?: number;
  /** The chunk's events, written in the same transaction as the checkpoint. */
  events?: { id: string; event: RunEvent }[];
  /**
   * Items that failed for the first time in this run: marked counted in the same transaction (`failure` is
   * their number), so an item counts once and a chunk worked again after a crash cannot count it twice.
   */
  newlyFailedItems?: number[];
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
   * A project's runs, most recent first (run ids are UUIDv7), optionally of some statuses. Read from the
   * index, so a run written a moment ago may be missing: fine for lists and for finding an earlier run.
   */
  async listByProject(
    tenantId: string,
    projectId: string,
    filter: { statuses?: readonly RunStatus[] } = {},
  ): Promise<Run[]> {
    const items = await queryAll(this.table, {
      IndexName: TABLE_KEYS.gsi1.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.projectRunsIndex(tenantId, projectId) },
      ScanIndexForward: false,
    });
    const runs = items.map((i) => withoutKeys(i) as unknown as Run);
    return filter.statuses ? runs.filter((r) => filter.statuses?.includes(r.status)) : runs;
  }

  /**
   * Advances the checkpoint from exactly `from` to `to` with the chunk's counters. Two invocations racing on
   * the same chunk cannot both advance it: the loser learns so (false) and stops.
   */
  async checkpoint(tenantId: string, runId: string, u: CheckpointUpdate): Promise<boolean> {
    const run = await this.get(tenantId, runId);
    if (!run) return false;
    const at = nowIso();
    const ttl = nowEpochSeconds() + EVENT_TTL_SECONDS;
    try {
      await this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.name,
                Key: keys.run(tenantId, runId),
                UpdateExpression:
                  'SET #cursor = :to, currentPhase = :phase, progressPercent = :pct, updatedAt = :now' +
                  (u.totalItems !== undefined ? ', totalItems = :total' : '') +
                  ' ADD successCount :s, failureCount :f, skippedCount :k',
                ConditionExpression: '#cursor.phase = :fromPhase AND #cursor.#index = :fromIndex',
                ExpressionAttributeNames: { '#cursor': 'cursor', '#index': 'index' },
                ExpressionAttributeValues: {
                  ':to': u.to,
                  ':phase': u.to.phase,
                  ':pct': u.progressPercent,
                  ':now': at,
                  ':s': u.success ?? 0,
                  ':f': u.failure ?? 0,
                  ':k': u.skipped ?? 0,
                  ':fromPhase': u.from.phase,
                  ':fromIndex': u.from.index,
                  ...(u.totalItems !== undefined ? { ':total': u.totalItems } : {}),
                },
              },
            },
            ...(u.newlyFailedItems ?? []).map((sourceId) => ({
              Put: {
                TableName: this.table.name,
                Item: { ...keys.failedItem(tenantId, run.projectId, runId, sourceId), sourceId, at },
              },
            })),
            ...(u.events ?? []).map((e) => ({
              Put: {
                TableName: this.table.name,
                Item: {
                  ...keys.runEvent(tenantId, run.projectId, runId, e.id),
                  id: e.id,
                  event: e.event,
                  at,
                  ttl,
                },
              },
            })),
          ],
        }),
      );
      return true;
    } catch (err) {
      if (failedConditions(err)?.includes(0)) return false;
      throw err;
    }
  }

  /** Appends one event outside a checkpoint (status changes, done). */
  async appendEvent(
    tenantId: string,
    projectId: string,
    runId: string,
    id: string,
    event: RunEvent,
  ): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: {
          ...keys.runEvent(tenantId, projectId, runId, id),
          id,
          event,
          at: nowIso(),
          ttl: nowEpochSeconds() + EVENT_TTL_SECONDS,
        },
      }),
    );
  }

  /** The run's events after `afterId` (a stream reconnecting with Last-Event-ID), in order, unexpired. */
  async events(
    tenantId: string,
    projectId: string,
    runId: string,
    afterId?: string,
    limit = 500,
  ): Promise<StoredRunEvent[]> {
    const { pk, skPrefix } = keys.runEventPrefix(tenantId, projectId, runId);
    const out = await this.table.db.send(
      new QueryCommand({
        TableName: this.table.name,
        KeyConditionExpression: afterId
          ? 'pk = :pk AND sk BETWEEN :after AND :end'
          : 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: '#ttl > :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':pk': pk,
          ':now': nowEpochSeconds(),
          ...(afterId
            ? { ':after': `${skPrefix}${afterId}\u0000`, ':end': `${skPrefix}\uffff` }
            : { ':prefix': skPrefix }),
        },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map((i) => ({
      id: i.id as string,
      event: i.event as RunEvent,
      at: i.at as string,
    }));
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
