/**
 * Makes loose block content legal ADF. Each container allows only some blocks:
 *
 * - doc: everything the converter makes;
 * - tableCell / tableHeader: all but tables;
 * - listItem and blockquote: paragraphs, lists, code blocks and media only.
 *
 * A heading where it is not allowed becomes a bold paragraph; a blockquote inside a list item or a blockquote
 * gives up its frame. A table or rule inside a list item or blockquote is lifted out: the list (or quote) is
 * split around it, an ordered list's second half continuing the numbering, and the lifted block lands in the
 * nearest container that takes it. A table that can only land in a table cell is flattened to its cells'
 * content. List items always start with a paragraph (or code block / media), and never are empty.
 */
import { mergeTexts } from './inline-run.ts';
import { hasMark, withMark } from './marks.ts';
import { isText, paragraph } from './nodes.ts';
import type { AdfNode } from './types.ts';

type Container = 'doc' | 'tableCell' | 'listItem' | 'blockquote';

const NARROW = ['paragraph', 'bulletList', 'orderedList', 'codeBlock', 'mediaSingle'];
const ALLOWED: Record<Container, Set<string>> = {
  doc: new Set([...NARROW, 'heading', 'table', 'blockquote', 'rule']),
  tableCell: new Set([...NARROW, 'heading', 'blockquote', 'rule']),
  listItem: new Set(NARROW),
  blockquote: new Set(NARROW),
};
const ITEM_STARTS = new Set(['paragraph', 'codeBlock', 'mediaSingle']);

/** A fitted node, or one that must leave its container for an outer one. */
type Piece = { lifted: boolean; node: AdfNode };

export function fitDoc(blocks: AdfNode[]): AdfNode[] {
  return settle(fitBlocks(blocks, 'doc'), 'doc');
}

function fitBlocks(blocks: AdfNode[], container: Container): Piece[] {
  const allowed = ALLOWED[container];
  const out: Piece[] = [];
  for (const block of blocks) {
    if (allowed.has(block.type)) {
      for (const p of fitNode(block))
        out.push(p.lifted && allowed.has(p.node.type) ? { ...p, lifted: false } : p);
    } else if (block.type === 'heading') out.push(...fitBlocks([boldParagraph(block)], container));
    else if (block.type === 'blockquote') out.push(...fitBlocks(block.content ?? [], container));
    else for (const p of fitNode(block)) out.push({ lifted: true, node: p.node });
  }
  return out;
}

function fitNode(node: AdfNode): Piece[] {
  switch (node.type) {
    case 'blockquote':
      return regroup(fitBlocks(node.content ?? [], 'blockquote'), (content) => ({ ...node, content }));
    case 'bulletList':
    case 'orderedList':
      return fitList(node);
    case 'table':
      return [{ lifted: false, node: { ...node, content: (node.content ?? []).map(fitRow) } }];
    default:
      return [{ lifted: false, node }];
  }
}

function fitList(list: AdfNode): Piece[] {
  const pieces = (list.content ?? []).flatMap(fitItem);
  const start = typeof list.attrs?.order === 'number' ? list.attrs.order : 1;
  let itemsBefore = 0;
  return regroup(pieces, (items) => {
    const part: AdfNode = { ...list, content: items };
    if (list.type === 'orderedList') part.attrs = { ...list.attrs, order: start + itemsBefore };
    itemsBefore += items.length;
    return part;
  });
}

function fitItem(item: AdfNode): Piece[] {
  const content = item.content ?? [];
  if (content.length === 0) return [{ lifted: false, node: { ...item, content: [paragraph()] } }];
  return regroup(fitBlocks(content, 'listItem'), (blocks) => ({
    ...item,
    content: ITEM_STARTS.has(blocks[0]!.type) ? blocks : [paragraph(), ...blocks],
  }));
}

function fitRow(row: AdfNode): AdfNode {
  return { ...row, content: (row.content ?? []).map(fitCell) };
}

function fitCell(cell: AdfNode): AdfNode {
  const content = settle(fitBlocks(cell.content ?? [], 'tableCell'), 'tableCell');
  return { ...cell, content: content.length > 0 ? content : [paragraph()] };
}

/** Runs of fitted nodes wrapped by `wrap`, lifted pieces passed on between them. */
function regroup(pieces: Piece[], wrap: (nodes: AdfNode[]) => AdfNode): Piece[] {
  const out: Piece[] = [];
  let run: AdfNode[] = [];
  const close = () => {
    if (run.length > 0) out.push({ lifted: false, node: wrap(run) });
    run = [];
  };
  for (const p of pieces) {
    if (p.lifted) {
      close();
      out.push(p);
    } else run.push(p.node);
  }
  close();
  return out;
}

/** A container that nothing can be lifted out of: what still does not fit is flattened into it. */
function settle(pieces: Piece[], container: Container): AdfNode[] {
  return pieces.flatMap((p) => (p.lifted ? flatten(p.node, container) : [p.node]));
}

function flatten(node: AdfNode, container: Container): AdfNode[] {
  if (node.type === 'table') {
    const cellContent = (node.content ?? [])
      .flatMap((row) => (row.content ?? []).flatMap((c) => c.content ?? []))
      // The placeholders that kept empty cells legal carry nothing worth keeping.
      .filter((b) => b.type !== 'paragraph' || (b.content ?? []).length > 0);
    return settle(fitBlocks(cellContent, container), container);
  }
  // A rule has no content; anything else lifted this far is not something the converter makes.
  return ALLOWED[container].has(node.type) ? [node] : [];
}

function boldParagraph(h: AdfNode): AdfNode {
  const content = (h.content ?? []).map((n) =>
    // `code` text takes no other mark.
    isText(n) && !hasMark(n.marks, 'code') ? { ...n, marks: withMark(n.marks ?? [], { type: 'strong' }) } : n,
  );
  return paragraph(mergeTexts(content));
}
