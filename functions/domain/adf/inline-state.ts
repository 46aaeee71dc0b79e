/**
 * The marks an element adds for its content: from its tag (b, i, u, s, code, sub/sup...) and from the inline
 * styles Word, Outlook and ADO's editor write (font-weight, font-style, text-decoration, vertical-align).
 * Colours and fonts are deliberately not carried over (see index.ts).
 */
import { type Element, styleOf } from './dom.ts';
import { withMark, withoutMark } from './marks.ts';
import type { AdfMark } from './types.ts';

const STRONG: AdfMark = { type: 'strong' };
const EM: AdfMark = { type: 'em' };
const UNDERLINE: AdfMark = { type: 'underline' };
const STRIKE: AdfMark = { type: 'strike' };
const CODE: AdfMark = { type: 'code' };

const TAG_MARKS: Record<string, AdfMark> = {
  b: STRONG,
  strong: STRONG,
  i: EM,
  em: EM,
  cite: EM,
  dfn: EM,
  var: EM,
  u: UNDERLINE,
  ins: UNDERLINE,
  s: STRIKE,
  strike: STRIKE,
  del: STRIKE,
  code: CODE,
  kbd: CODE,
  samp: CODE,
  tt: CODE,
  sub: { type: 'subsup', attrs: { type: 'sub' } },
  sup: { type: 'subsup', attrs: { type: 'sup' } },
};

export function marksFor(el: Element, marks: AdfMark[]): AdfMark[] {
  const tagMark = TAG_MARKS[el.name];
  let out = tagMark ? withMark(marks, tagMark) : marks;
  if (!el.attribs.style) return out;
  const style = styleOf(el);
  const weight = style.get('font-weight');
  if (weight) {
    if (/^(bold|bolder|[6-9]00)$/.test(weight)) out = withMark(out, STRONG);
    else if (/^(normal|lighter|[1-5]00)$/.test(weight)) out = withoutMark(out, 'strong');
  }
  const fontStyle = style.get('font-style');
  if (fontStyle) out = /^(italic|oblique)/.test(fontStyle) ? withMark(out, EM) : withoutMark(out, 'em');
  const decoration = style.get('text-decoration-line') ?? style.get('text-decoration');
  if (decoration) {
    if (decoration.includes('underline')) out = withMark(out, UNDERLINE);
    if (decoration.includes('line-through')) out = withMark(out, STRIKE);
    if (decoration.startsWith('none')) out = withoutMark(withoutMark(out, 'underline'), 'strike');
  }
  const align = style.get('vertical-align');
  if (align === 'super' || align === 'sub')
    out = withMark(out, { type: 'subsup', attrs: { type: align === 'super' ? 'sup' : 'sub' } });
  return out;
}

/** Content a browser would not show (`display:none`, the `hidden` attribute): Outlook hides markup this way. */
export function isHidden(el: Element): boolean {
  if (el.attribs.hidden !== undefined) return true;
  if (!el.attribs.style) return false;
  return styleOf(el).get('display')?.startsWith('none') ?? false;
}
