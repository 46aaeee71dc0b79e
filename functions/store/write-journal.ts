/**
 * The write journal's records (#domain/rollback/journal.ts): what a run wrote to issues it did not create, one
 * item per write under the run and the source item (keys.journalRecord), each a few hundred bytes (a field's
 * large value before is a run artifact the record names). Written by the phases before their writes, read per
 * item by the rollback, forgotten once the rollback has carried a record out.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  firstRecordWins,
  type JournalRecord,
  JournalRecordSchema,
  journalRef,
} from '#domain/rollback/journal.ts';
import { keys } from './keys.ts';
import { taggedEntity } from './stored-item.ts';
import { conditionHeld, deleteKeys, putItems, queryAll, type Table } from './table.ts';

export const JOURNAL_RECORD = taggedEntity('journalRecord', 1, JournalRecordSchema);

/** Which run a record belongs to: its tenant, project and run. */
export interface JournalOf {
  tenantId: string;
  projectId: string;
  runId: string;
}

export class WriteJournalRepository {
  constructor(private readonly table: Table) {}

  private keyOf(of: JournalOf, record: JournalRecord) {
    return keys.journalRecord(of.tenantId, of.projectId, of.runId, record.sourceId, journalRef(record.write));
  }

  /**
   * Writes the records: an intent, or one settled with Jira's id (it replaces the intent). A field's and a status's
   * record is written only where the item has none for it yet: the first one holds the value before the run.
   * Answers the records written, in their order (a field's or status's that lost to an earlier one left out).
   */
  async put(of: JournalOf, records: JournalRecord[]): Promise<JournalRecord[]> {
    const item = (r: JournalRecord) => ({ ...this.keyOf(of, r), ...JOURNAL_RECORD.tag, ...r });
    const held = await Promise.all(
      records.map((r) =>
        firstRecordWins(r.write)
          ? conditionHeld(
              this.table.db.send(
                new PutCommand({
                  TableName: this.table.name,
                  Item: item(r),
                  ConditionExpression: 'attribute_not_exists(pk)',
                }),
              ),
            )
          : true,
      ),
    );
    await putItems(this.table, records.filter((r) => !firstRecordWins(r.write)).map(item));
    return records.filter((_, i) => held[i]);
  }

  /** The item's records of the run, in no particular order. */
  async ofItem(of: JournalOf, sourceId: number): Promise<JournalRecord[]> {
    const { pk, skPrefix } = keys.journalItemPrefix(of.tenantId, of.projectId, of.runId, sourceId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ConsistentRead: true,
    });
    return items.map((i) => JOURNAL_RECORD.parse(i));
  }

  /** Forgets the records (the rollback carried them out): worked again, it finds them undone. */
  async forget(of: JournalOf, records: JournalRecord[]): Promise<void> {
    await deleteKeys(
      this.table,
      records.map((r) => this.keyOf(of, r)),
    );
  }
}
