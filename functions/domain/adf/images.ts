/**
 * `<img>`: a resolved image becomes a mediaSingle holding the uploaded Jira attachment; an unresolved one a
 * paragraph with its file name linked to the original src (the reader can still reach it) and an
 * `unresolved-image` warning. Either way a block: it splits the paragraph the image sat in, so the text
 * around it does not run into the file name.
 *
 * An image inside a link (`<a href><img></a>`) keeps the link: on the media node, where ADF puts it (the
 * schema allows a link mark on media inside mediaSingle, as Jira's editor writes "link on image"), or on the
 * placeholder's name, which then goes where clicking the image went.
 */
import { cleanText } from './chars.ts';
import { attr, type Element } from './dom.ts';
import type { Env } from './env.ts';
import { legalTextMarks, withMark } from './marks.ts';
import { link, paragraph, text } from './nodes.ts';
import { safeHref } from './references.ts';
import type { AdfMark, AdfNode } from './types.ts';

const positive = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;

export function convertImage(el: Element, marks: AdfMark[], env: Env): AdfNode | undefined {
  const src = attr(el, 'src')?.trim();
  if (!src) return undefined;
  const alt = attr(el, 'alt')?.trim();
  const hit = env.ctx.image?.(src);
  const enclosing = marks.find((m) => m.type === 'link');
  if (hit?.mediaId) {
    const attrs: Record<string, unknown> = { type: 'file', id: hit.mediaId, collection: '' };
    const altText = hit.alt ?? alt;
    if (altText) attrs.alt = altText;
    if (positive(hit.width)) attrs.width = hit.width;
    if (positive(hit.height)) attrs.height = hit.height;
    const media: AdfNode = { type: 'media', attrs, ...(enclosing ? { marks: [enclosing] } : {}) };
    // A caller deciding later whether the image shows (deferred-images.ts) keeps the form it has without.
    if (env.ctx.withoutMedia) {
      const without = unresolvedImage(src, alt, marks);
      env.ctx.withoutMedia(hit.mediaId, without.block, without.warning);
    }
    return { type: 'mediaSingle', attrs: { layout: 'center' }, content: [media] };
  }
  const without = unresolvedImage(src, alt, marks);
  env.warn('unresolved-image', without.warning);
  return without.block;
}

/** An image with no uploaded attachment: its name, linked to its source (or keeping the enclosing link). */
function unresolvedImage(
  src: string,
  alt: string | undefined,
  marks: AdfMark[],
): { block: AdfNode; warning: string } {
  const shown = src.length > 120 ? `${src.slice(0, 117)}...` : src;
  const href = safeHref(src);
  const label = cleanText(imageLabel(src, alt)) || 'image';
  if (marks.some((m) => m.type === 'link'))
    return {
      block: paragraph([text(label, legalTextMarks(marks))]),
      warning: `image ${shown} has no uploaded attachment; its name keeps the enclosing link`,
    };
  return {
    block: paragraph([text(label, legalTextMarks(href ? withMark(marks, link(href)) : marks))]),
    warning: `image ${shown} has no uploaded attachment; linked to its source instead`,
  };
}

/** A readable name: ADO's `?fileName=` parameter, else the last path segment, else the alt text. */
export function imageLabel(src: string, alt: string | undefined): string {
  if (!src.toLowerCase().startsWith('data:')) {
    try {
      const url = new URL(src, 'https://invalid.example');
      const fileName = url.searchParams.get('fileName')?.trim();
      if (fileName) return fileName;
      const last = decodeURIComponent(url.pathname.split('/').filter(Boolean).at(-1) ?? '').trim();
      if (last) return last;
    } catch {
      // An unparsable src (bad %-escape): fall back to the alt text.
    }
  }
  return alt || 'image';
}
