/**
 * An Azure DevOps comment as a Jira comment: a header line naming the original author and date and carrying
 * the marker (the ADO comment id) that makes posting idempotent, then the body converted to ADF.
 *
 *   Originally posted by Ava Adams on 12 Mar 2026, 10:04 UTC (Azure DevOps comment 123)
 *
 * The header is the comment's first paragraph, in italics. Dates are UTC: the reader's time zone is unknown.
 */
import { DomUtils, parseDocument } from 'htmlparser2';
import {
  type AdfDoc,
  type AdfNode,
  type AdfWarning,
  type HtmlToAdfContext,
  htmlToAdf,
  textToAdf,
  validateAdf,
} from '#domain/adf/index.ts';
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

export function commentHeader(c: AdoComment): string {
  const author = c.createdBy?.displayName?.trim() || c.createdBy?.uniqueName?.trim() || 'an unknown user';
  const date = formatCommentDate(c.createdDate);
  return `Originally posted by ${author} ${date ? `on ${date}` : 'on an unknown date'} (Azure DevOps comment ${c.id})`;
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

export interface CommentDocument {
  doc: AdfDoc;
  /** The same comment as plain text under the header: sent when the converted one is refused. */
  plain: () => AdfDoc;
  warnings: AdfWarning[];
  /** Why the converted body was replaced by its text (the validator's first problem). */
  fellBackToText?: string;
}

export function plainTextOf(html: string): string {
  return DomUtils.textContent(parseDocument(html ?? '')).trim();
}

export function commentDocument(c: AdoComment, ctx: HtmlToAdfContext): CommentDocument {
  const header = commentHeader(c);
  const warnings: AdfWarning[] = [];
  const plain = () => textToAdf(`${header}\n\n${plainTextOf(c.text ?? '')}`);
  const body = htmlToAdf(c.text ?? '', { ...ctx, warn: (w) => warnings.push(w) });
  const doc: AdfDoc = {
    type: 'doc',
    version: 1,
    content: [
      { type: 'paragraph', content: [{ type: 'text', text: header, marks: [{ type: 'em' }] }] },
      ...body.content,
    ],
  };
  const problems = validateAdf(doc);
  if (problems.length === 0) return { doc, plain, warnings };
  return { doc: plain(), plain, warnings, fellBackToText: problems[0] };
}
