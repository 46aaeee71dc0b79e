/**
 * Work item references (`#123` in text, or Azure DevOps links to `/_workitems/edit/123`) rewritten to the
 * migrated Jira issue. With an absolute issue URL from the caller a reference becomes an inlineCard (Jira
 * shows it as a smart link with the issue's summary and status); otherwise it is the issue key as text, linked
 * to the site-relative `/browse/KEY`, which Jira renders as a plain link without any smart-link lookup.
 */

import type { Env } from './env.ts';
import { withMark } from './marks.ts';
import { link, text } from './nodes.ts';
import type { AdfMark, AdfNode } from './types.ts';

const SAFE_HREF = /^(?:https?:\/\/|mailto:)/i;
const WORK_ITEM_URL = /\/_workitems\/edit\/(\d{1,9})(?:[/?#]|$)/i;
/** `#` + digits, not inside a word, a URL fragment or a path (`C#1`, `page#12`, `/#/3` are not references). */
const REFERENCE = /(?<![\p{L}\p{N}_&#/])#(\d{1,9})(?![\p{L}\p{N}_])/gu;

/** Only http(s) and mailto links are kept: others are relative to ADO, script or unsafe for ADF. */
export function safeHref(href: string | undefined): string | undefined {
  const h = href?.trim();
  return h && SAFE_HREF.test(h) ? h : undefined;
}

export function workItemIdFromUrl(href: string | undefined): number | undefined {
  const m = href ? WORK_ITEM_URL.exec(href) : null;
  return m ? Number(m[1]) : undefined;
}

export function issueKeyFor(id: number, env: Env): string | undefined {
  const { workItemKey } = env.ctx;
  if (!workItemKey) return undefined;
  const key = workItemKey(id);
  if (!key) env.warn('unresolved-reference', `work item #${id} has no migrated Jira issue; kept as written`);
  return key || undefined;
}

/** Where a link to the issue points: the caller's absolute URL, else the site-relative browse path. */
export const issueHref = (key: string, env: Env) =>
  safeHref(env.ctx.issueUrl?.(key)) ?? `/browse/${encodeURIComponent(key)}`;

/** The node standing for a resolved reference (marks apply to the text form only: inlineCards take none). */
export function referenceNode(key: string, marks: AdfMark[], env: Env): AdfNode {
  const url = safeHref(env.ctx.issueUrl?.(key));
  if (url) return { type: 'inlineCard', attrs: { url } };
  return text(key, withMark(marks, link(issueHref(key, env))));
}

/** A reference with no key yet: `#123` linked where `ctx.referenceHref` points, if it gives a safe address. */
export function pendingReference(id: number, marks: AdfMark[], env: Env): AdfNode | undefined {
  const href = safeHref(env.ctx.referenceHref?.(id));
  return href ? text(`#${id}`, withMark(marks, link(href))) : undefined;
}

/** The work item ids `#123` references in text name, as the converter finds them (scan.ts). */
export function referencesIn(value: string): number[] {
  return value.includes('#') ? [...value.matchAll(REFERENCE)].map((m) => Number(m[1])) : [];
}

/** Text with its `#123` references resolved; unresolved ones stay as written. */
export function textWithReferences(value: string, marks: AdfMark[], env: Env): AdfNode[] {
  if (!env.ctx.workItemKey || !value.includes('#')) return [text(value, marks)];
  const out: AdfNode[] = [];
  let at = 0;
  for (const m of value.matchAll(REFERENCE)) {
    const id = Number(m[1]);
    const key = issueKeyFor(id, env);
    const node = key ? referenceNode(key, marks, env) : pendingReference(id, marks, env);
    if (!node) continue;
    if (m.index > at) out.push(text(value.slice(at, m.index), marks));
    out.push(node);
    at = m.index + m[0].length;
  }
  if (at < value.length) out.push(text(value.slice(at), marks));
  return out;
}
