/**
 * One migrated item: what the engine's rules say Jira should show against what Jira shows, field by field.
 * Each field's check is one small function returning its differences; a change made in Jira to one thing (a
 * label, a comment, a table cell, an attachment) is one difference, so the audit reads as a list of changes.
 */
import type { AdfNode } from '#domain/adf/index.ts';
import { compareDocuments, documentFacts } from './document.ts';
import type { ChangeFact, ExpectedIssue, FileFacts } from './expected.ts';
import { instantOf } from './imported.ts';
import type { ReadBackIssue } from './read-back.ts';
import { auditValue, type Difference, type ItemVerdict } from './types.ts';

type Check = (want: ExpectedIssue, got: ReadBackIssue) => Difference[];

const NONE = '(none)';
const show = (v: string | number | null | undefined) =>
  v === undefined || v === null || v === '' ? NONE : auditValue(String(v));
type Shown = Parameters<typeof show>[0];
const differ = (field: string, expected: Shown, actual: Shown): Difference => ({
  field,
  expected: show(expected),
  actual: show(actual),
});
const same = (a: string | undefined | null, b: string | undefined | null) =>
  (a ?? '').toLowerCase() === (b ?? '').toLowerCase();
const sortedList = (l: readonly string[]) => [...l].sort((a, b) => a.localeCompare(b)).join(', ');

/** A scalar both sides agree on: Jira answers options as `{value}`, people as `{accountId}`, dates with a zone. */
export function canonical(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(canonical).sort().join(', ');
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of ['value', 'accountId', 'name', 'key', 'id'])
      if (o[k] !== undefined && o[k] !== null) return canonical(o[k]);
    return JSON.stringify(value);
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  }
  return String(value);
}

/** An imported issue's type is the name its file carried (the importer takes names); a REST one's its id. */
const type: Check = (want, got) =>
  (want.imported ? same(want.type.name, got.typeName) : want.type.id === got.typeId)
    ? []
    : [differ('type', want.type.name, got.typeName ?? got.typeId)];

const status: Check = (want, got) =>
  want.status === undefined || same(want.status, got.status)
    ? []
    : [differ('status', want.status, got.status)];

const summary: Check = (want, got) =>
  want.summary === got.summary ? [] : [differ('summary', want.summary, got.summary)];

/** Jira's labels are case-sensitive (the engine dedupes tags ignoring case, and keeps the first spelling). */
const labels: Check = (want, got) => {
  const a = sortedList(want.labels);
  const b = sortedList(got.labels);
  return a === b ? [] : [differ('labels', a, b)];
};

const components: Check = (want, got) => {
  const a = sortedList(want.components.map((c) => c.toLowerCase()));
  const b = sortedList(got.components.map((c) => c.toLowerCase()));
  return a === b ? [] : [differ('components', sortedList(want.components), sortedList(got.components))];
};

const priority: Check = (want, got) =>
  want.priority === undefined || same(want.priority, got.priority)
    ? []
    : [differ('priority', want.priority, got.priority)];

const people: Check = (want, got) => [
  ...(want.assignee === undefined || want.assignee === got.assignee
    ? []
    : [differ('assignee', want.assignee, got.assignee)]),
  ...(want.reporter === undefined || want.reporter === got.reporter
    ? []
    : [differ('reporter', want.reporter, got.reporter)]),
];

const parent: Check = (want, got) =>
  want.parentKey === got.parentKey ? [] : [differ('parent', want.parentKey, got.parentKey)];

const links: Check = (want, got) => {
  const left = [...got.links];
  const out: Difference[] = [];
  for (const l of want.links) {
    const i = left.findIndex((g) => g.toLowerCase() === l.toLowerCase());
    if (i >= 0) left.splice(i, 1);
    else out.push(differ('links', l, NONE));
  }
  for (const extra of left) out.push(differ('links', NONE, extra));
  return out;
};

/** A size below 0 is one the source does not tell (an inline image): the name alone then. */
const fileLabel = (f: FileFacts) => (f.size < 0 ? f.name : `${f.name} (${f.size} bytes)`);
const extensionOf = (name: string) => /\.[^.]*$/.exec(name)?.[0]?.toLowerCase() ?? '';

/** Jira keeps a file's name and size; one renamed on a name clash keeps its size and its kind of file. */
function attachmentsCheck(isEngineFile: (name: string) => boolean): Check {
  return (want, got) => {
    const left = got.attachments.filter((a) => !isEngineFile(a.name));
    const take = (match: (a: FileFacts) => boolean) => {
      const i = left.findIndex(match);
      return i >= 0 ? left.splice(i, 1) : undefined;
    };
    const missing = want.attachments.filter(
      (f) => !take((a) => a.name === f.name && (f.size < 0 || a.size === f.size)),
    );
    const out: Difference[] = [];
    for (const f of missing) {
      if (take((a) => a.size === f.size && extensionOf(a.name) === extensionOf(f.name))) continue;
      // A file of the same name with other bytes is one difference, not one missing and one extra.
      const replaced = take((a) => a.name === f.name)?.[0];
      out.push(differ('attachments', fileLabel(f), replaced ? fileLabel(replaced) : NONE));
    }
    for (const extra of left) out.push(differ('attachments', NONE, fileLabel(extra)));
    return out;
  };
}

