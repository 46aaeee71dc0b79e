/**
 * An Azure DevOps work item's revision history as one self-contained HTML page, attached to its Jira issue in
 * phase 5 (attachments.ts). One section per revision, oldest first: its number, when, who (display name and
 * e-mail), the comment said in it (System.History), and every field it changed, old -> new. Bookkeeping fields
 * that change with every revision are left out. Pure: revisions in, a string out, the same string for the same
 * revisions (no clock, no locale).
 *
 * Nothing from Azure DevOps reaches the page as markup: HTML field values are turned into plain text (block
 * ends as line breaks, images as "[image]") and every value is escaped; a Content-Security-Policy forbids
 * scripts and remote loads besides.
 */
import type { AdoWorkItem } from '#trackers/ado/client.ts';

/** Changed with every revision, or shown in the section's heading instead of its table. */
export const NOISE_FIELDS: ReadonlySet<string> = new Set([
  'System.Id',
  'System.Rev',
  // Ids and the node name the reporting revisions API adds beside the paths the page shows.
  'System.AreaId',
  'System.IterationId',
  'System.NodeName',
  'System.Watermark',
  'System.AuthorizedDate',
  'System.RevisedDate',
  'System.PersonId',
  'System.AuthorizedAs',
  'System.ChangedDate',
  'System.ChangedBy',
  'System.History',
]);

const PREFIX = 'ado-history-';

/** `ado-history-<id>-r<lastRev>.html`: the last revision in the name, so a file of that name is up to date. */
export const historyFileName = (id: number, lastRev: number): string => `${PREFIX}${id}-r${lastRev}.html`;

/** Whether an attachment is a history file of this item (any revision; the plain name too). */
export function isHistoryFileOf(id: number, fileName: string): boolean {
  return new RegExp(`^${PREFIX}${id}(-r\\d+)?\\.html$`).test(fileName);
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[body.toLowerCase()] ?? whole;
  });
}

/**
 * What comes before the last `>` of `s`, and the rest. A tag pattern (`<[^>]*>`) matches only in the first part;
 * run on the whole, a backtracking engine scans to the end from every `<` with no `>` after it, which is
 * quadratic in a field of such `<` (any contributor can write one).
 */
function splitAtLastTag(s: string): [string, string] {
  const end = s.lastIndexOf('>') + 1;
  return [s.slice(0, end), s.slice(end)];
}

/** `pattern` (global, a tag ending in `>`) replaced in `s`, in time linear in its length. */
function replaceTags(s: string, pattern: RegExp, by: string): string {
  const [tags, rest] = splitAtLastTag(s);
  return tags.replace(pattern, by) + rest;
}

const looksLikeHtml = (s: string) => /<\/?[a-z][^>]*>/i.test(splitAtLastTag(s)[0]);

/** Plain text even when it holds something tag-like ("Crash when <b> is pasted"): escaped as it is. */
const PLAIN_TEXT_FIELDS: ReadonlySet<string> = new Set(['System.Title', 'System.Tags']);

/**
 * `<script>` and `<style>` elements with their content, each up to the first closing tag of its name after it (an
 * element never closed is left to lose only its tags). One pass: each start looks up the next closing tag of
 * its name among those found beforehand, instead of scanning for it (a lazy regex scans to the end from every
 * start with no closing after it).
 */
function withoutScripts(html: string): string {
  const closings = new Map<string, { at: number; end: number }[]>();
  for (const m of html.matchAll(/<\/(script|style)\s*>/gi)) {
    const name = (m[1] as string).toLowerCase();
    const list = closings.get(name) ?? [];
    list.push({ at: m.index, end: m.index + m[0].length });
    closings.set(name, list);
  }
  const next = new Map<string, number>();
  const parts: string[] = [];
  let kept = 0;
  for (const m of html.matchAll(/<(script|style)\b/gi)) {
    if (m.index < kept) continue; // inside an element already removed
    const name = (m[1] as string).toLowerCase();
    const list = closings.get(name) ?? [];
    let i = next.get(name) ?? 0;
    while (i < list.length && (list[i] as { at: number }).at < m.index) i++;
    next.set(name, i);
    const closing = list[i];
    if (!closing) continue;
    parts.push(html.slice(kept, m.index));
    kept = closing.end;
  }
  parts.push(html.slice(kept));
  return parts.join('');
}

/** Blanks (spaces, tabs) at the end of each line, removed by a loop (a regex backtracks on a long run of them). */
function trimLineEnds(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let end = line.length;
      while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
      return line.slice(0, end);
    })
    .join('\n');
}

/** An HTML field's text as a reader sees it; still to be escaped. Linear in the field's length, whatever it holds. */
export function htmlToText(html: string): string {
  let text = withoutScripts(html).replace(/<br\s*\/?>/gi, '\n');
  text = replaceTags(text, /<img\b[^>]*>/gi, '[image]');
  text = replaceTags(text, /<li\b[^>]*>/gi, '\n• ')
    .replace(/<\/(p|div|tr|h[1-6]|pre|blockquote|table|ul|ol)\s*>/gi, '\n')
    .replace(/<\/t[dh]\s*>/gi, '\t');
  text = replaceTags(text, /<[^>]*>/g, '');
  return trimLineEnds(decodeEntities(text))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

interface Identity {
  displayName?: string;
  uniqueName?: string;
}

const isIdentity = (v: unknown): v is Identity =>
  typeof v === 'object' && v !== null && ('displayName' in v || 'uniqueName' in v);

/** "Display Name <e-mail>"; either alone when the other is missing or the same. */
export function personOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!isIdentity(v)) return '';
  const name = v.displayName?.trim() ?? '';
  const mail = v.uniqueName?.trim() ?? '';
  if (name && mail && name !== mail) return `${name} <${mail}>`;
  return name || mail;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** `2024-03-05 14:07:09 UTC`, whatever the reader's locale; a string that is no date is kept. */
