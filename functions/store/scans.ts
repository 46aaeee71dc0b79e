/** Scans of source projects: their progress while they run and their report once done. */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { type ScanReport, ScanReportSchema } from '#domain/scan-report.ts';
import type { SealedSecret } from '#platform/credentials-cipher.ts';
import { keys } from './keys.ts';
import { SealedSecretSchema } from './sealed-secret.ts';
import { storedEntity } from './stored-item.ts';
import { deleteKeys, queryKeys, type Table } from './table.ts';

const SCAN_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

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

/**
 * A background scan's record may carry the request's inline source credentials, sealed and bound to the scan:
 * the worker gets ids only, so this is how credentials that were never stored on a project reach it. Written
 * only while the scan runs; the outcome replaces the whole record, and the API never shows the field.
 */
export type BackgroundScanRecord = ScanRecord & { sealedCredentials?: SealedSecret };

const ScanRecordSchema = exactSchema<ScanRecord>()(
  z.object({
    scanId: z.string(),
    tenantId: z.string(),
    projectId: z.string().nullable(),
    status: z.enum(SCAN_STATUSES),
    progress: z.object({ processed: z.number(), total: z.number(), percent: z.number() }),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    report: ScanReportSchema.nullable(),
    error: z.string().nullable(),
  }),
);

/** Read by the API: the sealed credentials are not part of it (its schema drops them). */
const SCAN = storedEntity('scan', ScanRecordSchema);
/** Read by the worker, the only reader of the sealed credentials. */
const BACKGROUND_SCAN = storedEntity(
  'scan',
  exactSchema<BackgroundScanRecord>()(
    ScanRecordSchema.extend({ sealedCredentials: SealedSecretSchema.optional() }),
  ),
);

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
    const out = await this.read(tenantId, scanId);
    return out ? SCAN.parse(out) : undefined;
  }

  /** The scan with the sealed credentials its request brought, if any: for the scan worker only. */
  async getForWorker(tenantId: string, scanId: string): Promise<BackgroundScanRecord | undefined> {
    const out = await this.read(tenantId, scanId);
    return out ? BACKGROUND_SCAN.parse(out) : undefined;
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
    return queryKeys(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      FilterExpression: 'projectId = :project',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix, ':project': projectId },
    });
  }

  private async read(tenantId: string, scanId: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.scan(tenantId, scanId), ConsistentRead: true }),
    );
    return out.Item;
  }
}