/** The text of a comment's first block: the header that names the ADO comment (author, date, id). */
function headerOf(doc: unknown): string {
  const first = (doc as { content?: AdfNode[] } | undefined)?.content?.[0];
  const text = (n: AdfNode | undefined): string =>
    n ? (n.text ?? '') + (Array.isArray(n.content) ? n.content.map(text).join('') : '') : '';
  return text(first).replace(/\s+/g, ' ').trim();
}

/**
 * Each ADO comment is matched to the Jira comment with its header; one missing is one difference (the count
 * follows from them), one present is compared as a document. Comments people added in Jira are not the run's.
 */
const comments: Check = (want, got) => {
  const byHeader = new Map<string, unknown>();
  for (const body of got.comments) {
    const h = headerOf(body);
    if (h !== '' && !byHeader.has(h)) byHeader.set(h, body);
  }
  const out: Difference[] = [];
  for (const c of want.comments) {
    const body = byHeader.get(headerOf(c.doc));
    if (body === undefined) {
      out.push(
        differ('comments', `comment ${c.id}: ${headerOf({ content: c.doc.content.slice(1) }) || NONE}`, NONE),
      );
      continue;
    }
    const rest = (d: unknown) => ({
      ...(d as object),
      content: (d as { content?: unknown[] }).content?.slice(1),
    });
    for (const d of compareDocuments('comments', rest(c.doc), rest(body)))
      out.push({ ...d, expected: auditValue(`comment ${c.id}: ${d.expected}`) });
  }
  return out;
};

const millis = (date: string | undefined) =>
  date === undefined ? Number.NaN : Date.parse(instantOf(date) ?? '');

/**
 * An imported issue's dates as its file set them: created and the resolution date to the millisecond (the
 * resolution date absent when the file set none), `updated` at or after the file's, as the REST phases' writes
 * after the import (sprint, parent, links, files) move it on by design.
 */
const dates: Check = (want, got) => {
  const facts = want.imported;
  if (!facts) return [];
  const out: Difference[] = [];
  if (facts.created !== undefined && millis(facts.created) !== millis(got.created))
    out.push(differ('created', instantOf(facts.created), instantOf(got.created)));
  if (facts.updated !== undefined && !(millis(got.updated) >= millis(facts.updated)))
    out.push(differ('updated', `${instantOf(facts.updated)} or later`, instantOf(got.updated)));
  const resolved = facts.resolutionDate;
  if (
    resolved === undefined
      ? got.resolutionDate !== undefined
      : millis(resolved) !== millis(got.resolutionDate)
  )
    out.push(differ('resolutionDate', instantOf(resolved), instantOf(got.resolutionDate)));
  return out;
};

/**
 * An imported issue's comments as its file carried them, with no header line to match them by: each is the Jira
 * comment of its date (the importer keeps it), else the one of its author and text whose date moved (one
 * `comments.created` difference); then its author (unless its person has no Jira account) and its document.
 * One missing is one `comments` difference. Comments with no counterpart in the file (the REST phases' notes by
 * the service account, people's own) are not the import's.
 */
const importedComments: Check = (want, got) => {
  const facts = want.imported;
  if (!facts) return [];
  const left = got.commentFacts.map((c, i) => ({ ...c, i }));
  const take = (match: (c: (typeof left)[number]) => boolean) => {
    const at = left.findIndex(match);
    return at >= 0 ? left.splice(at, 1)[0] : undefined;
  };
  const out: Difference[] = [];
  facts.comments.forEach((c, i) => {
    const label = `comment ${i + 1} (${instantOf(c.created)})`;
    const text = documentFacts(c.body).text;
    let found = take((g) => millis(g.created) === millis(c.created));
    if (!found) {
      found = take(
        (g) =>
          (c.author === undefined || g.author === c.author) &&
          compareDocuments('comments', c.body, g.body).length === 0,
      );
      if (found)
        out.push(
          differ('comments.created', `comment ${i + 1}: ${instantOf(c.created)}`, instantOf(found.created)),
        );
    }
    if (!found) {
      out.push(differ('comments', `${label}: ${text || NONE}`, NONE));
      return;
    }
    if (c.author !== undefined && c.author !== found.author)
      out.push(differ('comments.author', `${label}: ${c.author}`, found.author));
    for (const d of compareDocuments('comments', c.body, found.body))
      out.push({ ...d, expected: auditValue(`${label}: ${d.expected}`) });
  });
  return out;
};

/** A history entry's changes as one line: `status: To Do → In Progress; assignee: (none) → Ana Silva`. */
const changesText = (items: readonly ChangeFact[]) =>
  items.map((i) => `${i.field}: ${i.fromString ?? NONE} → ${i.toString ?? NONE}`).join('; ');
