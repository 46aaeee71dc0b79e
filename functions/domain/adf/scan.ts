/**
 * What an HTML fragment names that only its caller can resolve, read off the DOM the converter walks (dom.ts)
 * without converting it: mentions, `#123` work item references and images. A caller learns from it which
 * people and issues to look up before it converts, and which images to upload.
 *
 * Mentions and references follow the converter's own rules (convert.ts): nothing under hidden, dropped or
 * metadata elements, nothing in a code block, a `#12` in code or link text left alone, a mention only for an
 * anchor whose text starts with `@`. A reference the converter would ask for is always found (an anchor to an
 * item is counted even when its resolved form would not be asked for its text). Images are every `<img>` with
 * a src, shown or not: each is a file of the item. HTML over the converter's limits (html-limits.ts) is not
 * parsed, here either: it names nothing.
 */
import { cleanText } from './chars.ts';
import { attr, type ChildNode, Element, parseHtml, Text, textContent } from './dom.ts';
import { DROPPED, METADATA } from './elements.ts';
import { htmlLimitBreach } from './html-limits.ts';
import { COLLAPSIBLE } from './inline-run.ts';
import { isHidden, marksFor } from './inline-state.ts';
import { hasMark } from './marks.ts';
import { referencesIn, safeHref, workItemIdFromUrl } from './references.ts';
import type { AdfMark } from './types.ts';

export interface ScannedMention {
  /** The Azure DevOps identity's GUID, as `data-vss-mention` carries it (absent when it carries none). */
  adoId?: string;
  displayName: string;
}

export interface ScannedImage {
  src: string;
  alt?: string;
}

export interface HtmlScan {
  mentions: ScannedMention[];
  /** Work item ids, each once, in document order. */
  references: number[];
  /** Each `<img>` with a src, in document order (one pasted twice is there twice). */
  images: ScannedImage[];
}

/** Where the walk stands: the marks in force (code and link text are literal) and whether anything shows. */
interface Place {
  node: ChildNode;
  marks: AdfMark[];
  shown: boolean;
}

const literal = (marks: AdfMark[]) => hasMark(marks, 'code') || hasMark(marks, 'link');

/** Mentions, references and images of `html` (see the module's comment). */
export function scanHtml(html: string): HtmlScan {
  const found: HtmlScan = { mentions: [], references: [], images: [] };
  if (!html || htmlLimitBreach(html)) return found;
  const references = new Set<number>();
  // Without recursion, as dom.ts's walk (deep markup must not overflow the stack); children pushed in reverse.
  const stack: Place[] = parseHtml(html)
    .map((node) => ({ node, marks: [] as AdfMark[], shown: true }))
    .reverse();
  const push = (nodes: ChildNode[], marks: AdfMark[], shown: boolean) => {
    for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i]!, marks, shown });
  };
  while (stack.length > 0) {
    const { node, marks, shown } = stack.pop()!;
    if (node instanceof Text) {
      if (shown && !literal(marks)) for (const id of referencesIn(cleanText(node.data))) references.add(id);
      continue;
    }
    if (!(node instanceof Element)) continue;
    if (node.name === 'img') {
      const src = attr(node, 'src')?.trim();
      const alt = attr(node, 'alt')?.trim();
      if (src) found.images.push(alt ? { src, alt } : { src });
      continue;
    }
    // What the converter leaves out is still looked through for images, never for what it would resolve.
    const visible =
      shown && !METADATA.has(node.name) && !DROPPED.has(node.name) && !isHidden(node) && node.name !== 'pre';
    const inner = visible ? marksFor(node, marks) : marks;
    if (visible && node.name === 'a') {
      const mention = mentionOf(node);
      if (mention) {
        found.mentions.push(mention);
        push(node.children, inner, false);
        continue;
      }
      const id = anchorReference(node);
      if (id !== undefined) references.add(id);
      const href = safeHref(attr(node, 'href'));
      push(node.children, href ? [...inner, { type: 'link', attrs: { href } }] : inner, true);
      continue;
    }
    push(node.children, inner, visible);
  }
  found.references = [...references];
  return found;
}

/** A mention as ADO's editor writes it: `<a data-vss-mention="version:2.0,{guid}">@Name</a>`. */
function mentionOf(a: Element): ScannedMention | undefined {
  const vss = attr(a, 'data-vss-mention');
  const label = labelOf(a);
  if (vss === undefined || !label.startsWith('@') || label.length < 2) return undefined;
  const adoId = vss.split(',')[1]?.trim() || undefined;
  const displayName = label.replace(/^@/, '').trim();
  return adoId ? { adoId, displayName } : { displayName };
}

/** The item an anchor refers to: `#123` as ADO links it, or any link to a work item's page. */
function anchorReference(a: Element): number | undefined {
  const label = labelOf(a);
  const labelId = /^#(\d{1,9})$/.exec(label)?.[1];
  if (attr(a, 'data-vss-mention') !== undefined && labelId) return Number(labelId);
  return workItemIdFromUrl(attr(a, 'href')?.trim());
}

const labelOf = (a: Element) => textContent(a).replace(COLLAPSIBLE, ' ').trim();
