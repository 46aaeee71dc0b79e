/**
 * The write journal's store (functions/store/write-journal.ts): a record per write under the run and the item, the
 * first record of a field kept (its value before the run), an intent replaced by its settled record, an item's
 * records read together and forgotten once a rollback carried them out.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../functions/domain/rollback/journal.ts';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  ({ db, store } = await freshTable());
});
afterAll(() => db?.destroy());

const of = { tenantId: randomUUID(), projectId: randomUUID(), runId: randomUUID() };
const at = '2026-12-07T09:00:00.000Z';
const record = (sourceId: number, write: JournalRecord['write']): JournalRecord => ({
  sourceId,
  key: `MIG-${sourceId}`,
  phase: 5,
  at,
  write,
});
const byRef = (records: JournalRecord[]) =>
  [...records].sort((a, b) => JSON.stringify(a.write).localeCompare(JSON.stringify(b.write)));

describe('the write journal', () => {
  it('keeps a field’s first value before, settles an intent with its id, and reads an item’s records alone', async () => {
    // Prepare: a file's intent and the description's value before; then a later write of the description (a
    // resumed pass reads the run's own value) and the file settled with its id; another item's record
    const intent = record(25, { kind: 'attachment', name: 'spec.pdf', id: null, had: ['10001'] });
    const description = record(25, { kind: 'field', field: 'description', before: 'by hand' });
    await store.writeJournal.put(of, [intent, description]);
    await store.writeJournal.put(of, [
      record(25, { kind: 'field', field: 'description', before: 'written by the run' }),
      { ...intent, write: { ...intent.write, id: '10002' } as JournalRecord['write'] },
    ]);
    await store.writeJournal.put(of, [record(26, { kind: 'remoteLink', globalId: 'ado:org:26' })]);

    // Act
    const read = await store.writeJournal.ofItem(of, 25);

    // Assess
    expect(byRef(read)).toEqual(
      byRef([description, record(25, { kind: 'attachment', name: 'spec.pdf', id: '10002', had: ['10001'] })]),
    );
    expect(await store.writeJournal.ofItem({ ...of, runId: randomUUID() }, 25)).toEqual([]);
  });

  it('forgets the records a rollback carried out, and keeps the others', async () => {
    // Prepare
    const comment = record(30, { kind: 'comment', find: '(Azure DevOps comment 7)', id: '10010' });
    const status = record(30, { kind: 'status', from: 'To Do', to: 'Done' });
    await store.writeJournal.put(of, [comment, status]);

    // Act
    await store.writeJournal.forget(of, [comment]);

    // Assess
    expect(await store.writeJournal.ofItem(of, 30)).toEqual([status]);
  });
});
