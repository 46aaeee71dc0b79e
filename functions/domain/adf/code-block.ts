/** `<pre>` (with or without `<code>`): a codeBlock holding the text exactly, line breaks included. */

import { cleanText } from './chars.ts';
import { classes, Element, Text, walk } from './dom.ts';
import type { AdfNode } from './types.ts';

const LANGUAGE = /^(?:language|lang)-([\w+#.-]+)$/i;
// Lines a browser would start inside a <pre> (editors sometimes wrap each line in a div).
const LINE_ELEMENTS = new Set(['div', 'p', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const SKIPPED = new Set(['script', 'style', 'template']);

export function convertCodeBlock(pre: Element): AdfNode {
  const parts: string[] = [];
  walk(pre, (node) => {
    if (node === pre) return true;
    if (node instanceof Text) parts.push(node.data);
    if (!(node instanceof Element)) return false;
    if (node.name === 'br') parts.push('\n');
    const last = parts.at(-1);
    if (LINE_ELEMENTS.has(node.name) && last !== undefined && !last.endsWith('\n')) parts.push('\n');
    return !SKIPPED.has(node.name);
  });
  // The HTML parser drops a newline right after <pre>; htmlparser2 does not, so do it here.
  const code = cleanText(parts.join('').replace(/\r\n?/g, '\n')).replace(/^\n/, '');
  const language = languageOf(pre);
  return {
    type: 'codeBlock',
    ...(language ? { attrs: { language } } : {}),
    content: code ? [{ type: 'text', text: code }] : [],
  };
}

/** From a `language-js` / `lang-js` class on the pre or its code element. */
function languageOf(pre: Element): string | undefined {
  const code = pre.children.find((c): c is Element => c instanceof Element && c.name === 'code');
  for (const el of code ? [pre, code] : [pre]) {
    for (const c of classes(el)) {
      const m = LANGUAGE.exec(c);
      if (m?.[1]) return m[1].toLowerCase();
    }
  }
  return undefined;
}
