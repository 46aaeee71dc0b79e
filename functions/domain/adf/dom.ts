/** Parsing HTML into a DOM (htmlparser2, forgiving like a browser) and the few DOM reads the converter needs. */
import { type ChildNode, Comment, Element, Text } from 'domhandler';
import { parseDocument } from 'htmlparser2';

export type { ChildNode };
export { Comment, Element, Text };

/**
 * Entities are decoded, tags lower-cased; conditional comments (`<!--[if mso]>...`) become comments and
 * Word's downlevel-revealed `<![if ...]>` markers vanish, both as in a non-IE browser.
 */
export function parseHtml(html: string): ChildNode[] {
  return parseDocument(html, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true })
    .children;
}

export const attr = (el: Element, name: string): string | undefined => el.attribs[name];

export const classes = (el: Element): string[] => (el.attribs.class ?? '').split(/\s+/).filter(Boolean);

/** Inline style declarations, property names lower-cased (`font-weight` -> `bold`). */
export function styleOf(el: Element): Map<string, string> {
  const out = new Map<string, string>();
  const style = el.attribs.style;
  if (!style) return out;
  for (const decl of style.split(';')) {
    const colon = decl.indexOf(':');
    if (colon < 0) continue;
    const name = decl.slice(0, colon).trim().toLowerCase();
    const value = decl
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name && value) out.set(name, value);
  }
  return out;
}

/**
 * Visits a subtree in document order without recursion (arbitrarily deep markup must not overflow the stack).
 * `enter` is called for every node; returning false skips an element's children.
 */
export function walk(root: ChildNode, enter: (node: ChildNode) => boolean | undefined): void {
  const stack: ChildNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (enter(node) === false || !(node instanceof Element)) continue;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
}

/** All text below a node, as written (no white-space processing), leaving out elements in `skip`. */
export function textContent(node: ChildNode, skip?: ReadonlySet<string>): string {
  const parts: string[] = [];
  walk(node, (n) => {
    if (n instanceof Text) parts.push(n.data);
    return !(skip && n instanceof Element && skip.has(n.name));
  });
  return parts.join('');
}

/** A positive integer attribute (colspan, start, ...), or undefined when absent or malformed. */
export function intAttr(el: Element, name: string): number | undefined {
  const raw = el.attribs[name]?.trim();
  if (!raw || !/^[+-]?\d+$/.test(raw)) return undefined;
  return Number.parseInt(raw, 10);
}

/** The text of an HTML fragment, as written (no white-space processing): every text node of its DOM. */
export const htmlText = (html: string): string =>
  parseHtml(html)
    .map((node) => textContent(node))
    .join('');
