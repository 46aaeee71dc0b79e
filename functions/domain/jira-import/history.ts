/**
 * An item's Azure DevOps revisions as the importer's `history[]`: for each revision after the first (the first
 * is the creation, which the issue's own fields and `created` stand for), one group by the revision's author
 * (System.ChangedBy, as an account id; left out for a person without one, who is reported) at its date
 * (System.ChangedDate), with one item per tracked field whose Jira value changed (fields.ts), in the table's
 * order. A revision that changed nothing Jira tracks (a comment, a link, a bookkeeping field, two ADO states
 * mapped to one status) gives no group. Revisions are taken in `rev` order whatever order they come in.
 */

import { type TrackedValue, trackedValues } from './fields.ts';
import type { ImportHistoryGroup, ImportHistoryItem } from './format.ts';
import type { ImportMapping } from './mapping.ts';
import type { People } from './people.ts';
import type { SourceItem } from './text.ts';
import { importerDate } from './values.ts';

export interface SourceRevision extends SourceItem {
  rev?: number;
}

const revOf = (r: SourceRevision, index: number): number => {
  const n = Number(r.rev ?? r.fields['System.Rev']);
  return Number.isFinite(n) && n > 0 ? n : index + 1;
};

const same = (a: TrackedValue, b: TrackedValue) => a.id === b.id && a.text === b.text;

/**
 * `from`/`to` hold Jira's ids where it has them (status, issue type, account, sprint, seconds), else null:
 * Jira's changelog holds custom field values as their strings, and an import cannot know option ids.
 */
const itemOf = (before: TrackedValue, after: TrackedValue): ImportHistoryItem => ({
  fieldType: after.fieldType,
  field: after.field,
  from: before.id,
  fromString: before.text,
  to: after.id,
  toString: after.text,
});

export function historyOf(
  revisions: readonly SourceRevision[],
  mapping: ImportMapping,
  people: People,
): { history: ImportHistoryGroup[]; warnings: string[] } {
  const sorted = revisions.map((r, i) => ({ r, rev: revOf(r, i) })).sort((a, b) => a.rev - b.rev);
  const warnings: string[] = [];
  const history: ImportHistoryGroup[] = [];
  let before: TrackedValue[] | undefined;
  for (const { r, rev } of sorted) {
    const values = trackedValues(r.fields, mapping, people);
    const previous = before;
    before = values;
    if (!previous) continue;
    const items: ImportHistoryItem[] = [];
    for (let i = 0; i < values.length; i++) {
      const [from, to] = [previous[i]!, values[i]!];
      if (!same(from, to)) items.push(itemOf(from, to));
    }
    if (items.length === 0) continue;
    const created = importerDate(r.fields['System.ChangedDate']);
    if (!created) {
      warnings.push(`revision ${rev} has no date: its changes are not in the history`);
      continue;
    }
    const author = people.of(r.fields['System.ChangedBy']);
    history.push({ ...(author?.accountId ? { author: author.accountId } : {}), created, items });
  }
  return { history, warnings };
}
