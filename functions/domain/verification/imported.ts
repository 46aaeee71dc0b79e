/**
 * What Jira should show for an item a run delivered through Jira's JSON importer: what its import file carried,
 * not what the REST mode writes. The file's issue (`ImportIssue`, as the run archived it) gives the type, status,
 * summary, labels, components, priority, people, dates, the description and each comment with its own author and
 * date, and its change history (each entry's author, date and field changes, as Jira's changelog shows them); the
 * REST expectations (`expectedIssue`) give what the REST phases set after the import (the parent, the
 * links, the files, the sprint) and what the file and the REST mode map alike (estimates, custom fields).
 *
 * The file's text is wiki markup; the document expected is that text read as Jira reads it (`wikiToAdf`, the
 * domain's port of Atlassian's parser), so what wiki markup cannot carry (merged cells, a `|` in a cell ...,
 * docs/jira-import.md) is expected as the file wrote it, never a difference; documents are then judged as the
 * REST mode judges them (document.ts: text, table cells, images, mentions, references).
 */
import type { AdfDoc } from '#domain/adf/index.ts';
import type { ImportIssue } from '#domain/jira-import/format.ts';
import { wikiToAdf } from '#domain/jira-import/wiki-read.ts';
import type { ExpectedIssue, ImportedChange, ImportedComment } from './expected.ts';

/** An importer date as an instant (`2026-03-02T10:00:00.000Z`), for the audit and the notes. */
export function instantOf(date: string | undefined): string | undefined {
  if (date === undefined) return undefined;
  const ms = Date.parse(date.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? date : new Date(ms).toISOString();
}

const documentOf = (wiki: string | undefined): AdfDoc | undefined =>
  wiki === undefined || wiki.trim() === '' ? undefined : wikiToAdf(wiki);

/**
 * The item's expected issue from its import file: `rest` (expectedIssue for the same item) for what the REST
 * phases set, `carried` for the rest. A person the file names nobody for (no Jira account) is not checked, and
 * said in the notes.
 */
export function expectedImported(rest: ExpectedIssue, carried: ImportIssue): ExpectedIssue {
  const comments = (carried.comments ?? []).map(
    (c): ImportedComment => ({
      body: wikiToAdf(c.body),
      ...(c.author !== undefined ? { author: c.author } : {}),
      created: c.created,
    }),
  );
  const history = (carried.history ?? []).map(
    (h): ImportedChange => ({
      ...(h.author !== undefined ? { author: h.author } : {}),
      created: h.created,
      items: h.items.map((i) => ({ field: i.field, fromString: i.fromString, toString: i.toString })),
    }),
  );
  const description = documentOf(carried.description);
  const { description: _d, status: _s, priority: _p, assignee: _a, reporter: _r, ...kept } = rest;
  const assignee = carried.assignee ?? (rest.assignee === null ? null : undefined);
  return {
    ...kept,
    type: { ...rest.type, name: carried.issueType },
    ...(carried.status !== undefined ? { status: carried.status } : {}),
    summary: carried.summary,
    labels: carried.labels ?? [],
    components: carried.components ?? [],
    ...(carried.priority !== undefined ? { priority: carried.priority } : {}),
    ...(assignee !== undefined ? { assignee } : {}),
    ...(carried.reporter !== undefined ? { reporter: carried.reporter } : {}),
    comments: [],
    ...(description ? { description } : {}),
    imported: {
      ...(carried.created !== undefined ? { created: carried.created } : {}),
      ...(carried.updated !== undefined ? { updated: carried.updated } : {}),
      ...(carried.resolutionDate !== undefined ? { resolutionDate: carried.resolutionDate } : {}),
      comments,
      history,
    },
    notes: [
      ...rest.notes,
      ...comments.flatMap((c, i) =>
        c.author === undefined
          ? [`comment ${i + 1} (${instantOf(c.created)}): its author has no Jira account (named in its text)`]
          : [],
      ),
    ],
  };
}
