/**
 * The per-project id map: source work item -> Jira issue, and which phases are done for it. Per project, not
 * per run, so resumes, re-runs and incremental runs all see what already exists in Jira.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import { queryAll, type Table } from './table.ts';

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
  /** Phases done for this item (hierarchy, attachments, comments ...). */
  phasesDone: number[];
  updatedAt: string;
}

export interface PendingWrite {
  sourceIds: number[];
  startedAt: string;
}

const BATCH_GET_MAX = 100;
const BATCH_WRITE_MAX = 25;

export class IdMapRepository {
  constructor(private readonly table: Table) {}

  async getMany(tenantId: string, projectId: string, ids: number[]): Promise<Map<number, IdMapEntry>> {
    const found = new Map<number, IdMapEntry>();
    const sourceIds = [...new Set(ids)]; // BatchGet refuses a key twice; siblings share a parent
    for (let i = 0; i < sourceIds.length; i += BATCH_GET_MAX) {
      let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> | undefined =
        {
          [this.table.name]: {
            Keys: sourceIds
              .slice(i, i + BATCH_GET_MAX)
              .map((id) => ({ ...keys.idMapEntry(tenantId, projectId, id) })),
            ConsistentRead: true,
          },
        };
      for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
        const out = await this.table.db.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of out.Responses?.[this.table.name] ?? [])
          found.set(Number(item.sourceId), item as unknown as IdMapEntry);
        request = out.UnprocessedKeys as typeof request;
      }
    }
    return found;
  }

  async putMany(tenantId: string, projectId: string, entries: IdMapEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += BATCH_WRITE_MAX) {
      let requests = entries.slice(i, i + BATCH_WRITE_MAX).map((e) => ({
        PutRequest: { Item: { ...keys.idMapEntry(tenantId, projectId, e.sourceId), ...e } },
      }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
        const out = await this.table.db.send(
          new BatchWriteCommand({ RequestItems: { [this.table.name]: requests } }),
        );
        requests = (out.UnprocessedItems?.[this.table.name] ?? []) as typeof requests;
      }
    }
  }

  async all(tenantId: string, projectId: string): Promise<IdMapEntry[]> {
    const { pk, skPrefix } = keys.idMapPrefix(tenantId, projectId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
    });
    return items as unknown as IdMapEntry[];
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
    return out.Item
      ? { sourceIds: out.Item.sourceIds as number[], startedAt: out.Item.startedAt as string }
      : undefined;
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

export interface RunFailure {
  sourceId: number;
  phase: number;
  reason: string;
  at: string;
}

export class RunFailureRepository {
  constructor(private readonly table: Table) {}

  async record(tenantId: string, projectId: string, runId: string, failure: RunFailure): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.runFailure(tenantId, projectId, runId, failure.sourceId), ...failure },
      }),
    );
  }

  async list(tenantId: string, projectId: string, runId: string): Promise<RunFailure[]> {
    const { pk, skPrefix } = keys.runFailurePrefix(tenantId, projectId, runId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
    });
    return items as unknown as RunFailure[];
  }
}
