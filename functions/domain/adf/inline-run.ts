/**
 * Turns the inline nodes gathered for one paragraph or heading into what a browser would show: white space
 * collapsed across element boundaries, trimmed at line starts and ends, no empty text (ADF forbids it).
 */

import { sameMarks } from './marks.ts';
import { isText, text } from './nodes.ts';
import type { AdfNode } from './types.ts';

/** HTML's collapsible white space; U+00A0 is not in it (a no-break space survives collapsing). */
export const COLLAPSIBLE = /[ \t\n\r\f]+/g;
const NBSP = /\u00a0/g;

export function finishInline(nodes: AdfNode[]): AdfNode[] {
  return mergeTexts(dropTrailingBreaks(noBreakSpaces(collapse(nodes))));
}

/** Whether a finished run shows nothing: no text but spaces, at most some line breaks. */
export const isBlank = (nodes: AdfNode[]) =>
  nodes.every((n) => n.type === 'hardBreak' || (isText(n) && n.text.trim() === ''));

function collapse(nodes: AdfNode[]): AdfNode[] {
  const out: AdfNode[] = [];
  // True at a line start or after a space: a following space would not be rendered.
  let swallowSpace = true;
  const trimLast = () => {
    const last = out.at(-1);
    if (!last || !isText(last) || !last.text.endsWith(' ')) return;
    const trimmed = last.text.replace(/ +$/, '');
    if (trimmed) out[out.length - 1] = { ...last, text: trimmed };
    else out.pop();
  };
  for (const node of nodes) {
    if (isText(node)) {
      let value = node.text.replace(COLLAPSIBLE, ' ');
      if (swallowSpace) value = value.replace(/^ /, '');
      if (!value) continue;
      out.push({ ...node, text: value });
      swallowSpace = value.endsWith(' ');
    } else if (node.type === 'hardBreak') {
      trimLast();
      out.push(node);
      swallowSpace = true;
    } else {
      out.push(node);
      swallowSpace = false;
    }
  }
  trimLast();
  return out;
}

// After collapsing, a no-break space is just a space: plain spaces keep the text searchable in Jira.
const noBreakSpaces = (nodes: AdfNode[]) =>
  nodes.map((n) => (isText(n) && n.text.includes('\u00a0') ? { ...n, text: n.text.replace(NBSP, ' ') } : n));

// A line break closing a block adds no visible line in a browser.
function dropTrailingBreaks(nodes: AdfNode[]): AdfNode[] {
  let end = nodes.length;
  while (end > 0 && nodes[end - 1]?.type === 'hardBreak') end--;
  return end === nodes.length ? nodes : nodes.slice(0, end);
}

/** Adjacent texts with the same marks as one node. */
export function mergeTexts(nodes: AdfNode[]): AdfNode[] {
  const out: AdfNode[] = [];
  for (const node of nodes) {
    const last = out.at(-1);
    if (last && isText(last) && isText(node) && sameMarks(last.marks, node.marks)) {
      out[out.length - 1] = text(last.text + node.text, last.marks);
    } else out.push(node);
  }
  return out;
}
