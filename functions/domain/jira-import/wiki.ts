/**
 * An ADF document as Jira wiki markup that Jira Cloud turns back into the same document when the JSON importer
 * reads it. Jira Cloud stores rich text as ADF and converts wiki markup into it with Atlassian's wiki markup
 * transformer (`@atlaskit/editor-wikimarkup-transformer`, whose parser takes Jira's conversion contexts: the
 * issue's attachments by file name, mentions, issue keys); the forms below are the ones that parser reads back
 * (docs/jira-import.md, "Descriptions and comments", names the sources and what wiki markup cannot carry).
 *
 * - Blocks, separated by a blank line: paragraphs (a hard break is a line break), `h1.` to `h6.`, bullet and
 *   numbered lists (`*`, `#`, nested and mixed: `*#`; an item's code block or image on the lines after it),
 *   `{code:language}` (a language Jira knows; other code is `{noformat}`), `{quote}`, `{panel:bgColor=...}`,
 *   `----`, tables (`||header||`, `|cell|`; a cell's blocks on lines of their own, lists included), images.
 * - Marks in their braced form (`{*}bold{*}`, `{_}em{_}`, `{+}underline{+}`, `{-}strike{-}`, `{^}sup{^}`,
 *   `{~}sub{~}`), which hold inside a word too; the plain form (`*bold*`) when the text holds the mark's own
 *   character (the braced form would close there). `{{code}}`, `{color:#hex}...{color}`, `[text|url]`.
 * - Inline nodes: a mention `[~accountid:ID]`, an inline card `[url|url|smart-link]` (Atlassian's own writing of
 *   a smart link), an image `!file name!` (`|alt="..."`, `|href="..."` for an image inside a link), which Jira
 *   resolves to the issue's attachment of that name.
 * - Text: every character the notation reads (`-#*_+?^~|%{}[]()!@`) behind a backslash, which Jira's parser
 *   drops; `:D`, `:P`, `:p` (emoticons no backslash can break) and a line opening `h1.`-`h6.` or `bq.` with a
 *   zero-width space after their first character.
 *
 * What wiki markup cannot carry is written as near as it goes and named through `lost` (merged cells, a list
 * that starts at another number, paragraphs inside a table cell or list item, a link on code ...).
 */
import type { AdfDoc, AdfMark, AdfNode } from '../adf/index.ts';

/** What a writer reports it could not carry as it is, once per kind. */
export type Lost = (what: string) => void;

/** The characters Jira's BackslashEscapeRendererComponent (and the transformer's escape) takes after `\`. */
const ESCAPABLE = /[-#*_+?^~|%{}[\]()!@]/;
const ZWSP = '\u200b';

/** The languages Jira's `{code}` macro knows; any other would show as Java. */
const CODE_LANGUAGES = new Set(
  'abap actionscript ada arduino autoit c c++ clojure coffeescript csharp css cuda d dart delphi elixir erlang fortran foxpro go groovy haskell haxe html java javascript json julia kotlin latex livescript lua mathematica matlab objective-c objective-j objectpascal ocaml octave perl php powershell prolog puppet python qml r racket restructuredtext ruby rust sass scala scheme shell smalltalk sql standardml swift tcl tex typescript vala vbnet verilog vhdl xml xquery'.split(
    ' ',
  ),
);

/** Panel types as the `{panel}` background Jira maps back to each. */
const PANEL_COLOURS: Record<string, string> = {
  info: '#deebff',
  note: '#eae6ff',
  success: '#e3fcef',
  warning: '#fffae6',
  error: '#ffebe6',
};

/**
 * Text that Jira shows as it is, on one line: each character the notation reads behind a backslash, emoticons
 * broken up. A backslash stays as it is before a character the notation does not escape; before one it does
 * (or another backslash, or the text's end) no spelling keeps it, and it is left out.
 */
export function escapeWiki(text: string, lost?: Lost): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const next = text[i + 1] ?? '';
    if (c === '\\') {
      if (next === '' || next === '\\' || next === '\n' || ESCAPABLE.test(next)) {
        lost?.('a backslash before a character wiki markup escapes (no spelling keeps it)');
        continue;
      }
      out += c;
    } else if (ESCAPABLE.test(c)) out += `\\${c}`;
    else if ((c === ':' || c === ';') && /[PpD]/.test(next) && !/[\p{L}\p{N}]/u.test(text[i + 2] ?? '')) {
      out += c + ZWSP;
    } else out += c;
  }
  return out;
}

