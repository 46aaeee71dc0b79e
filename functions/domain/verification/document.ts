/**
 * A description (or a comment body) compared as a document, not as JSON: Jira may re-serialise a document it
 * stores (attribute order, local ids, a media id Jira assigns), so what is compared is what a reader sees: the
 * text, each table cell, how many images, who is mentioned and which issues are referenced. Text inside a table
 * counts for its cell only, so one edited cell is one difference, not two.
 */
import type { AdfNode } from '#domain/adf/index.ts';
import { auditValue, type Difference } from './types.ts';

export interface DocumentFacts {
  /** The text outside tables, mentions and cards, its whitespace collapsed. */
  text: string;
  /** Each table's rows of cell texts. */
  tables: string[][][];
  /** Media nodes: the images the document shows. */
  images: number;
  /** Mentioned account ids, sorted. */
  mentions: string[];
  /** Referenced issues: inline cards' URLs and links' targets, sorted. */
  references: string[];
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

const nodeOf = (value: unknown): AdfNode | undefined =>
  value && typeof value === 'object' && typeof (value as AdfNode).type === 'string'
    ? (value as AdfNode)
    : undefined;

const childrenOf = (n: AdfNode): AdfNode[] =>
  Array.isArray(n.content) ? n.content.flatMap((c) => nodeOf(c) ?? []) : [];

/** What a reader sees of an ADF document; anything not a document reads as an empty one. */
export function documentFacts(doc: unknown): DocumentFacts {
  const facts: DocumentFacts = { text: '', tables: [], images: 0, mentions: [], references: [] };
  const text: string[] = [];
  const walk = (n: AdfNode, out: string[]) => {
    switch (n.type) {
      case 'text':
        out.push(String(n.text ?? ''));
        for (const m of n.marks ?? [])
          if (m.type === 'link' && typeof m.attrs?.href === 'string') facts.references.push(m.attrs.href);
        return;
      case 'hardBreak':
        out.push(' ');
        return;
      case 'mention':
        facts.mentions.push(String(n.attrs?.id ?? ''));
        return;
      case 'inlineCard':
      case 'blockCard':
        facts.references.push(String(n.attrs?.url ?? ''));
        return;
      case 'media':
      case 'mediaInline':
        facts.images++;
        return;
      case 'table':
        facts.tables.push(
          childrenOf(n).map((row) =>
            childrenOf(row).map((cell) => {
              const cellText: string[] = [];
              walk(cell, cellText);
              return collapse(cellText.join(''));
            }),
          ),
        );
        return;
    }
    // Blocks are separated, so two paragraphs never read as one word.
    for (const c of childrenOf(n)) walk(c, out);
    out.push(' ');
  };
  const root = nodeOf(doc);
  if (root) walk(root, text);
  facts.text = collapse(text.join(''));
  facts.mentions.sort();
  facts.references.sort();
  return facts;
}

/** Both texts from a little before the first character where they part, so a long text's change is seen. */
function whereTheyPart(expected: string, actual: string): { expected: string; actual: string } {
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  const from = Math.max(0, i - 40);
  const cut = (s: string) => `${from > 0 ? '…' : ''}${s.slice(from, from + 160)}`;
  return { expected: cut(expected), actual: cut(actual) };
}

const list = (items: string[]) => (items.length === 0 ? '(none)' : items.join(', '));

/** The differences between the document the engine writes and the one Jira shows, each aspect as its own field. */
export function compareDocuments(field: string, expectedDoc: unknown, actualDoc: unknown): Difference[] {
  const want = documentFacts(expectedDoc);
  const got = documentFacts(actualDoc);
  const out: Difference[] = [];
  const differ = (aspect: string, expected: string, actual: string) =>
    out.push({ field: `${field}.${aspect}`, expected: auditValue(expected), actual: auditValue(actual) });
  if (want.text !== got.text) {
    const parted = whereTheyPart(want.text, got.text);
    differ('text', parted.expected || '(empty)', parted.actual || '(empty)');
  }
  if (want.tables.length !== got.tables.length)
    differ('tables', `${want.tables.length} table(s)`, `${got.tables.length} table(s)`);
  else
    want.tables.forEach((table, t) => {
      const other = got.tables[t] ?? [];
      const rows = Math.max(table.length, other.length);
      for (let r = 0; r < rows; r++) {
        const cells = Math.max(table[r]?.length ?? 0, other[r]?.length ?? 0);
        for (let c = 0; c < cells; c++) {
          const a = table[r]?.[c];
          const b = other[r]?.[c];
          if (a !== b)
            differ(
              'tables',
              `table ${t + 1}, row ${r + 1}, cell ${c + 1}: ${a === undefined ? '(no cell)' : JSON.stringify(a)}`,
              b === undefined ? '(no cell)' : JSON.stringify(b),
            );
        }
      }
    });
  if (want.images !== got.images) differ('images', `${want.images} image(s)`, `${got.images} image(s)`);
  if (list(want.mentions) !== list(got.mentions)) differ('mentions', list(want.mentions), list(got.mentions));
  if (list(want.references) !== list(got.references))
    differ('references', list(want.references), list(got.references));
  return out;
}
