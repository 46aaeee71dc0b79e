/**
 * Jira wiki markup -> ADF, for the text the JSON importer takes (descriptions, comments, worklog comments,
 * text custom fields), as Jira Cloud stores such text after an import and answers it through `/rest/api/3`.
 * The notation is Atlassian's "Text formatting notation" (the help page of the wiki renderer); the sandbox
 * renders the part the service's file builder writes (functions/domain/jira-import/text.ts) and a little more:
 *
 * - blocks: paragraphs (a blank line ends one; a single line break inside is a `hardBreak`), headings `h1.` to
 *   `h6.`, bullet and numbered lists (`*`, `#`, `-`, nested and mixed: `*#`), `{noformat}` and `{code}` /
 *   `{code:lang}` blocks (codeBlock, with the language when named), `----` (rule), `bq.` (blockquote);
 * - inline: backslash escapes (`\*` is a star; a backslash before a character the notation does not escape stays;
 *   `\\` is a forced line break unless a backslash follows in the same word, as Jira's renderer reads it), links
 *   `[text|https://...]` and `[https://...]` (http, https, mailto), `*strong*`, `_emphasis_`, `-deleted-`
 *   and `{{monospaced}}`; HTML entities (`&#92;`, `&amp;`) as their characters, as the renderer's HTML shows
 *   them (outside code and monospace), so `h1&#46; x` is a line of text, not a heading.
 *
 * Not rendered, left as the text they are written with: tables (`||`, `|`), panels and quotes (`{panel}`,
 * `{quote}`), colours, images and attachments (`!name!`), mentions (`[~accountid:...]`), `+inserted+`,
 * `^super^`, `~sub~`, `??citation??`, emoticons, anchors and links to other pages or issues.
 */

import type { AdfDoc, AdfMark, AdfNode } from '../../../functions/domain/adf/types.ts';

const LINK_TARGET = /^(https?:\/\/|mailto:)[^\s|\]]+$/i;
const SIMPLE_MARKS: Record<string, string> = { '*': 'strong', _: 'em', '-': 'strike' };
const WORD = /[\p{L}\p{N}]/u;

const text = (value: string, marks: readonly AdfMark[]): AdfNode =>
  marks.length > 0 ? { type: 'text', text: value, marks: [...marks] } : { type: 'text', text: value };

/** Where an unescaped `close` ends a run started at `from`, on the same line; -1 when it does not. */
function closing(s: string, from: number, close: string): number {
  for (let j = from; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '\n') return -1;
    if (s.startsWith(close, j)) return j;
  }
  return -1;
}

/** A `*`, `_` or `-` run: opened after a non-word character before a non-space, closed likewise. */
function markRun(s: string, i: number, ch: string): number {
  const before = i === 0 ? '' : (s[i - 1] ?? '');
  const next = s[i + 1] ?? '';
  if (WORD.test(before) || next === '' || /\s/.test(next) || next === ch) return -1;
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j] ?? '';
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '\n') return -1;
    if (c === ch && !/\s/.test(s[j - 1] ?? '') && !WORD.test(s[j + 1] ?? '')) return j;
  }
  return -1;
}

/**
 * The characters a backslash escapes, and only those (`\a` stays as written): Jira's
 * BackslashEscapeRendererComponent, as Atlassian's wiki markup transformer ports it
 * (@atlaskit/editor-wikimarkup-transformer 11.20, `parser/utils/escape`).
 */
const ESCAPABLE = new Set('-#*_+?^~|%{}[]()!@');

/**
 * An HTML entity, which Jira's renderer shows as its character (its output is HTML): numeric ones, and the few
 * named ones a writer needs to show `&`, `<`, `>` and quotes. Anything else stays as written.
 */