/** Two entries' changes alike: the same fields (Jira's name or id, any case), from and to the same text, in any order. */
const sameChanges = (a: readonly ChangeFact[], b: readonly ChangeFact[]) => {
  const key = (items: readonly ChangeFact[]) =>
    items.map((i) => `${i.field.toLowerCase()}\u0000${i.fromString ?? ''}\u0000${i.toString ?? ''}`).sort();
  return JSON.stringify(key(a)) === JSON.stringify(key(b));
};

/**
 * An imported issue's change history as its file carried it (`history[]` against `GET /issue/{key}/changelog`):
 * each entry is the changelog entry of its date, else the one of its author and changes whose date moved (one
 * `history.created` difference); then its author (unless its person has no Jira account: none is checked) and its
 * changes (`history`: the fields and their values as text, which Jira shows; the ids beside them are the site's).
 * One missing is one `history` difference. Entries with no counterpart in the file (the REST phases' writes after
 * the import, by the service account: sprint moves, a parent set) are not the import's. Not checked when the
 * changelog was not read.
 */
const importedHistory: Check = (want, got) => {
  const facts = want.imported;
  if (!facts || !got.changelog) return [];
  const left = got.changelog.map((c) => c);
  const take = (match: (c: (typeof left)[number]) => boolean) => {
    const at = left.findIndex(match);
    return at >= 0 ? left.splice(at, 1)[0] : undefined;
  };
  const out: Difference[] = [];
  facts.history.forEach((h, i) => {
    const label = `change ${i + 1} (${instantOf(h.created)})`;
    const authorOk = (g: (typeof left)[number]) => h.author === undefined || g.author === h.author;
    // The entry of its date that matches whole first (Jira may hold several at one instant), then any of its date.
    let found =
      take((g) => millis(g.created) === millis(h.created) && authorOk(g) && sameChanges(h.items, g.items)) ??
      take((g) => millis(g.created) === millis(h.created));
    if (!found) {
      found = take((g) => authorOk(g) && sameChanges(h.items, g.items));
      if (found)
        out.push(
          differ('history.created', `change ${i + 1}: ${instantOf(h.created)}`, instantOf(found.created)),
        );
    }
    if (!found) {
      out.push(differ('history', `${label}: ${changesText(h.items)}`, NONE));
      return;
    }
    if (h.author !== undefined && h.author !== found.author)
      out.push(differ('history.author', `${label}: ${h.author}`, found.author));
    if (!sameChanges(h.items, found.items))
      out.push(differ('history', `${label}: ${changesText(h.items)}`, changesText(found.items)));
  });
  return out;
};

const sprint: Check = (want, got) => {
  const wanted = want.sprint === null ? [] : [want.sprint];
  return sortedList(wanted) === sortedList(got.sprints)
    ? []
    : [differ('sprint', sortedList(wanted), sortedList(got.sprints))];
};

const estimates: Check = (want, got) => {
  const out: Difference[] = [];
  if (want.storyPoints !== undefined && (want.storyPoints ?? null) !== (got.storyPoints ?? null))
    out.push(differ('storyPoints', want.storyPoints, got.storyPoints));
  if (want.originalEstimateSeconds !== got.originalEstimateSeconds)
    out.push(differ('originalEstimate', want.originalEstimateSeconds, got.originalEstimateSeconds));
  // Without a remaining estimate Jira derives one from the original estimate: by design.
  const remainingOk =
    want.remainingEstimateSeconds !== undefined
      ? want.remainingEstimateSeconds === got.remainingEstimateSeconds
      : got.remainingEstimateSeconds === undefined ||
        got.remainingEstimateSeconds === want.originalEstimateSeconds;
  if (!remainingOk)
    out.push(differ('remainingEstimate', want.remainingEstimateSeconds, got.remainingEstimateSeconds));
  return out;
};

const customFields: Check = (want, got) =>
  Object.entries(want.customFields).flatMap(([id, value]) =>
    canonical(value) === canonical(got.fields[id])
      ? []
      : [differ(`custom:${id}`, canonical(value), canonical(got.fields[id]))],
  );

const description: Check = (want, got) => compareDocuments('description', want.description, got.description);

/** The item's verdict: `pass`, or every difference with both values. */
export function compareIssue(
  want: ExpectedIssue,
  got: ReadBackIssue,
  isEngineFile: (name: string) => boolean = () => false,
): ItemVerdict {
  const checks: Check[] = [
    type,
    status,
    summary,
    description,
    labels,
    components,
    priority,
    people,
    parent,
    links,
    attachmentsCheck(isEngineFile),
    ...(want.imported ? [importedComments, importedHistory, dates] : [comments]),
    sprint,
    estimates,
    customFields,
  ];
  const differences = checks.flatMap((check) => check(want, got));
  return {
    sourceId: want.sourceId,
    key: want.key,
    result: differences.length === 0 ? 'pass' : 'differs',
    differences,
    notes: want.notes,
  };
}