export function dateOf(v: unknown): string {
  if (typeof v !== 'string' || !ISO_DATE.test(v)) return typeof v === 'string' ? v : '';
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? v : `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A field value as plain text (not yet escaped); undefined when the field has none. */
function textOf(v: unknown, field = ''): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') {
    if (ISO_DATE.test(v)) return dateOf(v);
    return looksLikeHtml(v) && !PLAIN_TEXT_FIELDS.has(field) ? htmlToText(v) : v;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isIdentity(v)) return personOf(v);
  return JSON.stringify(v);
}

/** What makes two values the same: identities by who they are (their links and avatars may differ). */
function keyOf(v: unknown): string {
  if (v === undefined || v === null || v === '') return '';
  if (isIdentity(v)) return `identity:${personOf(v)}`;
  return typeof v === 'string' ? `s:${v}` : `j:${JSON.stringify(v)}`;
}

export interface FieldChange {
  field: string;
  from?: string;
  to?: string;
}

export interface RevisionEntry {
  rev: number;
  changedDate: string;
  changedBy: string;
  comment?: string;
  changes: FieldChange[];
}

const revOf = (r: AdoWorkItem, index: number): number => {
  const n = Number(r.rev ?? r.fields?.['System.Rev']);
  return Number.isFinite(n) && n > 0 ? n : index + 1;
};

/** The revisions as sections' contents, oldest first (the page's model; exported for tests). */
export function revisionEntries(revisions: readonly AdoWorkItem[]): RevisionEntry[] {
  const sorted = revisions.map((r, i) => ({ r, rev: revOf(r, i) })).sort((a, b) => a.rev - b.rev);
  let before: Record<string, unknown> = {};
  return sorted.map(({ r, rev }) => {
    const fields = r.fields ?? {};
    const names = [...new Set([...Object.keys(before), ...Object.keys(fields)])]
      .filter((f) => !NOISE_FIELDS.has(f))
      .sort();
    const changes: FieldChange[] = [];
    for (const field of names) {
      if (keyOf(before[field]) === keyOf(fields[field])) continue;
      changes.push({ field, from: textOf(before[field], field), to: textOf(fields[field], field) });
    }
    const history = fields['System.History'];
    const comment = typeof history === 'string' && history.trim() ? textOf(history) : undefined;
    before = fields;
    return {
      rev,
      changedDate: dateOf(fields['System.ChangedDate']),
      changedBy: personOf(fields['System.ChangedBy']),
      ...(comment ? { comment } : {}),
      changes,
    };
  });
}

const STYLE = `body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#172b4d}
h1{font-size:1.4em}h2{font-size:1.1em;margin:0 0 .3em}
section{border-top:1px solid #dfe1e6;padding:1em 0}
.meta{color:#5e6c84;margin:0 0 .6em}
.comment{background:#f4f5f7;border-left:3px solid #0052cc;padding:.5em .8em;margin:.5em 0;white-space:pre-wrap}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #dfe1e6;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f4f5f7}td{white-space:pre-wrap;word-break:break-word}td.field{font-family:monospace;white-space:nowrap}
.none{color:#97a0af;font-style:italic}`;

const cell = (v: string | undefined) =>
  v === undefined ? '<td class="none">(empty)</td>' : `<td>${escapeHtml(v)}</td>`;

function sectionOf(e: RevisionEntry, first: boolean): string {
  const heading = `Revision ${e.rev}${first ? ' (created)' : ''}`;
  const when = e.changedDate ? escapeHtml(e.changedDate) : '<span class="none">(no date)</span>';
  const who = e.changedBy ? escapeHtml(e.changedBy) : '<span class="none">(unknown)</span>';
  const parts = [
    `<section id="rev-${e.rev}">`,
    `<h2>${heading}</h2>`,
    `<p class="meta">${when} by ${who}</p>`,
  ];
  if (e.comment) parts.push(`<div class="comment">${escapeHtml(e.comment)}</div>`);
  if (e.changes.length > 0) {
    parts.push('<table><thead><tr><th>Field</th><th>Old</th><th>New</th></tr></thead><tbody>');
    for (const c of e.changes)
      parts.push(`<tr><td class="field">${escapeHtml(c.field)}</td>${cell(c.from)}${cell(c.to)}</tr>`);
    parts.push('</tbody></table>');
  } else if (!e.comment) {
    parts.push('<p class="none">No field changed (a link or attachment change).</p>');
  }
  parts.push('</section>');
  return parts.join('\n');
}

/** The page: every revision given, oldest first. */
export function historyHtml(revisions: readonly AdoWorkItem[]): string {
  const entries = revisionEntries(revisions);
  const last = [...revisions].sort((a, b) => revOf(a, 0) - revOf(b, 0)).at(-1);
  const id = last?.id ?? '';
  const title = typeof last?.fields?.['System.Title'] === 'string' ? last.fields['System.Title'] : '';
  const type =
    typeof last?.fields?.['System.WorkItemType'] === 'string' ? last.fields['System.WorkItemType'] : '';
  const name = `${type ? `${type} ` : ''}#${id}${title ? `: ${title}` : ''}`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${escapeHtml(`Azure DevOps history of ${name}`)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(`Azure DevOps history of ${name}`)}</h1>`,
    `<p class="meta">${entries.length} revision(s), oldest first. Each lists the fields it changed (old -&gt; new) and the comment made in it.</p>`,
    ...entries.map((e, i) => sectionOf(e, i === 0)),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
