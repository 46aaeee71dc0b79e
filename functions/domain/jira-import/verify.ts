/**
 * What a run makes of a batch after the admin's import, from the issues Jira answers for the batch's label: every
 * item of the batch once (recorded in the id map), the items missing (the run stays paused on the batch, naming
 * them), and the copies a second import of the file made (removed by the engine, the first kept). Pure: the
 * engine searches and deletes (engine/phases/import.ts).
 */
import { sourceIdFromLabel } from '../mapping/labels.ts';

/** An issue the batch's label finds, as the search answers it. */
export interface LabelledIssue {
  key: string;
  id: string;
  labels: readonly string[];
}

export interface BatchCheck {
  /** Each item of the batch found, with the copy the run keeps, in the batch's order. */
  found: { sourceId: number; key: string; id: string }[];
  /** The batch's items no issue stands for yet, in the batch's order. */
  missing: number[];
  /** Items found more than once: the copy kept and the others, to remove. */
  duplicates: { sourceId: number; kept: string; extra: { key: string; id: string }[] }[];
  /** Issues with the batch's label but no source id of the batch (edited by hand): named, never touched. */
  strangers: string[];
}

/** The number of an issue key (`MIG-12` -> 12): the importer creates a file's issues in order, keys rising. */
const keyNumber = (key: string): number => Number(key.slice(key.lastIndexOf('-') + 1));

/**
 * The batch as Jira holds it. Of several copies of an item the run keeps the one its id map already names (a
 * resume after the batch was recorded), else the first imported: the lowest key number.
 */
export function checkBatch(
  expected: readonly number[],
  issues: readonly LabelledIssue[],
  recorded: ReadonlyMap<number, string> = new Map(),
): BatchCheck {
  const wanted = new Set(expected);
  const copies = new Map<number, { key: string; id: string }[]>();
  const strangers: string[] = [];
  for (const issue of issues) {
    const sourceId = issue.labels.map(sourceIdFromLabel).find((n) => n !== undefined);
    if (sourceId === undefined || !wanted.has(sourceId)) {
      strangers.push(issue.key);
      continue;
    }
    const list = copies.get(sourceId) ?? [];
    if (!list.some((c) => c.key === issue.key)) list.push({ key: issue.key, id: issue.id });
    copies.set(sourceId, list);
  }
  const out: BatchCheck = { found: [], missing: [], duplicates: [], strangers: strangers.sort() };
  for (const sourceId of expected) {
    const list = copies.get(sourceId);
    if (!list?.length) {
      out.missing.push(sourceId);
      continue;
    }
    const ordered = [...list].sort((a, b) => keyNumber(a.key) - keyNumber(b.key));
    const kept = ordered.find((c) => c.key === recorded.get(sourceId)) ?? (ordered[0] as (typeof ordered)[0]);
    out.found.push({ sourceId, ...kept });
    const extra = ordered.filter((c) => c !== kept);
    if (extra.length) out.duplicates.push({ sourceId, kept: kept.key, extra });
  }
  return out;
}

/** The most items a pause reason names; the rest are counted. */
const NAMED = 20;

const named = (ids: readonly number[]) =>
  ids
    .slice(0, NAMED)
    .map((id) => `#${id}`)
    .join(', ') + (ids.length > NAMED ? ` and ${ids.length - NAMED} more` : '');

/** The file's name as the download route serves it (api/migrations.ts). */
export const importFileName = (runId: string, n: number) => `jira-import-${runId.toLowerCase()}-${n}.json`;

/**
 * Why the run is paused on batch `n`: nothing of it in Jira yet (the admin's turn), or only part of it (named):
 * an import still going on, or one that stopped; the run stays paused on the batch until every item is there.
 */
export function awaitingImport(
  runId: string,
  n: number,
  total: number,
  missing: readonly number[],
  size: number,
): string {
  const where = 'Jira settings > System > External System Import > JSON';
  if (missing.length === size)
    return `Waiting for the Jira import of batch ${n} of ${total}: import ${importFileName(runId, n)} (${where}), then resume the run`;
  return (
    `Batch ${n} of ${total} is not in Jira whole: ${named(missing)} (${missing.length} of ${size} items) not found; ` +
    `wait for the import to finish, or import ${importFileName(runId, n)} again (the second copies are removed), then resume the run`
  );
}
