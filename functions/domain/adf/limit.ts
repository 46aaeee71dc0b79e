/**
 * Jira's limit on a text field: 32,767 characters for a description (or comment, environment, multi-line custom
 * field); beyond it a create or edit fails with 400 `{"errors":{"description":"The entered text is too long. It
 * exceeds the allowed limit of 32,767 characters."}}`.
 *
 * How Jira counts an ADF document against it is not published. We measure the document's JSON, in UTF-16 code
 * units (Java's string length): that counts every character of text plus all markup, so it is never less than
 * the text, whichever form Jira counts. Documents are then fitted to a budget under the limit, for margin.
 */
import { isText, paragraph, text } from './nodes.ts';
import type { AdfDoc, AdfMark, AdfNode } from './types.ts';

export const JIRA_TEXT_LIMIT = 32_767;
/** What a fitted document may measure: the limit less ~8% for however Jira's own count differs from ours. */
export const ADF_BUDGET = 30_000;

export const adfLength = (node: unknown): number => JSON.stringify(node).length;

/** Containers cut among their children; a table only between whole rows (its grid stays rectangular). */
const CONTAINERS = new Set(['bulletList', 'orderedList', 'listItem', 'blockquote', 'table']);
const TEXTBLOCKS = new Set(['paragraph', 'heading']);

export interface FittedDoc {
  doc: AdfDoc;
  /** Whether anything was left out (the note was then added). */
  cut: boolean;
}

/**
 * The document itself when it measures at most `budget`; otherwise as much of its beginning as fits with
 * `note` after it. It is cut between blocks, at any depth (list items, quoted paragraphs, table rows), and
 * only a block that would leave nothing before it is cut inside its text, at a word or line boundary.
 *
 * `tail` (a footer) always ends the document, after the note of a cut one, and counts against the budget.
 */
export function fitAdf(doc: AdfDoc, note: AdfNode[], budget = ADF_BUDGET, tail: AdfNode[] = []): FittedDoc {
  const whole = tail.length > 0 ? { ...doc, content: [...doc.content, ...tail] } : doc;
  if (adfLength(whole) <= budget) return { doc: whole, cut: false };
  const room = budget - adfLength({ ...doc, content: [...note, ...tail] }) - 1;
  const kept = room > 0 ? fitBlocks(doc.content, room, true) : [];
  return { doc: { ...doc, content: [...kept, ...note, ...tail] }, cut: true };
}

/**
 * The longest prefix of `blocks` (the last one possibly cut short) measuring at most `room` in an array;
 * `first` when nothing of the document comes before them.
 */
function fitBlocks(blocks: AdfNode[], room: number, first: boolean): AdfNode[] {
  const kept: AdfNode[] = [];
  let used = 0;
  for (const block of blocks) {
    const separator = kept.length > 0 ? 1 : 0;
    const size = adfLength(block) + separator;
    if (used + size <= room) {
      kept.push(block);
      used += size;
      continue;
    }
    const part = shrink(block, room - used - separator, first && kept.length === 0);
    if (part) kept.push(part);
    break;
  }
  return kept;
}

/**
 * A shorter version of `node` measuring at most `room`, or undefined. Text is cut only when `first` (nothing
 * would come before it): otherwise the cut falls on the block boundary before it.
 */
function shrink(node: AdfNode, room: number, first: boolean): AdfNode | undefined {
  if (room <= 0) return undefined;
  if (CONTAINERS.has(node.type)) {
    const shell = adfLength({ ...node, content: [] });
    const children = node.content ?? [];
    // Rows are never cut: a table is only ever shortened by whole rows.
    const content =
      node.type === 'table' ? wholeRows(children, room - shell) : fitBlocks(children, room - shell, first);
    if (content.length === 0) return undefined;
    // A list item must open with a paragraph (or code block, or media): an item cut down to its nested list is
    // no item.
    if (node.type === 'listItem' && !['paragraph', 'codeBlock', 'mediaSingle'].includes(content[0]!.type))
      return undefined;
    return { ...node, content };
  }
  if (!first) return undefined;
  if (TEXTBLOCKS.has(node.type)) return cutInline(node, room);
  if (node.type === 'codeBlock') return cutCode(node, room);
  return undefined;
}

function wholeRows(rows: AdfNode[], room: number): AdfNode[] {
  const kept: AdfNode[] = [];
  let used = 0;
  for (const row of rows) {
    const size = adfLength(row) + (kept.length > 0 ? 1 : 0);
    if (used + size > room) break;
    kept.push(row);
    used += size;
  }
  return kept;
}

/** A paragraph or heading cut after its last inline node that fits, the text node at the edge cut too. */
function cutInline(node: AdfNode, room: number): AdfNode | undefined {
  const kept: AdfNode[] = [];
  const measure = (last: AdfNode) => adfLength({ ...node, content: [...kept, last] });
  for (const child of node.content ?? []) {
    if (measure(child) <= room) {
      kept.push(child);
      continue;
    }
    if (isText(child)) {
      const prefix = longestPrefix(child.text, (t) => measure(withText(child, t)), room);
      const cut = cutAt(prefix, [/\s/]);
      if (cut) kept.push(withText(child, cut));
    }
    break;
  }
  // A cut paragraph does not end on a line break, nor consist of one.
  while (kept.at(-1)?.type === 'hardBreak') kept.pop();
  return kept.length > 0 ? { ...node, content: kept } : undefined;
}

/** A code block cut at its last line break that fits (or, for one endless line, its last space). */
function cutCode(node: AdfNode, room: number): AdfNode | undefined {
  const child = node.content?.[0];
  if (!child || !isText(child)) return undefined;
  const measure = (t: string) => adfLength({ ...node, content: [withText(child, t)] });
  const cut = cutAt(longestPrefix(child.text, measure, room), [/\n/, /\s/]);
  return cut ? { ...node, content: [withText(child, cut)] } : undefined;
}

const withText = (n: AdfNode, value: string): AdfNode => text(value, (n.marks ?? []) as AdfMark[]);

/** The longest prefix of `value` whose measure stays within `room` (searched: escapes measure double). */
function longestPrefix(value: string, measure: (prefix: string) => number, room: number): string {
  let lo = 0;
  let hi = value.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(value.slice(0, mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  return value.slice(0, lo);
}

/**
 * `prefix` ended before the last of the first `boundaries` found in its second half (a whole line or word),
 * else where it is; never on half a surrogate pair, without trailing white space; undefined when empty.
 */
function cutAt(prefix: string, boundaries: RegExp[]): string | undefined {
  let end = prefix.length;
  for (const boundary of boundaries) {
    let i = prefix.length - 1;
    while (i >= prefix.length / 2 && !boundary.test(prefix[i]!)) i--;
    if (i >= prefix.length / 2) {
      end = i;
      break;
    }
  }
  let out = prefix.slice(0, end);
  const last = out.charCodeAt(out.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  out = out.trimEnd();
  return out === '' ? undefined : out;
}

/** The note that ends a cut document: one italic paragraph. */
export function cutNote(message: string): AdfNode[] {
  return [paragraph([text(message, [{ type: 'em' }])])];
}
