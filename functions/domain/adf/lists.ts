/**
 * `<ul>` / `<ol>` to bulletList / orderedList. Items may hold any block; what ADF does not allow inside a
 * listItem is dealt with later by fit.ts. Also takes the shapes editors leave behind: a list nested directly
 * in a list (shown by browsers as part of the item before it) and stray content between items.
 */
import type { BlockConverter, InheritedState } from './block-converter.ts';
import { type ChildNode, Element, intAttr } from './dom.ts';
import type { AdfNode } from './types.ts';

export const isList = (node: ChildNode): node is Element =>
  node instanceof Element && (node.name === 'ul' || node.name === 'ol');

export function convertList(el: Element, state: InheritedState, conv: BlockConverter): AdfNode | undefined {
  const items: AdfNode[] = [];
  const appendToLast = (blocks: AdfNode[]) => {
    if (blocks.length === 0) return;
    const last = items.at(-1);
    if (last) last.content = [...(last.content ?? []), ...blocks];
    else items.push({ type: 'listItem', content: blocks });
  };
  let stray: ChildNode[] = [];
  const flushStray = () => {
    appendToLast(conv.blocks(stray, state));
    stray = [];
  };
  for (const child of el.children) {
    if (child instanceof Element && child.name === 'li') {
      flushStray();
      items.push({ type: 'listItem', content: conv.blocks(child.children, state) });
    } else if (isList(child)) {
      flushStray();
      // Through the converter, which bounds the nesting depth.
      appendToLast(conv.blocks([child], state));
    } else stray.push(child);
  }
  flushStray();
  if (items.length === 0) return undefined;
  if (el.name === 'ul') return { type: 'bulletList', content: items };
  const start = intAttr(el, 'start');
  return {
    type: 'orderedList',
    attrs: { order: start !== undefined && start >= 0 ? start : 1 },
    content: items,
  };
}

/** An `<li>` outside any list (unclosed or pasted markup): a bullet list of its own. */
export function orphanItem(el: Element, state: InheritedState, conv: BlockConverter): AdfNode {
  return { type: 'bulletList', content: [{ type: 'listItem', content: conv.blocks(el.children, state) }] };
}
