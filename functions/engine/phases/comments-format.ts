/**
 * An Azure DevOps comment as a Jira comment: a header line naming the original author and date and carrying
 * the marker (the ADO comment id) that makes posting idempotent, then the body converted to ADF. A comment a
 * Jira import carried has no header when its author has an account: `matchImported` finds it by its date and
 * author instead.
 *
 *   Originally posted by Ava Adams on 12 Mar 2026, 10:04 UTC (Azure DevOps comment 123)
 *
 * The header is the comment's first paragraph, in italics. Dates are UTC: the reader's time zone is unknown.
 *
 * Jira refuses a comment over 32,767 characters as it does a description (#domain/adf/limit.ts says how it is
 * measured). A longer one is fitted the same way: cut at a block boundary, the header kept (it is the first
 * block), and ended with a note naming `comment-<ADO comment id>.html`, the whole comment as a file, which the
 * comments phase attaches to the issue before posting the cut comment. Its plain-text fallback is fitted too.
 * A comment whose HTML is over the converter's limits (#domain/adf/html-limits.ts) is not parsed at all: its
 * body is a note naming that same file, attached the same way.
 */
import {
  type AdfDoc,
  type AdfNode,
  type AdfWarning,
  adfLength,
  cutNote,
  fitAdf,
  type HtmlToAdfContext,
  htmlLimitBreach,
  htmlText,
  htmlToAdf,
  JIRA_TEXT_LIMIT,
  textToAdf,
  unconvertedText,
  validateAdf,
} from '#domain/adf/index.ts';
import { fullCommentName } from '#domain/jira-import/index.ts';
import type { AdoComment } from '#trackers/ado/client.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MARKER = /\(Azure DevOps comment (\d+)\)/;

const pad = (n: number) => String(n).padStart(2, '0');

