/**
 * The audit file a customer keeps: per item `pass` or its differences with both values, as CSV (one line per
 * difference, one for an item that passes) and as JSON (the items, then the summary). Both are written a verdict
 * at a time from an async sequence, so a 50,000-item project never sits in memory: only the summary's counts do.
 */
import * as z from 'zod';
import { csvLine } from '#domain/csv.ts';
import { exactSchema } from '#domain/exact-schema.ts';
import type { ItemVerdict } from './types.ts';

export interface VerificationSummary {
  itemsChecked: number;
  /** Items without a single difference. */
  fullyFaithful: number;
  /** Field -> differences found in it, over all items. */
  differencesByField: Record<string, number>;
  /** Items with a note (a person without a Jira account, ...), which still pass. */
  itemsWithNotes: number;
  /** Items that could not be compared (not counted as checked): the audit says why for each. */
  unverified: number;
}

/** The summary as the run's artifact, its status answer and its stream event carry it (parsed where read back). */
export const VerificationSummarySchema = exactSchema<VerificationSummary>()(
  z.object({
    itemsChecked: z.number(),
    fullyFaithful: z.number(),
    differencesByField: z.record(z.string(), z.number()),
    itemsWithNotes: z.number(),
    unverified: z.number(),
  }),
);

export const emptySummary = (): VerificationSummary => ({
  itemsChecked: 0,
  fullyFaithful: 0,
  differencesByField: {},
  itemsWithNotes: 0,
  unverified: 0,
});

/** Counts one verdict into the summary (in place: it is the one thing an audit keeps while it streams). */
export function tally(summary: VerificationSummary, verdict: ItemVerdict): VerificationSummary {
  if (verdict.result === 'unverified') {
    summary.unverified++;
    return summary;
  }
  summary.itemsChecked++;
  if (verdict.differences.length === 0) summary.fullyFaithful++;
  if (verdict.notes.length > 0) summary.itemsWithNotes++;
  for (const d of verdict.differences)
    summary.differencesByField[d.field] = (summary.differencesByField[d.field] ?? 0) + 1;
  return summary;
}

/** Two summaries as one (blocks verified apart, in any order). */
export function mergeSummaries(a: VerificationSummary, b: VerificationSummary): VerificationSummary {
  const byField = { ...a.differencesByField };
  for (const [field, n] of Object.entries(b.differencesByField)) byField[field] = (byField[field] ?? 0) + n;
  return {
    itemsChecked: a.itemsChecked + b.itemsChecked,
    fullyFaithful: a.fullyFaithful + b.fullyFaithful,
    differencesByField: byField,
    itemsWithNotes: a.itemsWithNotes + b.itemsWithNotes,
    unverified: a.unverified + b.unverified,
  };
}

export const AUDIT_CSV_HEADER = ['source_id', 'jira_key', 'result', 'field', 'expected', 'actual', 'notes'];
/** Between an item's notes in the CSV (the JSON keeps them as a list). */
const NOTE_SEPARATOR = ' | ';

/** An item's CSV lines: one per difference, or one saying `pass` (or `unverified`); its notes on each. */
export function auditCsvLines(v: ItemVerdict): string {
  const notes = v.notes.join(NOTE_SEPARATOR);
  if (v.differences.length === 0) return csvLine([v.sourceId, v.key, v.result, '', '', '', notes]);
  return v.differences
    .map((d) => csvLine([v.sourceId, v.key, 'differs', d.field, d.expected, d.actual, notes]))
    .join('');
}

export async function* auditCsv(verdicts: AsyncIterable<ItemVerdict>): AsyncGenerator<string> {
  yield csvLine(AUDIT_CSV_HEADER);
  for await (const v of verdicts) yield auditCsvLines(v);
}

/** `{"runId", "items": [...], "summary": {...}}`: the summary last, since it is known only at the end. */
export async function* auditJson(
  head: { runId: string; verifiedAt: string },
  verdicts: AsyncIterable<ItemVerdict>,
): AsyncGenerator<string> {
  const summary = emptySummary();
  yield `${JSON.stringify(head).slice(0, -1)},"items":[`;
  let first = true;
  for await (const v of verdicts) {
    tally(summary, v);
    yield `${first ? '' : ','}\n${JSON.stringify(v)}`;
    first = false;
  }
  yield `\n],"summary":${JSON.stringify(summary)}}\n`;
}
