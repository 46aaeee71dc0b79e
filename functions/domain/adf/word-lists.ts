/**
 * Word's lists. Word (and Outlook) write a list as a run of paragraphs, not `<ul>`/`<ol>`: each item is a
 * `<p class=MsoListParagraph...>` whose style says `mso-list:l0 level2 lfo1` (list template, nesting level,
 * list instance), and whose bullet or number is literal text in a `<span style='mso-list:Ignore'>` and/or
 * between `<![if !supportLists]>` and `<![endif]>`. Here such runs become real bulletList / orderedList
 * nodes nested by level, the bullet or number itself dropped (the list shows it). List paragraphs without
 * `mso-list` (an item's second paragraph) continue the item before them.
 */
import { type ChildNode, Comment, classes, Element, styleOf, Text, textContent } from './dom.ts';
import type { AdfNode } from './types.ts';

const MSO_LIST = /\bl(\d+)\s+level(\d+)\s+lfo(\d+)/;
const LIST_CLASS = /^msolistparagraph/i;
const DOWNLEVEL_START = /^\[if\s+!supportlists\]$/i;
const DOWNLEVEL_END = /^\[endif\]$/i;

/** Where a list paragraph sits: its list (template and instance) and its level, from 1. */
export interface WordListPosition {
  list: string;
  level: number;
}

export function wordListPosition(node: ChildNode): WordListPosition | undefined {
  if (!(node instanceof Element) || node.name !== 'p' || !node.attribs.style) return undefined;
  const m = MSO_LIST.exec(styleOf(node).get('mso-list') ?? '');
  if (!m) return undefined;
  return { list: `l${m[1]}:lfo${m[3]}`, level: Math.max(1, Number(m[2])) };
}

/** Points per unit, for the lengths Word writes in margins. */
const POINTS: Record<string, number> = { pt: 1, in: 72, cm: 72 / 2.54, mm: 72 / 25.4, px: 0.75, pc: 12 };
/** Word's List Paragraph style indents by 36pt; its paragraphs say so only when they differ. */
const LIST_PARAGRAPH_INDENT = 36;

/**
 * How far a paragraph is indented (margin-left, in points): what tells which item a continuation paragraph
 * belongs to. Undefined when unknown.
 */
export function wordIndent(p: Element): number | undefined {
  const m = /^(-?[\d.]+)(pt|in|cm|mm|px|pc)$/.exec(styleOf(p).get('margin-left') ?? '');
  if (m) return Number(m[1]) * POINTS[m[2]!]!;
  return classes(p).some((c) => LIST_CLASS.test(c)) ? LIST_PARAGRAPH_INDENT : undefined;
}

/** A list-styled paragraph that is not an item of its own: more content for the item before it. */
export const isWordListContinuation = (node: ChildNode): node is Element =>
  node instanceof Element &&
  node.name === 'p' &&
  classes(node).some((c) => LIST_CLASS.test(c)) &&
  !wordListPosition(node);

/** Between Word's paragraphs: white space and comments (Word's conditional ones). */
const isFiller = (node: ChildNode) =>
  (node instanceof Text && node.data.trim() === '') || node instanceof Comment;

/**
 * The end (exclusive) of the run of Word list paragraphs starting at `start`, which must be one. Filler
 * between paragraphs belongs to the run; filler after the last one does not.
 */
export function wordListRunEnd(nodes: ChildNode[], start: number): number {
  let end = start + 1;
  for (let i = start + 1; i < nodes.length; i++) {
    const node = nodes[i]!;
    if (wordListPosition(node) || isWordListContinuation(node)) end = i + 1;
    else if (!isFiller(node)) break;
  }
  return end;
}

/** The nodes showing an item's bullet or number (to leave out), and their text. */
export function listMarker(p: Element): { nodes: Set<ChildNode>; text: string } {
  const nodes = new Set<ChildNode>();
  // An explicit stack: markup below a paragraph can be arbitrarily deep.
  const stack: Element[] = [p];
  while (stack.length > 0) {
    const el = stack.pop()!;
    let downlevel = false;
    for (const child of el.children) {
      if (child instanceof Comment) {
        const data = child.data.trim();
        if (DOWNLEVEL_START.test(data)) downlevel = true;
        else if (DOWNLEVEL_END.test(data)) downlevel = false;
      } else if (downlevel) nodes.add(child);
      else if (child instanceof Element) {
        if (styleOf(child).get('mso-list') === 'ignore') nodes.add(child);
        else stack.push(child);
      }
    }
  }
  const text = [...nodes]
    .map((n) => textContent(n))
    .join('')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
  return { nodes, text };
}