/** `12 Mar 2026, 10:04 UTC`; undefined for a missing or unreadable date. */
export function formatCommentDate(iso: string | undefined): string | undefined {
  const d = iso ? new Date(iso) : undefined;
  if (!d || Number.isNaN(d.getTime())) return undefined;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** The marker a comment's header carries: the ADO comment id (what finds the Jira comment again). */
export const markerText = (commentId: number) => `(Azure DevOps comment ${commentId})`;

export function commentHeader(c: AdoComment): string {
  const author = c.createdBy?.displayName?.trim() || c.createdBy?.uniqueName?.trim() || 'an unknown user';
  const date = formatCommentDate(c.createdDate);
  return `Originally posted by ${author} ${date ? `on ${date}` : 'on an unknown date'} ${markerText(c.id)}`;
}

function textOf(node: AdfNode | undefined): string {
  if (!node) return '';
  return (node.text ?? '') + (node.content ?? []).map(textOf).join('');
}

/** The ADO comment id a Jira comment body carries in its header, if it is one of ours. */
export function markerOf(body: unknown): number | undefined {
  const first = (body as { content?: AdfNode[] } | undefined)?.content?.[0];
  const m = MARKER.exec(textOf(first));
  return m ? Number(m[1]) : undefined;
}

/** A comment on the issue that carries no marker: an imported one keeps its original date and author. */
export interface UnmarkedComment {
  /** Jira's comment id. */
  id: string;
  /** Its date, in milliseconds. */
  created: number;
  authorId?: string;
}

/**
 * The ADO comments a Jira import put on the issue, found without a marker: the importer keeps a comment's author
 * and date, and the file gives a comment whose author has an account no header (docs/jira-import.md). An ADO
 * comment not found by its marker is the unmarked comment of the same instant (to the millisecond, as the file
 * wrote it), by the author's account when it is known; each unmarked comment stands for one ADO comment at most.
 * Each match is added to `posted` (ADO comment id -> Jira comment id) and taken off `unmarked`.
 */
export function matchImported(
  comments: readonly AdoComment[],
  posted: Map<number, string>,
  unmarked: UnmarkedComment[],
  accountOf: (c: AdoComment) => string | undefined,
): void {
  for (const c of comments) {
    if (unmarked.length === 0) return;
    if (posted.has(c.id)) continue;
    const at = Date.parse(c.createdDate ?? '');
    if (Number.isNaN(at)) continue;
    const account = accountOf(c);
    const i = unmarked.findIndex(
      (u) => u.created === at && (account === undefined || u.authorId === account),
    );
    const match = unmarked[i];
    if (!match) continue;
    posted.set(c.id, match.id);
    unmarked.splice(i, 1);
  }
}

export interface CommentDocument {
  doc: AdfDoc;
  /** The same comment as plain text under the header: sent when the converted one is refused. */
  plain: () => AdfDoc;
  warnings: AdfWarning[];
  /** Why the converted body was replaced by its text (the validator's first problem). */
  fellBackToText?: string;
  /**
   * Set when the comment is over Jira's limit: `doc` (and `plain()`) were cut with a note naming this file,
   * which holds the whole comment and must be attached to the issue first. `measured`: the uncut document.
   * Set too, without `measured`, when its HTML was not converted (over the converter's limits): the note that
   * stands for it names the file.
   */
  full?: { fileName: string; html: string; measured?: number };
}

/** The attachment holding the whole of an over-long comment (an imported run's files attach it the same way). */
export { fullCommentName };

const escapeHtml = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The whole comment as an HTML file: its header, then its HTML as Azure DevOps holds it. */
export function fullCommentHtml(c: AdoComment, workItemId?: number): string {
  const header = escapeHtml(commentHeader(c));
  const title = workItemId === undefined ? header : `#${workItemId}: ${header}`;
  return (
    `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n` +
    `<body>\n<p><em>${header}</em></p>\n${c.text ?? ''}\n</body></html>\n`
  );
}

/** A comment's text; HTML over the converter's limits is not parsed: the note's words naming `original`. */
export function plainTextOf(html: string, original?: string): string {
  const breach = htmlLimitBreach(html ?? '');
  if (breach) return unconvertedText(breach, original);
  return htmlText(html ?? '').trim();
}

export function commentDocument(c: AdoComment, ctx: HtmlToAdfContext, workItemId?: number): CommentDocument {
  const fileName = fullCommentName(c.id);
  const note = cutNote(
    `Jira takes at most ${JIRA_TEXT_LIMIT.toLocaleString('en-US')} characters in a comment: this one was cut here. ` +
      `The full comment is attached as ${fileName}.`,
  );
  let measured = 0;
  const fitToLimit = (doc: AdfDoc): { doc: AdfDoc; cut: boolean } => {
    const fitted = fitAdf(doc, note);
    if (fitted.cut) measured = Math.max(measured, adfLength(doc));
    return fitted;
  };
  const full = () => ({
    fileName,
    html: fullCommentHtml(c, workItemId),
    ...(measured > 0 ? { measured } : {}),
  });
  const header = commentHeader(c);
  const warnings: AdfWarning[] = [];
  const plainDoc = () => textToAdf(`${header}\n\n${plainTextOf(c.text ?? '', fileName)}`);
  const plain = () => fitToLimit(plainDoc()).doc;
  const body = htmlToAdf(c.text ?? '', { ...ctx, original: fileName, warn: (w) => warnings.push(w) });
  const unconverted = warnings.some((w) => w.code === 'unconverted-html');
  const doc: AdfDoc = {
    type: 'doc',
    version: 1,
    content: [
      { type: 'paragraph', content: [{ type: 'text', text: header, marks: [{ type: 'em' }] }] },
      ...body.content,
    ],
  };
  // The document Jira gets is checked (a cut keeps whole nodes of the full one).
  const fitted = fitToLimit(doc);
  const problems = validateAdf(fitted.doc);
  if (problems.length === 0)
    return { doc: fitted.doc, plain, warnings, ...(fitted.cut || unconverted ? { full: full() } : {}) };
  const text = fitToLimit(plainDoc());
  return {
    doc: text.doc,
    plain,
    warnings,
    fellBackToText: problems[0],
    ...(text.cut || unconverted ? { full: full() } : {}),
  };
}
