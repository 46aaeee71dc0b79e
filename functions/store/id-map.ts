/**
 * The per-project id map: source work item -> Jira issue, and which phases are done for it. Per project, not
 * per run, so resumes, re-runs and incremental runs all see what already exists in Jira.
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { keys } from './keys.ts';
import { storedEntity, taggedEntity } from './stored-item.ts';
import { batchGetAll, batchWrite, conditionHeld, queryAll, queryPages, type Table } from './table.ts';

export interface IdMapEntry {
  sourceId: number;
  targetKey: string;
  targetId: string;
  sourceType: string;
  /** How the entry came to be: created by us, or found already in Jira by its src-id label. */
  origin: 'created' | 'found';
  /** Created by this run but confirmed only after an interruption, by its label. */
  recovered?: boolean;
  runId: string;
  /** The last INCREMENTAL run that updated the issue from its source (a resumed chunk does not update twice). */
  updatedByRun?: string;
  /** Phases done for this item (hierarchy, attachments, comments ...). */
  phasesDone: number[];
  updatedAt: string;
}

/**
 * The id map entry: long-lived (kept with the project, read in bulk by every phase of every run). A plain object
 * schema, no transforms: a run reads tens of thousands.
 */
export const ID_MAP_ENTRY = taggedEntity(
  'idMapEntry',
  1,
  exactSchema<IdMapEntry>()(
    z.object({
      sourceId: z.number(),
      targetKey: z.string(),
      targetId: z.string(),
      sourceType: z.string(),
      origin: z.enum(['created', 'found']),
      recovered: z.boolean().optional(),
      runId: z.string(),
      updatedByRun: z.string().optional(),
      phasesDone: z.array(z.number()),
      updatedAt: z.string(),
    }),
  ),
);

export interface PendingWrite {
  sourceIds: number[];
  startedAt: string;
}

/** The create phase's pending-write journal (its ids and when the bulk write started). */
const PENDING_WRITE = storedEntity(
  'pendingWrite',
  exactSchema<PendingWrite>()(z.object({ sourceIds: z.array(z.number()), startedAt: z.string() })),
);

/** Items per page of a paged read: an export holds one page at a time, not the whole project. */
const PAGE_SIZE = 1000;

export class IdMapRepository {
  constructor(private readonly table: Table) {}

  async getMany(tenantId: string, projectId: string, ids: number[]): Promise<Map<number, IdMapEntry>> {
    // BatchGet refuses a key twice; siblings share a parent.
    const items = await batchGetAll(
      this.table,
      [...new Set(ids)].map((id) => keys.idMapEntry(tenantId, projectId, id)),
    );
    return new Map(
      items.map((item) => {
        const entry = ID_MAP_ENTRY.parse(item);
        return [entry.sourceId, entry];
      }),
    );
  }

  async putMany(tenantId: string, projectId: string, entries: IdMapEntry[]): Promise<void> {
    await batchWrite(
      this.table,
      entries.map((e) => ({
        PutRequest: {
          Item: { ...keys.idMapEntry(tenantId, projectId, e.sourceId), ...ID_MAP_ENTRY.tag, ...e },
        },
      })),
    );
  }

  /** Forgets these items (a rollback deleted their issues): a later run creates them again. */
  async deleteMany(tenantId: string, projectId: string, ids: number[]): Promise<void> {
    // BatchWrite refuses a key twice.
    await batchWrite(
      this.table,
      [...new Set(ids)].map((id) => ({ DeleteRequest: { Key: keys.idMapEntry(tenantId, projectId, id) } })),
    );
  }

