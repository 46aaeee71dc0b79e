/**
 * The phases' side of the write journal (#domain/rollback/journal.ts): before a phase writes to an issue the run
 * did not create (found by its label, or an earlier run's), it journals the write here, an intent settled with
 * Jira's id once Jira answers; before it changes a field there, the field's value. A dry run journals nothing (it
 * writes nothing), nor does a write to an issue the run created: its delete takes everything along. A write Jira
 * refused (writeRefused: it answered a 4xx, so nothing was written) forgets its records (`attempt`, `forget`): a
 * rollback lists no change the run never made. A write whose answer never came (a timeout, a reset, a 5xx) keeps
 * them: it may have happened.
 */
import { textToAdf } from '#domain/adf/index.ts';
import type { FieldValue, JournalledWrite, JournalRecord } from '#domain/rollback/journal.ts';
import { findText, inlineBefore } from '#domain/rollback/journal.ts';
import type { Run } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { JournalOf } from '#store/write-journal.ts';
import { TrackerHttpError } from '#trackers/tracker-errors.ts';
import type { PhaseContext } from './context.ts';
import { runArtifactKey } from './toolkit.ts';

/** Whether the run's writes to this issue are journalled: one it did not create (found, or another run's). */
export const journalled = (run: Pick<Run, 'id'>, entry: Pick<IdMapEntry, 'origin' | 'runId'>) =>
  entry.origin === 'found' || entry.runId !== run.id;

/**
 * Whether Jira refused a write: it answered a 4xx, so the write did not happen. Not a 429 (the HTTP layer sends
 * it again), nor a 5xx or an answer that never came: after those the write may be there.
 */
export const writeRefused = (err: unknown): err is TrackerHttpError =>
  err instanceof TrackerHttpError &&
  err.tracker === 'target' &&
  err.status >= 400 &&
  err.status < 500 &&
  err.status !== 429;

type Issue = Pick<IdMapEntry, 'sourceId' | 'targetKey' | 'origin' | 'runId'>;

/** One pass's journal: the phase's writes to issues the run did not create, recorded before they are made. */
export class WriteJournal {
  private constructor(private readonly ctx: Pick<PhaseContext, 'deps' | 'run'>) {}

  static of(ctx: Pick<PhaseContext, 'deps' | 'run'>): WriteJournal {
    return new WriteJournal(ctx);
  }

  private get of(): JournalOf {
    const { run } = this.ctx;
    return { tenantId: run.tenantId, projectId: run.projectId, runId: run.id };
  }

  /** Whether writes to this issue are journalled in this run. */
  covers(entry: Pick<IdMapEntry, 'origin' | 'runId'>): boolean {
    return !this.ctx.run.options.dryRun && journalled(this.ctx.run, entry);
  }

  /**
   * Journals writes about to be made to the entry's issue; answers the records written (none when it is not
   * covered; a field's or status's that an earlier record of it holds already is not written, so never forgotten
   * by this write's refusal).
   */
  async intend(entry: Issue, phase: number, writes: JournalledWrite[]): Promise<JournalRecord[]> {
    if (!this.covers(entry) || writes.length === 0) return [];
    const at = nowIso();
    const records = writes.map((write) => ({
      sourceId: entry.sourceId,
      key: entry.targetKey,
      phase,
      at,
      write,
    }));
    return this.ctx.deps.store.writeJournal.put(this.of, records);
  }

  /**
   * Makes the write `records` journalled (`write`, whose one write to Jira is its last request): when Jira refused
   * it (writeRefused) the records are forgotten before its error is thrown on; any other error keeps them.
   */
  async attempt<T>(records: JournalRecord[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (writeRefused(err)) await this.forget(records);
      throw err;
    }
  }

  /** The records again with Jira's ids (`idOf`; a record it answers nothing for stays an intent). */
  async settle(records: JournalRecord[], idOf: (r: JournalRecord) => string | undefined): Promise<void> {
    const settled = records.flatMap((r): JournalRecord[] => {
      const id = idOf(r);
      const { write } = r;
      if (id === undefined || !('id' in write) || write.id === id) return [];
      return [{ ...r, write: { ...write, id } }];
    });
    if (settled.length) await this.ctx.deps.store.writeJournal.put(this.of, settled);
  }

  /**
   * Journals an issue link about to be written ("`subject` <type> `object`", `comment` the text Jira adds to the
   * subject), under the end the run did not create, the subject first: a link between an issue the run found and
   * one it created is a write to the found one (taken back there, unless the created one goes with the rollback),
   * and its comment is journalled when it lands on a journalled subject.
   */
  async issueLink(
    subject: Issue,
    object: Issue,
    phase: number,
    type: string,
    comment?: string,
  ): Promise<JournalRecord[]> {
    const on = this.covers(subject) ? subject : this.covers(object) ? object : undefined;
    if (!on) return [];
    return this.intend(on, phase, [
      { kind: 'issueLink', type, subjectKey: subject.targetKey, objectKey: object.targetKey },
      ...(comment !== undefined && on === subject
        ? [{ kind: 'comment' as const, find: findText(textToAdf(comment)), id: null }]
        : []),
    ]);
  }

  /**
   * Forgets records of writes that did not happen (Jira refused them, or they were never sent): there is nothing
   * of them to take back.
   */
  async forget(records: JournalRecord[]): Promise<void> {
    if (records.length) await this.ctx.deps.store.writeJournal.forget(this.of, records);
  }

  /** The item's records of this run that still wait for Jira's id (a pass interrupted after its write). */
  async unsettled(entry: Issue): Promise<JournalRecord[]> {
    if (!this.covers(entry)) return [];
    const records = await this.ctx.deps.store.writeJournal.ofItem(this.of, entry.sourceId);
    return records.filter((r) => 'id' in r.write && r.write.id === null);
  }

  /**
   * Journals the fields' values before the phase changes them (`values` as Jira answered them). The first record
   * of a field is the one kept: a later write of it (a resumed pass, another phase) keeps the value before the
   * run. A value too large for a record is kept as a run artifact of its own, which the record names. Answers the
   * records written (intend).
   */
  async fieldsBefore(
    entry: Issue,
    phase: number,
    values: Record<string, FieldValue>,
  ): Promise<JournalRecord[]> {
    if (!this.covers(entry)) return [];
    const { deps, run } = this.ctx;
    const at = Date.now();
    const writes = await Promise.all(
      Object.entries(values).map(async ([field, value]): Promise<JournalledWrite> => {
        const before = inlineBefore(value);
        if (before !== undefined) return { kind: 'field', field, before };
        // Named by the attempt: a later attempt (whose record loses to this one's) never overwrites it.
        const beforeFile = runArtifactKey(run, `journal/${entry.sourceId}-${field}-${at}.json`);
        await deps.artifacts.put(beforeFile, JSON.stringify(value));
        return { kind: 'field', field, before: null, beforeFile };
      }),
    );
    return this.intend(entry, phase, writes);
  }

  /** Reads the fields from the entry's issue and journals their values before a change (fieldsBefore). */
  async readFieldsBefore(entry: Issue, phase: number, fields: string[]): Promise<JournalRecord[]> {
    if (!this.covers(entry) || fields.length === 0) return [];
    const issue = await this.ctx.deps.target.getIssue(entry.targetKey, fields);
    const values = Object.fromEntries(fields.map((f) => [f, (issue.fields?.[f] ?? null) as FieldValue]));
    return this.fieldsBefore(entry, phase, values);
  }
}
