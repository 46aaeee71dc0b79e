/**
 * Where the journal puts a line or a status it tells outside a checkpoint: at the run's place as it last moved,
 * not where the invocation found it. A live stream sends each place once it has passed it (services/run-stream.ts);
 * a wait line told at the invocation's first place, after the run moved on, would sort before lines already sent.
 */
import { describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import type { JournalRun } from '../../functions/domain/run-journal.ts';
import { RUN_TRANSITIONS } from '../../functions/domain/run-lifecycle.ts';

function journalOverFakeStore() {
  const ids: string[] = [];
  const store = {
    runs: {
      checkpoint: async () => true,
      transition: async () => true,
      appendEvent: async (_t: string, _p: string, _r: string, id: string) => void ids.push(id),
      appendEvents: async (_t: string, _p: string, _r: string, events: { id: string }[]) =>
        void ids.push(...events.map((e) => e.id)),
    },
  };
  return { journal: new StoreRunJournal(store as never), ids };
}

const run: JournalRun = { id: 'run-1', tenantId: 't-1', projectId: 'p-1', cursor: { phase: 4, index: 0 } };
const placeOf = (id: string | undefined) => id?.slice(0, '04.00000000.'.length);

describe('the journal, between checkpoints', () => {
  it('tells a line at the place its last checkpoint moved the run to', async () => {
    const { journal, ids } = journalOverFakeStore();
    await journal.checkpoint(run, {
      from: run.cursor,
      to: { phase: 4, index: 50, done: [52] },
      progressPercent: 40,
    });
    await journal.log(run, "Waiting for Jira's hourly quota until 14:00 UTC");
    expect(placeOf(ids.at(-1))).toBe('04.00000051.');
  });

  it('tells a status move there too, and keeps each run apart', async () => {
    const { journal, ids } = journalOverFakeStore();
    await journal.checkpoint(run, { from: run.cursor, to: { phase: 5, index: 0 }, progressPercent: 60 });
    await journal.move(run, RUN_TRANSITIONS.pause);
    expect(placeOf(ids.at(-1))).toBe('05.00000000.');
    await journal.log({ ...run, id: 'run-2' }, 'another run');
    expect(placeOf(ids.at(-1))).toBe('04.00000000.');
  });

  it('never tells a line before the place the run it is given stands at', async () => {
    const { journal, ids } = journalOverFakeStore();
    await journal.checkpoint(run, { from: run.cursor, to: { phase: 4, index: 10 }, progressPercent: 10 });
    await journal.log({ ...run, cursor: { phase: 4, index: 30 } }, 'read again since');
    expect(placeOf(ids.at(-1))).toBe('04.00000030.');
  });

  it('gives lines told in one millisecond ids of their own, in the order told', async () => {
    const { journal, ids } = journalOverFakeStore();
    for (const n of [1, 2, 3, 4, 5]) await journal.log(run, `line ${n}`);
    expect(new Set(ids).size).toBe(5);
    expect([...ids].sort()).toEqual(ids);
  });
});
