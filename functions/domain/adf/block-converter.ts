/** How list and table conversion call back into the general converter for their items' and cells' content. */
import type { ChildNode } from './dom.ts';
import type { AdfMark, AdfNode } from './types.ts';

/** The formatting inherited from enclosing elements (e.g. `<b><ul>...` makes the items bold). */
export interface InheritedState {
  marks: AdfMark[];
}

export interface BlockConverter {
  /** Block content for nodes (inline runs wrapped in paragraphs); not yet fitted to the ADF schema. */
  blocks(nodes: ChildNode[], state: InheritedState): AdfNode[];
}