/** Lines Jira reads as a block whatever follows (`h1.`, `bq.`): a zero-width space keeps them text. */
const protectLineStarts = (s: string) => s.replace(/^(\s*)([hb])(?=[1-6q]\.)/gm, `$1$2${ZWSP}`);

// ---------------------------------------------------------------------------------------------------------
// Inline content

const SIMPLE_MARKS: Record<string, string> = {
  strong: '*',
  em: '_',
  underline: '+',
  strike: '-',
};

const markOf = (marks: readonly AdfMark[] | undefined, type: string) => marks?.find((m) => m.type === type);

/** `text` inside `symbol`, leading and trailing white space outside it (Jira reads no mark that opens on one). */
function wrap(text: string, symbol: string, raw: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text) as RegExpExecArray;
  const [, lead, body, trail] = m as unknown as [string, string, string, string];
  if (body === '') return text;
  // The braced form closes at the first of its character after the opening: the plain form when the text
  // holds that character (escaped).
  const form = raw.includes(symbol) ? `${symbol}${body}${symbol}` : `{${symbol}}${body}{${symbol}}`;
  return `${lead}${form}${trail}`;
}

/** A URL as a link target: what would end the link (`|`, `]`, `[`, white space) percent-encoded. */
const linkTarget = (href: string) =>
  href.replace(/[|[\]\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * A link's text: Jira's link reads no `[`, `]` or `|` in its text, escaped or not, so those characters stand
 * outside the link (escaped), the text around them linked.
 */
function linked(label: string, raw: string, href: string, lost: Lost): string {
  if (!/[[\]|\n]/.test(raw)) return `[${label}|${linkTarget(href)}]`;
  lost('a link whose text holds [, ] or |: those characters are not linked');
  return raw
    .split(/([[\]|\n])/)
    .map((part, i) =>
      i % 2 === 1 ? escapeWiki(part) : part ? `[${escapeWiki(part)}|${linkTarget(href)}]` : '',
    )
    .join('');
}

function textNode(node: AdfNode, lost: Lost): string {
  const raw = node.text ?? '';
  const marks = node.marks ?? [];
  const link = markOf(marks, 'link')?.attrs?.href;
  if (markOf(marks, 'code')) {
    if (typeof link === 'string') {
      lost('a link on code text (Jira links no code text): kept as a link');
      return linked(escapeWiki(raw, lost), raw, link, lost);
    }
    if (raw.trim() === '') return escapeWiki(raw, lost);
    return `{{${escapeWiki(raw, lost)}}}`;
  }
  let out = escapeWiki(raw, lost);
  for (const [type, symbol] of Object.entries(SIMPLE_MARKS))
    if (markOf(marks, type)) out = wrap(out, symbol, raw);
  const subsup = markOf(marks, 'subsup')?.attrs?.type;
  if (subsup === 'sub' || subsup === 'sup') out = wrap(out, subsup === 'sup' ? '^' : '~', raw);
  const colour = markOf(marks, 'textColor')?.attrs?.color;
  if (typeof colour === 'string' && /^#[0-9a-f]{3,8}$/i.test(colour) && raw.trim() !== '')
    out = `{color:${colour}}${out}{color}`;
  for (const m of marks)
    if (!['strong', 'em', 'underline', 'strike', 'subsup', 'textColor', 'link', 'code'].includes(m.type))
      lost(`the ${m.type} mark`);
  return typeof link === 'string' ? linked(out, raw, link, lost) : out;
}

/** An image's own markup: `!name!`, with its alt text and link when it has them. */
function image(media: AdfNode, lost: Lost, linkMark?: AdfMark): string {
  const name = String(media.attrs?.type === 'external' ? media.attrs?.url : (media.attrs?.id ?? ''));
  if (name === '' || /[!|\n]/.test(name)) {
    lost('an image whose name holds ! or |');
    return escapeWiki(name || 'image', lost);
  }
  const attrs: string[] = [];
  const alt = media.attrs?.alt;
  if (typeof alt === 'string' && alt !== '' && alt !== name) {
    if (/[",|!\n]/.test(alt)) lost('an image description holding a quote, comma, ! or |');
    else attrs.push(`alt="${alt}"`);
  }
  const href = (linkMark ?? markOf(media.marks, 'link'))?.attrs?.href;
  if (typeof href === 'string') {
    if (/[",|!\s]/.test(href)) lost('a link on an image whose address holds a quote, comma, ! or |');
    else attrs.push(`href="${href}"`);
  }
  return `!${name}${attrs.length > 0 ? `|${attrs.join(',')}` : ''}!`;
}

/** Inline nodes as one line of markup (`\n` for a hard break, as `lineBreak` says otherwise). */
function inline(nodes: readonly AdfNode[] | undefined, lost: Lost, lineBreak = '\n'): string {
  let out = '';
  for (const n of nodes ?? []) {
    switch (n.type) {
      case 'text':
        out += textNode(n, lost);
        break;
      case 'hardBreak':
        out += lineBreak;
        break;
      case 'mention': {
        const id = String(n.attrs?.id ?? '');
        out += id ? `[~accountid:${id}]` : escapeWiki(String(n.attrs?.text ?? ''), lost);
        break;
      }
      case 'inlineCard':
      case 'blockCard': {
        const url = n.attrs?.url;
        if (typeof url === 'string' && url !== '')
          out += `[${linkTarget(url)}|${linkTarget(url)}|smart-link]`;
        break;
      }
      case 'emoji':
        out += escapeWiki(String(n.attrs?.text ?? n.attrs?.shortName ?? ''), lost);
        break;
      case 'media':
      case 'mediaInline':
        out += image(n, lost);
        break;
      default:
        lost(`the ${n.type} node`);
        out += inline(n.content, lost, lineBreak);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Blocks

function codeBlock(node: AdfNode, lost: Lost): string {
  const code = (node.content ?? []).map((t) => t.text ?? '').join('');
  const language = String(node.attrs?.language ?? '').toLowerCase();
  const macro = CODE_LANGUAGES.has(language) ? 'code' : 'noformat';
  if (language && macro === 'noformat') lost(`code in ${language}, a language Jira's {code} does not know`);
  const close = `{${macro}}`;
  if (code.includes(close)) lost(`code holding ${close}, which would end it`);
  if (/^\s|\s$/.test(code)) lost('white space opening or ending a code block (Jira trims it)');
  const body = code.replaceAll(close, `{ ${macro}}`);
  return `${macro === 'code' ? `{code:${language}}` : close}\n${body}\n${close}`;
}

const isList = (n: AdfNode) => n.type === 'bulletList' || n.type === 'orderedList';

/** A list's items: the item's first paragraph on its marker line, its other blocks on the lines after it. */
function list(node: AdfNode, prefix: string, lost: Lost): string {
  const marker = `${prefix}${node.type === 'bulletList' ? '*' : '#'}`;
  const order = node.attrs?.order;
  if (node.type === 'orderedList' && typeof order === 'number' && order !== 1)
    lost('a numbered list starting at another number than 1');
  const lines: string[] = [];
  for (const item of node.content ?? []) {
    const parts: string[] = [];
    let paragraphs = 0;
    for (const child of item.content ?? []) {
      if (isList(child)) {
        lines.push(`${marker} ${parts.join('\n')}`.trimEnd());
        parts.length = 0;
        lines.push(list(child, marker, lost));
        continue;
      }
      if (child.type === 'paragraph' && ++paragraphs > 1)
        lost('several paragraphs in one list item (they become lines of one)');
      parts.push(block(child, lost, 'item'));
    }
    if (parts.length > 0 || lines.length === 0 || !(item.content ?? []).some(isList))
      lines.push(`${marker} ${parts.join('\n')}`.trimEnd());
  }
  return lines.join('\n');
}

interface Cell {
  header: boolean;
  text: string;
}

/** A table's rows; a merged cell is written once and the cells it covered as empty ones. */
function table(node: AdfNode, lost: Lost): string {
  const grid: (Cell | undefined)[][] = [];
  (node.content ?? []).forEach((row, r) => {
    grid[r] ??= [];
    let col = 0;
    for (const cell of row.content ?? []) {
      while (grid[r]?.[col] !== undefined) col++;
      const colspan = Math.max(1, Number(cell.attrs?.colspan ?? 1) || 1);
      const rowspan = Math.max(1, Number(cell.attrs?.rowspan ?? 1) || 1);
      if (colspan > 1 || rowspan > 1) lost('merged table cells (written as a cell and empty ones)');
      const header = cell.type === 'tableHeader';
      for (let dr = 0; dr < rowspan; dr++)
        for (let dc = 0; dc < colspan; dc++) {
          grid[r + dr] ??= [];
          (grid[r + dr] as (Cell | undefined)[])[col + dc] =
            dr === 0 && dc === 0 ? { header, text: cellText(cell, lost) } : { header, text: ' ' };
        }
      col += colspan;
    }
  });
  const rows = grid.slice(0, (node.content ?? []).length);
  const width = Math.max(0, ...rows.map((r) => r.length));
  return rows
    .map((row) => {
      let out = '';
      let last = '|';
      for (let c = 0; c < width; c++) {
        const cell = row[c] ?? { header: false, text: ' ' };
        last = cell.header ? '||' : '|';
        out += `${last}${cell.text}`;
      }
      return out + last;
    })
    .join('\n');
}

/**
 * A cell's blocks on lines of their own (a blank line would end the table: paragraphs become lines of one); a
 * `|` would end the cell, and Jira's table reads no escape for it.
 */
function cellText(cell: AdfNode, lost: Lost): string {
  const blocks = (cell.content ?? []).map((b) => block(b, lost, 'cell')).filter((b) => b.trim() !== '');
  if (blocks.length > 1 && (cell.content ?? []).filter((b) => b.type === 'paragraph').length > 1)
    lost('several paragraphs in one table cell (they become lines of one)');
  let text = blocks.join('\n').trim();
  if (text.includes('\\|')) {
    lost('a | in a table cell (no escape for it in a table): written as ¦');
    text = text.replaceAll('\\|', '¦');
  }
  return text === '' ? ' ' : text;
}

type Where = 'doc' | 'item' | 'cell' | 'quote';

function block(node: AdfNode, lost: Lost, where: Where): string {
  switch (node.type) {
    case 'paragraph':
      return protectLineStarts(inline(node.content, lost));
    case 'heading': {
      const level = Math.min(6, Math.max(1, Number(node.attrs?.level) || 1));
      const text = inline(node.content, lost, ' ');
      if ((node.content ?? []).some((n) => n.type === 'hardBreak')) lost('a line break inside a heading');
      return text.trim() === '' ? '' : `h${level}. ${text}`;
    }
    case 'bulletList':
    case 'orderedList':
      return list(node, '', lost);
    case 'codeBlock':
      return codeBlock(node, lost);
    case 'rule':
      if (where === 'cell') lost('a rule inside a table cell');
      return where === 'cell' ? '' : '----';
    case 'blockquote':
      if (where === 'cell' || where === 'item')
        lost(`a quote inside a ${where === 'cell' ? 'table cell' : 'list'}`);
      return `{quote}\n${blocks(node.content, lost, 'quote')}\n{quote}`;
    case 'panel': {
      const colour = PANEL_COLOURS[String(node.attrs?.panelType ?? 'info')] ?? PANEL_COLOURS.info;
      return `{panel:bgColor=${colour}}\n${blocks(node.content, lost, 'quote')}\n{panel}`;
    }
    case 'table':
      if (where !== 'doc') lost('a table inside a table, list or quote');
      return table(node, lost);
    case 'mediaSingle':
    case 'mediaGroup': {
      const linkMark = markOf(node.marks, 'link');
      return (node.content ?? []).map((m) => image(m, lost, linkMark)).join(where === 'doc' ? '\n\n' : '\n');
    }
    default:
      lost(`the ${node.type} node (its blocks kept)`);
      return blocks(node.content, lost, where);
  }
}

/**
 * Blocks apart by a blank line; two after a list or a table, after which Jira's parser would otherwise make the
 * next paragraph's first line a paragraph of its own.
 */
function blocks(nodes: readonly AdfNode[] | undefined, lost: Lost, where: Where): string {
  let out = '';
  let gap = '';
  for (const n of nodes ?? []) {
    const text = block(n, lost, where);
    if (text.trim() === '') continue;
    out += gap + text;
    gap = isList(n) || n.type === 'table' ? '\n\n\n' : '\n\n';
  }
  return out;
}

/**
 * An ADF document as wiki markup Jira Cloud reads back as the same document; `lost` hears each thing wiki
 * markup cannot carry as it is (the module's comment).
 */
export function adfToWiki(doc: AdfDoc, lost: Lost = () => undefined): string {
  return blocks(doc.content, lost, 'doc');
}