const ROMAN: Record<string, number> = { i: 1, v: 5, x: 10, l: 50, c: 100, d: 500, m: 1000 };

function romanValue(s: string): number {
  let total = 0;
  for (let i = 0; i < s.length; i++) {
    const v = ROMAN[s[i]!]!;
    const next = ROMAN[s[i + 1] ?? ''] ?? 0;
    total += v < next ? -v : v;
  }
  return total;
}

/**
 * Numbered or bulleted, from the marker Word wrote: `1.`, `2)`, `(3)`, `1.2.`, `a)`, `iv.` are numbers (the
 * list starts at the first one's value); anything else (`·`, `o`, `§`, `Ø`, `-`, none) is a bullet. A lone
 * letter counts only with its `.` or `)`: Word's `o` and `v` bullets are letters in a symbol font.
 */
export function markerKind(marker: string): { ordered: false } | { ordered: true; start: number } {
  const legal = /^\(?(?:\d{1,9}\.)*(\d{1,9})[.)]?$/.exec(marker);
  if (legal) return { ordered: true, start: Number(legal[1]) };
  const m = /^\(?([a-z]|[ivxlcdm]{2,8})[.)]$/i.exec(marker);
  if (!m) return { ordered: false };
  const value = m[1]!.toLowerCase();
  // `i.` opens a roman list far more often than a lettered list reaches its ninth item.
  if (value.length > 1 || value === 'i') return { ordered: true, start: romanValue(value) };
  return { ordered: true, start: value.charCodeAt(0) - 96 };
}

/** One converted Word list item; `continuation` marks a paragraph that extends an item before it. */
export type WordListEntry =
  | { kind: 'item'; position: WordListPosition; marker: string; indent?: number; content: AdfNode[] }
  | { kind: 'continuation'; indent?: number; content: AdfNode[] };

interface OpenList {
  level: number;
  key: string;
  indent: number | undefined;
  list: AdfNode;
}

/**
 * Nested lists from a run of entries: a deeper level opens a list in the item before it. A continuation
 * paragraph joins the last item indented no further than it is (Word lines it up with that item's text),
 * closing the deeper lists; without indents, the last item.
 */
export function buildWordLists(entries: WordListEntry[]): AdfNode[] {
  const out: AdfNode[] = [];
  const open: OpenList[] = [];
  let lastItem: AdfNode | undefined;
  for (const entry of entries) {
    if (entry.kind === 'continuation') {
      const at =
        entry.indent === undefined
          ? -1
          : open.findLastIndex((o) => o.indent !== undefined && o.indent <= entry.indent! + 0.5);
      if (at >= 0) {
        open.length = at + 1;
        lastItem = open[at]!.list.content!.at(-1);
      }
      if (lastItem) lastItem.content = [...(lastItem.content ?? []), ...entry.content];
      else out.push(...entry.content);
      continue;
    }
    const { level, list: listId } = entry.position;
    const kind = markerKind(entry.marker);
    // Another list instance, or bullets turning into numbers, is another list.
    const key = `${listId}:${kind.ordered}`;
    while (open.length > 0 && open.at(-1)!.level > level) open.pop();
    if (open.at(-1)?.level === level && open.at(-1)!.key !== key) open.pop();
    const item: AdfNode = { type: 'listItem', content: entry.content };
    lastItem = item;
    const top = open.at(-1);
    if (top?.level === level) {
      top.list.content!.push(item);
      continue;
    }
    const list: AdfNode = kind.ordered
      ? { type: 'orderedList', attrs: { order: kind.start }, content: [item] }
      : { type: 'bulletList', content: [item] };
    const parentItem = top?.list.content?.at(-1);
    if (parentItem) parentItem.content = [...(parentItem.content ?? []), list];
    else out.push(list);
    open.push({ level, key, indent: entry.indent, list });
  }
  return out;
}
