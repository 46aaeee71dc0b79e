/** Scans of source projects: their progress while they run and their report once done. */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ScanReport } from '#domain/scan-report.ts';
import { keys } from './keys.ts';
import { deleteKeys, queryAll, type Table, withoutKeys } from './table.ts';

export type ScanStatus = 'RUNNING' | 'COMPLETED' | 'FAILED';

export interface ScanRecord {
  scanId: string;
  tenantId: string;
  projectId: string | null;
  status: ScanStatus;
  progress: { processed: number; total: number; percent: number };
  startedAt: string;
  finishedAt: string | null;
  report: ScanReport | null;
  error: string | null;
}

export class ScanRepository {
  constructor(private readonly table: Table) {}

  async put(scan: ScanRecord): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.scan(scan.tenantId, scan.scanId), ...scan },
      }),
    );
  }

  async get(tenantId: string, scanId: string): Promise<ScanRecord | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.scan(tenantId, scanId), ConsistentRead: true }),
    );
    return out.Item ? (withoutKeys(out.Item) as unknown as ScanRecord) : undefined;
  }

  async progress(tenantId: string, scanId: string, processed: number, total: number): Promise<void> {
    await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.scan(tenantId, scanId),
        UpdateExpression: 'SET progress = :p',
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':p': { processed, total, percent: total === 0 ? 100 : Math.floor((processed / total) * 100) },
          ':running': 'RUNNING',
        },
      }),
    );
  }

  /** Removes one scan (a background start that turned out to be another's, or refused, takes its record back). */
  async delete(tenantId: string, scanId: string): Promise<void> {
    await this.table.db.send(
      new DeleteCommand({ TableName: this.table.name, Key: keys.scan(tenantId, scanId) }),
    );
  }

  /** Removes the scans of a project (project deletion). */
  async deleteOfProject(tenantId: string, projectId: string): Promise<void> {
    await deleteKeys(this.table, await this.ofProject(tenantId, projectId));
  }

  private async ofProject(tenantId: string, projectId: string): Promise<{ pk: string; sk: string }[]> {
    const { pk, skPrefix } = keys.scanPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      FilterExpression: 'projectId = :project',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix, ':project': projectId },
      ProjectionExpression: 'pk, sk',
    });
    return items as { pk: string; sk: string }[];
  }
}
