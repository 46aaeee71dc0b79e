/**
 * A small footer ending a migrated document: a rule, then one italic paragraph of segments, each plain text or
 * a link (http(s) only; any other href leaves the segment as plain text). ADF allows `em` with `link` on text,
 * and a rule at the top level of a doc.
 */
import { withMark } from './marks.ts';
import { link, paragraph, rule, text } from './nodes.ts';
import { safeHref } from './references.ts';
import type { AdfNode } from './types.ts';

export interface FooterSegment {
  text: string;
  href?: string;
}

export function footerBlocks(segments: FooterSegment[]): AdfNode[] {
  const em = [{ type: 'em' }];
  const content = segments
    .filter((s) => s.text !== '')
    .map((s) => {
      const href = safeHref(s.href);
      return text(s.text, href ? withMark(em, link(href)) : em);
    });
  return content.length > 0 ? [rule(), paragraph(content)] : [];
}