  async all(tenantId: string, projectId: string): Promise<IdMapEntry[]> {
    const { pk, skPrefix } = keys.idMapPrefix(tenantId, projectId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
    });
    return items.map((item) => ID_MAP_ENTRY.parse(item));
  }

  /** The project's entries in source id order, a page at a time (an export of 100k items holds one page). */
  async *pages(tenantId: string, projectId: string, pageSize = PAGE_SIZE): AsyncGenerator<IdMapEntry[]> {
    const { pk, skPrefix } = keys.idMapPrefix(tenantId, projectId);
    for await (const page of queryPages(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      Limit: pageSize,
    }))
      yield page.map((item) => ID_MAP_ENTRY.parse(item));
  }

  /** Recorded before a Jira write whose outcome might not get recorded (a crash between the two). */
  async markPending(
    tenantId: string,
    projectId: string,
    runId: string,
    phase: number,
    pending: PendingWrite,
  ): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.pendingWrite(tenantId, projectId, runId, phase), ...pending },
      }),
    );
  }

  async pending(
    tenantId: string,
    projectId: string,
    runId: string,
    phase: number,
  ): Promise<PendingWrite | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.pendingWrite(tenantId, projectId, runId, phase),
        ConsistentRead: true,
      }),
    );
    return out.Item ? PENDING_WRITE.parse(out.Item) : undefined;
  }

  async clearPending(tenantId: string, projectId: string, runId: string, phase: number): Promise<void> {
    await this.table.db.send(
      new DeleteCommand({
        TableName: this.table.name,
        Key: keys.pendingWrite(tenantId, projectId, runId, phase),
      }),
    );
  }
}

/** One reason an item failed in a phase of a run. An item may fail in several phases, for several reasons. */
export interface RunFailure {
  sourceId: number;
  phase: number;
  reason: string;
  at: string;
}

/** Tells reasons apart in the key; the same reason again (a chunk worked again after a crash) is the same key. */
const reasonId = (reason: string) => createHash('sha256').update(reason).digest('hex').slice(0, 16);

const RUN_FAILURE = storedEntity(
  'runFailure',
  exactSchema<RunFailure>()(
    z.object({ sourceId: z.number(), phase: z.number(), reason: z.string(), at: z.string() }),
  ),
);

/** The mark that an item counts in its run's failureCount. */
const FAILED_ITEM = storedEntity('failedItem', z.object({ sourceId: z.number() }));

export class RunFailureRepository {
  constructor(private readonly table: Table) {}

  /**
   * Keeps every reason: one item per run, source item, phase and reason. False when this very reason was
   * recorded already (its first time is kept); the run's failure counter is the checkpoint's business.
   */
  async record(tenantId: string, projectId: string, runId: string, failure: RunFailure): Promise<boolean> {
    const key = keys.runFailure(
      tenantId,
      projectId,
      runId,
      failure.sourceId,
      failure.phase,
      reasonId(failure.reason),
    );
    return conditionHeld(
      this.table.db.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...key, ...failure },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  /** Which of these items already count in the run's failureCount (see CheckpointUpdate.newlyFailedItems). */
  async counted(tenantId: string, projectId: string, runId: string, ids: number[]): Promise<Set<number>> {
    const items = await batchGetAll(
      this.table,
      [...new Set(ids)].map((id) => keys.failedItem(tenantId, projectId, runId, id)),
    );
    return new Set(items.map((i) => FAILED_ITEM.parse(i).sourceId));
  }

  /** Every reason of the run, by source item, then phase. */
  async list(tenantId: string, projectId: string, runId: string): Promise<RunFailure[]> {
    const out: RunFailure[] = [];
    for await (const page of this.pages(tenantId, projectId, runId)) out.push(...page);
    return out;
  }

  /** The same a page at a time, for reports of runs where many items failed. */
  async *pages(
    tenantId: string,
    projectId: string,
    runId: string,
    pageSize = PAGE_SIZE,
  ): AsyncGenerator<RunFailure[]> {
    const { pk, skPrefix } = keys.runFailurePrefix(tenantId, projectId, runId);
    // The page's items come without their keys: the error names the run's failures.
    for await (const page of queryPages(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      Limit: pageSize,
    }))
      yield page.map((item) => RUN_FAILURE.parse(item, `${pk} ${skPrefix}…`));
  }
}
