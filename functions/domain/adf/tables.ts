/**
 * `<table>` to an ADF table. Rows come from thead/tbody/tfoot or directly from the table; `th` becomes a
 * tableHeader, `colspan`/`rowspan` carry over. The grid is then made rectangular (short rows padded with empty
 * cells, spans clamped to the table) because Jira's editor re-lays out ragged tables unpredictably. A caption and
 * content misplaced between rows are put before the table, as a browser does.
 */
import type { BlockConverter, InheritedState } from './block-converter.ts';
import { type ChildNode, Element, intAttr, Text } from './dom.ts';
import { paragraph } from './nodes.ts';
import type { AdfNode } from './types.ts';

const SECTIONS = new Set(['thead', 'tbody', 'tfoot']);
// Not a type guard on purpose: a false answer says nothing about whether the node is an Element.
const isCell = (n: ChildNode): boolean => n instanceof Element && (n.name === 'td' || n.name === 'th');
const isBlankText = (n: ChildNode) => n instanceof Text && n.data.trim() === '';

/** Wider spans than this are markup accidents (`colspan=1000`), not layout. */
const MAX_COLSPAN = 64;

interface Cell {
  header: boolean;
  colspan: number;
  rowspan: number;
  content: AdfNode[];
}

export function convertTable(table: Element, state: InheritedState, conv: BlockConverter): AdfNode[] {
  const rows: Element[][] = [];
  const before: ChildNode[] = [];
  const collect = (parent: Element) => {
    let implicitRow: Element[] | undefined;
    for (const child of parent.children) {
      if (isCell(child)) {
        if (!implicitRow) {
          implicitRow = [];
          rows.push(implicitRow);
        }
        implicitRow.push(child as Element);
        continue;
      }
      implicitRow = undefined;
      if (!(child instanceof Element)) {
        if (!isBlankText(child)) before.push(child);
      } else if (child.name === 'tr') {
        rows.push(child.children.filter(isCell) as Element[]);
        before.push(...child.children.filter((c) => !isCell(c) && !isBlankText(c)));
      } else if (SECTIONS.has(child.name)) collect(child);
      else if (child.name === 'caption') before.push(...child.children);
      else if (child.name !== 'colgroup' && child.name !== 'col') before.push(child);
    }
  };
  collect(table);
  const cells = rows.map((row) => row.map((el) => toCell(el, state, conv))).filter((row) => row.length > 0);
  const out = conv.blocks(before, state);
  if (cells.length > 0) out.push({ type: 'table', content: rectangular(cells).map(toRow) });
  return out;
}

function toCell(el: Element, state: InheritedState, conv: BlockConverter): Cell {
  const colspan = intAttr(el, 'colspan');
  const rowspan = intAttr(el, 'rowspan');
  return {
    header: el.name === 'th',
    colspan: colspan && colspan > 1 ? Math.min(colspan, MAX_COLSPAN) : 1,
    // rowspan=0 means "to the end of the section": clamping below turns it into exactly that.
    rowspan: rowspan === 0 ? Number.MAX_SAFE_INTEGER : rowspan && rowspan > 1 ? rowspan : 1,
    content: conv.blocks(el.children, state),
  };
}

/** Clamps row spans to the rows left and pads every row to the widest row's width. */
function rectangular(rows: Cell[][]): Cell[][] {
  const taken: Set<number>[] = rows.map(() => new Set());
  rows.forEach((row, r) => {
    let col = 0;
    for (const cell of row) {
      while (taken[r]!.has(col)) col++;
      cell.rowspan = Math.min(cell.rowspan, rows.length - r);
      for (let dr = 0; dr < cell.rowspan; dr++)
        for (let dc = 0; dc < cell.colspan; dc++) taken[r + dr]!.add(col + dc);
      col += cell.colspan;
    }
  });
  const width = Math.max(...taken.map((t) => (t.size === 0 ? 0 : Math.max(...t) + 1)));
  return rows.map((row, r) => {
    const missing = width - taken[r]!.size;
    const pad = Array.from({ length: missing }, () => ({
      header: false,
      colspan: 1,
      rowspan: 1,
      content: [],
    }));
    return [...row, ...pad];
  });
}

function toRow(cells: Cell[]): AdfNode {
  return {
    type: 'tableRow',
    content: cells.map((c) => {
      const attrs: Record<string, number> = {};
      if (c.colspan > 1) attrs.colspan = c.colspan;
      if (c.rowspan > 1) attrs.rowspan = c.rowspan;
      return {
        type: c.header ? 'tableHeader' : 'tableCell',
        ...(Object.keys(attrs).length > 0 ? { attrs } : {}),
        content: c.content.length > 0 ? c.content : [paragraph()],
      };
    }),
  };
}