const ENTITY = /^&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos|nbsp));/i;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function entityAt(s: string, i: number): { char: string; length: number } | null {
  const m = ENTITY.exec(s.slice(i, i + 12));
  if (!m) return null;
  const code = m[1] ? Number(m[1]) : m[2] ? Number.parseInt(m[2], 16) : undefined;
  if (code !== undefined && (code === 0 || code > 0x10ffff)) return null;
  const char = code !== undefined ? String.fromCodePoint(code) : NAMED[(m[3] ?? '').toLowerCase()];
  return char === undefined ? null : { char, length: m[0].length };
}

/** Monospaced text with its escapes removed. */
const unescaped = (s: string) => s.replace(/\\([-#*_+?^~|%{}[\]()!@])/g, '$1');

/** Inline wiki markup -> text nodes with marks, hard breaks. */
export function inlineToAdf(s: string, marks: readonly AdfMark[] = []): AdfNode[] {
  const out: AdfNode[] = [];
  let buffer = '';
  const flush = () => {
    if (buffer !== '') out.push(text(buffer, marks));
    buffer = '';
  };
  for (let i = 0; i < s.length; ) {
    const c = s[i] ?? '';
    if (c === '\\') {
      const next = s[i + 1] ?? '';
      if (next === '\\' && !/^\S*\\/.test(s.slice(i + 2))) {
        flush();
        out.push({ type: 'hardBreak' });
      } else if (next === '\\') buffer += '\\\\';
      else if (ESCAPABLE.has(next)) buffer += next;
      else {
        // A backslash before anything else is a backslash.
        buffer += c;
        i += 1;
        continue;
      }
      i += 2;
      continue;
    }
    if (c === '&') {
      const entity = entityAt(s, i);
      if (entity) {
        buffer += entity.char;
        i += entity.length;
        continue;
      }
    }
    if (c === '\n') {
      flush();
      out.push({ type: 'hardBreak' });
      i += 1;
      continue;
    }
    if (c === '[') {
      const end = closing(s, i + 1, ']');
      if (end > i + 1) {
        const inner = s.slice(i + 1, end);
        const bar = closing(inner, 0, '|');
        const label = bar < 0 ? undefined : inner.slice(0, bar);
        const href = (bar < 0 ? inner : inner.slice(bar + 1)).trim();
        if (LINK_TARGET.test(href)) {
          flush();
          const link: AdfMark = { type: 'link', attrs: { href } };
          const withLink = [...marks.filter((m) => m.type !== 'link'), link];
          if (label === undefined || label.trim() === '') out.push(text(href, withLink));
          else out.push(...inlineToAdf(label, withLink));
          i = end + 1;
          continue;
        }
      }
    }
    if (c === '{' && s[i + 1] === '{') {
      const end = closing(s, i + 2, '}}');
      if (end > i + 2) {
        flush();
        // `code` combines with a link only (ADF).
        out.push(
          text(unescaped(s.slice(i + 2, end)), [...marks.filter((m) => m.type === 'link'), { type: 'code' }]),
        );
        i = end + 2;
        continue;
      }
    }
    const mark = SIMPLE_MARKS[c];
    if (mark && !marks.some((m) => m.type === 'code')) {
      const end = markRun(s, i, c);
      if (end > i + 1) {
        flush();
        out.push(...inlineToAdf(s.slice(i + 1, end), [...marks, { type: mark }]));
        i = end + 1;
        continue;
      }
    }
    buffer += c;
    i += 1;
  }
  flush();
  return out;
}

const paragraph = (s: string): AdfNode => {
  const content = inlineToAdf(s);
  return content.length > 0 ? { type: 'paragraph', content } : { type: 'paragraph' };
};

const LIST_ITEM = /^([*#]+|-)\s+(.*)$/;
const HEADING = /^h([1-6])\.\s*(.*)$/;
const RULE = /^-{4,}\s*$/;
const QUOTE = /^bq\.\s+(.*)$/;
/** A `{noformat}` or `{code}` block; not `{{code}}` (monospace) nor an escaped `\{code}`. */
const CODE = /(?<![{\\])\{(noformat|code)((?::[^}]*)?)\}(?!\})([\s\S]*?)(?<!\{)\{\1\}(?!\})/g;

/** `{code:java}` or `{code:title=A.java|language=java}`: the language, if named. */
function languageOf(params: string): string | undefined {
  const list = params.replace(/^:/, '').split('|').filter(Boolean);
  const named = list.find((p) => p.startsWith('language='))?.slice('language='.length);
  const bare = list.find((p) => !p.includes('='));
  return (named ?? bare)?.trim() || undefined;
}

/** Lines of one list (markers kept) -> nested bulletList/orderedList nodes. */
function lists(items: { marker: string; text: string }[]): AdfNode[] {
  const blocks: AdfNode[] = [];
  const stack: { node: AdfNode; depth: number; kind: string }[] = [];
  for (const item of items) {
    const depth = item.marker === '-' ? 1 : item.marker.length;
    const kind = item.marker.endsWith('#') ? 'orderedList' : 'bulletList';
    while (stack.length > 0 && (stack.at(-1)?.depth ?? 0) > depth) stack.pop();
    let top = stack.at(-1);
    if (top && top.depth === depth && top.kind !== kind) {
      stack.pop();
      top = stack.at(-1);
    }
    const listItem: AdfNode = { type: 'listItem', content: [paragraph(item.text)] };
    if (top && top.depth === depth) {
      top.node.content?.push(listItem);
      continue;
    }
    // A new list: inside the last item of the list above it (however many levels deeper), or a block.
    const list: AdfNode = { type: kind, content: [listItem] };
    const parentItem = top?.node.content?.at(-1);
    if (parentItem) parentItem.content?.push(list);
    else blocks.push(list);
    stack.push({ node: list, depth, kind });
  }
  return blocks;
}

/** Wiki markup outside code blocks -> blocks. */
function blocksOf(source: string): AdfNode[] {
  const out: AdfNode[] = [];
  let para: string[] = [];
  let items: { marker: string; text: string }[] = [];
  const endParagraph = () => {
    if (para.length > 0) out.push(paragraph(para.join('\n')));
    para = [];
  };
  const endList = () => {
    if (items.length > 0) out.push(...lists(items));
    items = [];
  };
  for (const line of source.split('\n')) {
    if (line.trim() === '') {
      endParagraph();
      endList();
      continue;
    }
    const item = RULE.test(line) ? null : LIST_ITEM.exec(line);
    if (item) {
      endParagraph();
      items.push({ marker: item[1] ?? '*', text: item[2] ?? '' });
      continue;
    }
    endList();
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      const content = inlineToAdf(heading[2] ?? '');
      out.push({
        type: 'heading',
        attrs: { level: Number(heading[1]) },
        ...(content.length > 0 ? { content } : {}),
      });
    } else if (RULE.test(line)) {
      endParagraph();
      out.push({ type: 'rule' });
    } else if (QUOTE.test(line)) {
      endParagraph();
      out.push({ type: 'blockquote', content: [paragraph(QUOTE.exec(line)?.[1] ?? '')] });
    } else {
      para.push(line);
    }
  }
  endParagraph();
  endList();
  return out;
}

/** A whole text in wiki markup as an ADF document (`content: []` for an empty one). */
export function wikiToAdf(markup: string): AdfDoc {
  const source = markup.replace(/\r\n?/g, '\n');
  const content: AdfNode[] = [];
  let at = 0;
  for (const m of source.matchAll(CODE)) {
    const index = m.index ?? 0;
    content.push(...blocksOf(source.slice(at, index)));
    const code = (m[3] ?? '').replace(/^\n/, '').replace(/\n$/, '');
    const language = m[1] === 'code' ? languageOf(m[2] ?? '') : undefined;
    content.push({
      type: 'codeBlock',
      ...(language ? { attrs: { language } } : {}),
      ...(code !== '' ? { content: [{ type: 'text', text: code }] } : {}),
    });
    at = index + m[0].length;
  }
  content.push(...blocksOf(source.slice(at)));
  return { type: 'doc', version: 1, content };
}
