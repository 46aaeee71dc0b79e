/**
 * Jira wiki markup -> ADF, for the text the JSON importer takes (descriptions, comments, worklog comments,
 * text custom fields), as Jira Cloud stores such text after an import and answers it through `/rest/api/3`.
 * Jira Cloud stores rich text as ADF ("in Jira Cloud platform, the text in issue comments and in textarea custom
 * fields is stored as ADF", Atlassian's ADF structure page) and converts wiki markup into it with Atlassian's
 * wiki markup transformer (`@atlaskit/editor-wikimarkup-transformer`, Apache-2.0, version 12.2; its parser takes
 * Jira's conversion contexts: the attachments by file name, mentions, issue keys). The rules below follow
 * that parser, rule by rule, for the part the service's writer uses (wiki.ts) and a little more. Two readers
 * share it: the verification of an imported run (the document an import file's text should become in Jira) and
 * the Jira sandbox's importer (local/sandbox/jira/wiki.ts), so what the product expects and what the sandbox
 * plays are one reading of Jira's parser, not two:
 *
 * - blocks: paragraphs (a blank line ends one; a line break inside is a `hardBreak`), `h1.`-`h6.`, `bq.`,
 *   `----` (rule), lists (`*`, `#`, `-`, nested and mixed; an item goes on over the lines that follow it until a
 *   blank line or another item, a code block or image on them inside the item), tables (`||header||` cells,
 *   their text made strong as Jira makes it, `|cell|`; a row goes on over lines until one ends with `|`; a cell's
 *   lines are its blocks: lists, line breaks), `{code:language}` (a language Jira does not know reads as Java; no
 *   language, Java too), `{noformat}`, `{quote}`, `{panel:bgColor=...}` (the panel type of its colour), images
 *   `!name!` (mediaSingle > media, `alt=` and `href=` read; the file id of the attachment of that name
 *   when the conversion knows one, else the name itself, as Jira leaves it; 200 by 183 unless sized);
 * - inline: backslash escapes (`-#*_+?^~|%{}[]()!@` only; `\\` a forced line break unless a backslash follows in
 *   the same word), marks plain (`*x*`, opening after no letter or digit, closing before none) and braced
 *   (`{*}x{*}`, anywhere) for `*` strong, `_` em, `+` underline, `-` strike, `^` sup, `~` sub; `{{code}}`,
 *   `{color:#hex}x{color}`, links `[text|url]` and `[url]` (a link on code text is not kept, as Jira keeps none),
 *   `[~accountid:ID]` mentions, `[url|url|smart-link]` inline cards, bare http(s), ftp and mailto addresses
 *   as links, emoticons (`:)`, `(y)` ...) as emoji, ` -- ` and ` --- ` as dashes.
 *
 * HTML entities are text: Jira's parser reads none (`&#92;` stays those five characters).
 */

import type { AdfDoc, AdfMark, AdfNode } from '../adf/types.ts';

/** What the conversion knows of the issue: its attachments by file name, the people mentions name. */
export interface WikiContext {
  /** The Media Services file id of the attachment of that name. */
  attachment?(name: string): string | undefined;
  /** The display name of an account a mention names. */
  displayName?(accountId: string): string | undefined;
}

const ESCAPABLE = new Set('-#*_+?^~|%{}[]()!@');
/** A letter or digit, or anything outside ASCII: Jira opens and closes no plain mark next to one. */
const WORDLIKE = /[a-zA-Z0-9]|[^\x20-\x7e\t\n\r]/;
const LINK_TEXT =
  /^((?:(?:https?|ftps?):\/\/)|irc:\/\/|mailto:)([\w?!~^/\\#$%&'()*+,\-.:;<=@]*[\w~^/\\#$%&'()*+,\-/:;<=@])/i;
const SAFE_URL = /^(?:https?:\/\/|ftps?:\/\/|mailto:|irc:\/\/)/i;
const CODE_LANGUAGES = new Set(
  'abap actionscript ada arduino autoit c c++ clojure coffeescript csharp css cuda d dart delphi elixir erlang fortran foxpro go groovy haskell haxe html java javascript json julia kotlin latex livescript lua mathematica matlab objective-c objective-j objectpascal ocaml octave perl php powershell prolog puppet python qml r racket restructuredtext ruby rust sass scala scheme shell smalltalk sql standardml swift tcl tex typescript vala vbnet verilog vhdl xml xquery'.split(
    ' ',
  ),
);
const PANELS: Record<string, string> = {
  '#deebff': 'info',
  '#eae6ff': 'note',
  '#e3fcef': 'success',
  '#fffae6': 'warning',
  '#ffebe6': 'error',
};
const EMOTICONS: Record<string, { id: string; shortName: string; text: string }> = {
  ':)': { id: '1f642', shortName: ':slight_smile:', text: '🙂' },
  ':-)': { id: '1f642', shortName: ':slight_smile:', text: '🙂' },
  ':(': { id: '1f61e', shortName: ':disappointed:', text: '😞' },
  ':-(': { id: '1f61e', shortName: ':disappointed:', text: '😞' },
  ':P': { id: '1f61b', shortName: ':stuck_out_tongue:', text: '😛' },
  ':-P': { id: '1f61b', shortName: ':stuck_out_tongue:', text: '😛' },
  ':p': { id: '1f61b', shortName: ':stuck_out_tongue:', text: '😛' },
  ':-p': { id: '1f61b', shortName: ':stuck_out_tongue:', text: '😛' },
  ':D': { id: '1f603', shortName: ':smiley:', text: '😃' },
  ':-D': { id: '1f603', shortName: ':smiley:', text: '😃' },
  ';)': { id: '1f609', shortName: ':wink:', text: '😉' },
  ';-)': { id: '1f609', shortName: ':wink:', text: '😉' },
  '(y)': { id: '1f44d', shortName: ':thumbsup:', text: '👍' },
  '(n)': { id: '1f44e', shortName: ':thumbsdown:', text: '👎' },
  '(i)': { id: 'atlassian-info', shortName: ':info:', text: ':info:' },
  '(/)': { id: 'atlassian-check_mark', shortName: ':check_mark:', text: ':check_mark:' },
  '(x)': { id: 'atlassian-cross_mark', shortName: ':cross_mark:', text: ':cross_mark:' },
  '(!)': { id: 'atlassian-warning', shortName: ':warning:', text: ':warning:' },
  '(+)': { id: 'atlassian-plus', shortName: ':plus:', text: ':plus:' },
  '(-)': { id: 'atlassian-minus', shortName: ':minus:', text: ':minus:' },
  '(?)': { id: 'atlassian-question_mark', shortName: ':question:', text: ':question:' },
  '(on)': { id: 'atlassian-light_bulb_on', shortName: ':light_bulb_on:', text: ':light_bulb_on:' },
  '(off)': { id: 'atlassian-light_bulb_off', shortName: ':light_bulb_off:', text: ':light_bulb_off:' },
  '(*)': { id: 'atlassian-yellow_star', shortName: ':yellow_star:', text: ':yellow_star:' },
};
const MARKS: Record<string, AdfMark> = {
  '*': { type: 'strong' },
  _: { type: 'em' },
  '+': { type: 'underline' },
  '-': { type: 'strike' },
  '^': { type: 'subsup', attrs: { type: 'sup' } },
  '~': { type: 'subsup', attrs: { type: 'sub' } },
};

const withMark = (marks: readonly AdfMark[], mark: AdfMark): AdfMark[] =>
  marks.some((m) => m.type === mark.type) ? [...marks] : [...marks, mark];

/** Adds a mark to text nodes that carry neither it nor code (Jira mixes code with no other mark). */
function marked(nodes: AdfNode[], mark: AdfMark): AdfNode[] {
  return nodes.map((n) =>
    n.type === 'text' && !n.marks?.some((m) => m.type === mark.type || m.type === 'code')
      ? { ...n, marks: withMark(n.marks ?? [], mark) }
      : n,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Inline

/** Where a mark opened at `i` closes (the index of its closing symbol), or -1: the transformer's rules. */
function markEnd(s: string, i: number, open: string, close: string): number {
  const wrapped = open.startsWith('{');
  if (!wrapped && i > 0 && WORDLIKE.test(s[i - 1] ?? '') && s[i - 1] !== '\u00a0') return -1;
  const first = s[i + open.length] ?? '';
  if (first === ' ' || first === '') return -1;
  for (let j = i + open.length; j < s.length; j++) {
    const c = s[j] ?? '';
    if (c === '\n') return -1;
    if (c === '\\') {
      j++;
      continue;
    }
    if (s.startsWith('{{', j) && open !== '{{') {
      j++;
      continue;
    }
    if (c === '[') {
      const end = s.indexOf(']', j);
      if (end > j && !s.slice(j, end).includes('\n')) {
        j = end;
        continue;
      }
    }
    if (s.startsWith(close, j)) {
      if (j === i + open.length) return -1;
      const after = s[j + close.length] ?? '';
      if (!close.startsWith('{') && after !== '' && WORDLIKE.test(after) && after !== '\u00a0') continue;
      if (s[j - 1] === ' ') return -1;
      return j;
    }
  }
  return -1;
}

/** The symbols of a mark starting at `i`: braced (`{*}`) when written so, its closing braced when that is. */
function symbols(s: string, i: number, ch: string): { open: string; close: string } | undefined {
  if (s.startsWith(`{${ch}}`, i)) {
    const at = s.indexOf(ch, i + 3);
    const close = at > 0 && s[at - 1] === '{' && s[at + 1] === '}' ? `{${ch}}` : ch;
    return { open: `{${ch}}`, close };
  }
  return s[i] === ch ? { open: ch, close: ch } : undefined;
}

interface Inline {
  nodes: AdfNode[];
  /** Images met in the text: each splits the paragraph it is in (an image is a block). */
  blocks: { at: number; node: AdfNode }[];
}

function mediaSingle(raw: string, ctx: WikiContext): AdfNode {
  const [name = '', attrText = ''] = raw.split('|');
  const attrs: Record<string, string> = {};
  for (const part of attrText.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0)
      attrs[part.slice(0, eq).trim().toLowerCase()] = part
        .slice(eq + 1)
        .trim()
        .replace(/^"(.+)"$/, '$1');
  }
  const media: AdfNode = {
    type: 'media',
    attrs: {
      ...(LINK_TEXT.test(name)
        ? { type: 'external', url: name }
        : { type: 'file', id: ctx.attachment?.(name) ?? name, collection: '' }),
      width: Number.parseInt(attrs.width ?? '', 10) || 200,
      height: Number.parseInt(attrs.height ?? '', 10) || 183,
      ...(attrs.alt ? { alt: attrs.alt } : {}),
    },
    ...(attrs.href ? { marks: [{ type: 'link', attrs: { href: attrs.href } }] } : {}),
  };
  return { type: 'mediaSingle', attrs: { layout: 'center' }, content: [media] };
}

/** A `[...]` link at `i`: its nodes and length, or undefined (then `[` is text). */
function linkAt(
  s: string,
  i: number,
  marks: readonly AdfMark[],
  ctx: WikiContext,
): { nodes: AdfNode[]; length: number } | undefined {
  const m = /^\[([^[\]\n]+)\]/.exec(s.slice(i));
  if (!m) return undefined;
  const body = m[1] as string;
  const length = m[0].length;
  if (body.startsWith('~')) {
    const id = body.slice(1).replace(/^accountid:/i, '');
    if (!id) return undefined;
    const name = ctx.displayName?.(id);
    return { nodes: [{ type: 'mention', attrs: { id, text: name ? `@${name}` : '' } }], length };
  }
  const parts = body.split('|');
  if (parts.length === 3 && parts[2]?.trim() === 'smart-link') {
    return { nodes: [{ type: 'inlineCard', attrs: { url: (parts[1] ?? '').trim() } }], length };
  }
  const label = parts.length > 1 ? (parts[0] as string) : undefined;
  const href = (parts.length > 1 ? (parts[1] as string) : body).trim();
  if (!SAFE_URL.test(href)) return undefined;
  const link: AdfMark = { type: 'link', attrs: { href } };
  const text = label ?? href.replace(/^mailto:/i, '');
  const inner = inline(text, marks, ctx, true).nodes;
  return { nodes: marked(inner, link), length };
}

/** Inline markup -> nodes; `inLink` stops links and bare addresses inside a link's text. */
function inline(s: string, marks: readonly AdfMark[], ctx: WikiContext, inLink = false): Inline {
  const nodes: AdfNode[] = [];
  const blocks: { at: number; node: AdfNode }[] = [];
  let buffer = '';
  const flush = () => {
    if (buffer !== '')
      nodes.push(
        marks.length > 0 ? { type: 'text', text: buffer, marks: [...marks] } : { type: 'text', text: buffer },
      );
    buffer = '';
  };
  for (let i = 0; i < s.length; ) {
    const c = s[i] as string;
    if (c === '\\') {
      const next = s[i + 1] ?? '';
      if (next === '\\' && s[i - 1] !== '\\' && /^\\{2}(?!\S*\\)/.test(s.slice(i))) {
        flush();
        nodes.push({ type: 'hardBreak' });
        i += 2;
        continue;
      }
      buffer += ESCAPABLE.has(next) && s[i - 1] !== '\\' ? next : `\\${next}`;
      i += 2;
      continue;
    }
    if (c === '\n') {
      flush();
      nodes.push({ type: 'hardBreak' });
      i += 1;
      continue;
    }
    if (c === '!') {
      const end = markEnd(s, i, '!', '!');
      const raw = end > i + 1 ? s.slice(i + 1, end) : '';
      if (raw) {
        flush();
        blocks.push({ at: nodes.length, node: mediaSingle(raw, ctx) });
        i = end + 1;
        continue;
      }
    }
    if (c === '[' && !inLink) {
      const link = linkAt(s, i, marks, ctx);
      if (link) {
        flush();
        nodes.push(...link.nodes);
        i += link.length;
        continue;
      }
    }
    if (!inLink && /[hfmi]/i.test(c) && (i === 0 || !WORDLIKE.test(s[i - 1] ?? ''))) {
      const m = LINK_TEXT.exec(s.slice(i));
      if (m) {
        flush();
        const url = m[0].replace(/[.!]+$/, '');
        const text = m[1]?.toLowerCase() === 'mailto:' ? url.slice('mailto:'.length) : url;
        nodes.push({ type: 'text', text, marks: withMark(marks, { type: 'link', attrs: { href: url } }) });
        i += url.length;
        continue;
      }
    }
    if (s.startsWith('{{', i)) {
      const end = s.indexOf('}}', i + 2);
      if (end > i + 2) {
        let close = end;
        while (s[close + 2] === '}') close++;
        flush();
        const code = s.slice(i + 2, close).replace(/\\([-#*_+?^~|%{}[\]()!@])/g, '$1');
        // `code` takes no other mark but a link, and Jira gives code none of the marks around it.
        nodes.push({ type: 'text', text: code, marks: [{ type: 'code' }] });
        i = close + 2;
        continue;
      }
    }
    if (s.startsWith('{color', i)) {
      const m = /^\{color(?::([^}]*))?\}([\s\S]*?)\{color\}/.exec(s.slice(i));
      if (m) {
        flush();
        const colour = (m[1] ?? '').trim();
        const inner = inline(m[2] ?? '', marks, ctx, inLink);
        nodes.push(
          ...(colour
            ? marked(inner.nodes, { type: 'textColor', attrs: { color: colour.toLowerCase() } })
            : inner.nodes),
        );
        i += m[0].length;
        continue;
      }
    }
    const ch = c === '{' ? (s[i + 1] ?? '') : c;
    if (MARKS[ch] && (c !== '{' || s[i + 2] === '}')) {
      const sym = symbols(s, i, ch);
      const end = sym ? markEnd(s, i, sym.open, sym.close) : -1;
      if (sym && end > 0) {
        flush();
        const inner = inline(s.slice(i + sym.open.length, end), marks, ctx, inLink);
        nodes.push(...marked(inner.nodes, MARKS[ch] as AdfMark));
        for (const b of inner.blocks) blocks.push({ at: nodes.length, node: b.node });
        i = end + sym.close.length;
        continue;
      }
    }
    if (c === ' ' && (s.startsWith(' -- ', i) || s.startsWith(' --- ', i))) {
      const long = s.startsWith(' --- ', i);
      buffer += long ? ' \u2014 ' : ' \u2013 ';
      i += long ? 5 : 4;
      continue;
    }
    if (c === ':' || c === ';' || c === '(') {
      const hit = Object.keys(EMOTICONS)
        .filter((k) => s.startsWith(k, i) && /^$|[^A-Za-z0-9]/.test(s[i + k.length] ?? ''))
        .sort((a, b) => a.length - b.length)[0];
      if (hit) {
        flush();
        nodes.push({ type: 'emoji', attrs: { ...EMOTICONS[hit] } });
        i += hit.length;
        continue;
      }
    }
    buffer += c;
    i += 1;
  }
  flush();
  return { nodes, blocks };
}

/** Exported for tests: inline markup -> inline nodes (images dropped). */
export const inlineToAdf = (s: string, marks: readonly AdfMark[] = [], ctx: WikiContext = {}): AdfNode[] =>
  inline(s, marks, ctx).nodes;

/** Trailing and leading hard breaks and blank text are no content; adjacent texts of the same marks merge. */
function tidy(nodes: AdfNode[]): AdfNode[] {
  const out: AdfNode[] = [];
  for (const n of nodes) {
    const last = out.at(-1);
    if (
      last?.type === 'text' &&
      n.type === 'text' &&
      JSON.stringify(last.marks ?? []) === JSON.stringify(n.marks ?? [])
    )
      last.text = (last.text ?? '') + (n.text ?? '');
    else out.push({ ...n });
  }
  while (out[0]?.type === 'hardBreak') out.shift();
  while (out.at(-1)?.type === 'hardBreak') out.pop();
  return out;
}

/** A paragraph's text -> a paragraph, split around the images in it. */
function paragraphs(text: string, ctx: WikiContext): AdfNode[] {
  const { nodes, blocks } = inline(text, [], ctx);
  const out: AdfNode[] = [];
  let at = 0;
  const push = (part: AdfNode[]) => {
    const content = tidy(part);
    if (content.some((n) => n.type !== 'text' || (n.text ?? '').trim() !== ''))
      out.push({ type: 'paragraph', content });
  };
  for (const b of blocks) {
    push(nodes.slice(at, b.at));
    out.push(b.node);
    at = b.at;
  }
  push(nodes.slice(at));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Blocks

const LIST_ITEM = /^([*#]{1,20}|-) (.*)$/;
const HEADING = /^h([1-6])\.\s*(.*)$/;
const RULE = /^-{4,5}\s*$/;
const QUOTE_LINE = /^bq\.\s*(.*)$/;
const MACRO = /^\{(code|noformat|quote|panel)((?::[^}]*)?)\}/;

/** `{code:java}` or `{code:title=A.java|language=java}`: the language Jira reads; Java when none it knows. */
function languageOf(params: string): string {
  const keys = params
    .replace(/^:/, '')
    .split('|')
    .map((p) => p.split('=')[0]?.trim().toLowerCase() ?? '');
  const values = params
    .replace(/^:/, '')
    .split('|')
    .map((p) => (p.includes('=') ? (p.split('=')[1]?.trim().toLowerCase() ?? '') : ''));
  const hit = keys.find((k) => CODE_LANGUAGES.has(k)) ?? values.find((v) => CODE_LANGUAGES.has(v));
  return hit ?? (keys.includes('objc') ? 'objective-c' : 'java');
}

/** A paired macro starting `source` at `at`: its kind, parameters, content and where it ends. */
function macroAt(
  source: string,
  at: number,
): { kind: string; params: string; body: string; end: number } | undefined {
  const m = MACRO.exec(source.slice(at));
  if (!m) return undefined;
  const kind = m[1] as string;
  const close = source.indexOf(`{${kind}}`, at + m[0].length);
  if (close < 0) return undefined;
  return {
    kind,
    params: m[2] ?? '',
    body: source.slice(at + m[0].length, close),
    end: close + kind.length + 2,
  };
}

function macroBlock(kind: string, params: string, body: string, ctx: WikiContext): AdfNode {
  if (kind === 'code' || kind === 'noformat') {
    const code = body.replace(/^\s+|\s+$/g, '');
    return {
      type: 'codeBlock',
      attrs: kind === 'code' ? { language: languageOf(params) } : {},
      ...(code ? { content: [{ type: 'text', text: code }] } : {}),
    };
  }
  const content = blocksOf(body, ctx);
  if (kind === 'quote')
    return {
      type: 'blockquote',
      content: content.length > 0 ? content : [{ type: 'paragraph', content: [] }],
    };
  const colour = /bgColor=([^|]+)/i.exec(params)?.[1]?.trim().toLowerCase() ?? '';
  return { type: 'panel', attrs: { panelType: PANELS[colour] ?? 'info' }, content };
}

/** List lines (markers kept, each item's own lines) -> nested bulletList/orderedList nodes. */
function lists(items: { marker: string; lines: string[] }[], ctx: WikiContext): AdfNode[] {
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
    const content = itemBlocks(item.lines, ctx);
    const listItem: AdfNode = { type: 'listItem', content };
    if (top && top.depth === depth) {
      top.node.content?.push(listItem);
      continue;
    }
    const list: AdfNode = {
      type: kind,
      ...(kind === 'orderedList' ? { attrs: { order: 1 } } : {}),
      content: [listItem],
    };
    const parentItem = top?.node.content?.at(-1);
    if (parentItem) parentItem.content?.push(list);
    else blocks.push(list);
    stack.push({ node: list, depth, kind });
  }
  return blocks;
}

/** An item's lines: its text, code blocks on lines of their own, images. */
function itemBlocks(lines: string[], ctx: WikiContext): AdfNode[] {
  const text = lines.join('\n');
  const out: AdfNode[] = [];
  let at = 0;
  let rest = '';
  for (let i = 0; i < text.length; i++) {
    const macro = text[i] === '{' && (i === 0 || text[i - 1] === '\n') ? macroAt(text, i) : undefined;
    if (macro && (macro.kind === 'code' || macro.kind === 'noformat')) {
      rest = text.slice(at, i);
      if (rest.trim()) out.push(...paragraphs(rest.replace(/\n$/, ''), ctx));
      out.push(macroBlock(macro.kind, macro.params, macro.body, ctx));
      at = macro.end;
      i = macro.end - 1;
    }
  }
  rest = text.slice(at).replace(/^\n/, '');
  if (rest.trim() || out.length === 0) out.push(...paragraphs(rest, ctx));
  if (out.length === 0 || out[0]?.type !== 'paragraph') out.unshift({ type: 'paragraph', content: [] });
  return out;
}

/** Table lines -> a table: rows go on over lines until a line ends with `|`; `||` cells are headers. */
function table(lines: string[], ctx: WikiContext): AdfNode {
  const rows: { header: boolean; text: string }[][] = [];
  let row: { header: boolean; text: string }[] = [];
  const text = lines.join('\n');
  let i = 0;
  let cell: { header: boolean; text: string } | undefined;
  const endCell = () => {
    if (cell && cell.text.trim() !== '') row.push(cell);
    else if (cell && cell.text !== '') row.push({ ...cell, text: '' });
    cell = undefined;
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '|') {
      endCell();
      const header = text[i + 1] === '|';
      i += header ? 2 : 1;
      cell = { header, text: '' };
      continue;
    }
    if (c === '\n') {
      const before = text.slice(text.lastIndexOf('|', i - 1) + 1, i);
      if (before === '' || text[i + 1] === '|') {
        // The row's end: its last cell closed by the `|` before, or the next line opening a row.
        if (before !== '' && cell) cell.text += '';
        endCell();
        if (row.length > 0) rows.push(row);
        row = [];
        i += 1;
        continue;
      }
      if (cell) cell.text += c;
      i += 1;
      continue;
    }
    // Links, images and macros are flown over: a `|` inside them does not end the cell.
    const span =
      c === '['
        ? /^\[[^[\]\n]+\]/.exec(text.slice(i))?.[0]
        : c === '!'
          ? /^![^!\n]+!/.exec(text.slice(i))?.[0]
          : c === '{'
            ? /^\{color[^}]*\}[\s\S]*?\{color\}/.exec(text.slice(i))?.[0]
            : undefined;
    if (span && cell) {
      cell.text += span;
      i += span.length;
      continue;
    }
    if (cell) cell.text += c;
    i += 1;
  }
  if (cell && cell.text.trim() !== '') row.push(cell);
  if (row.length > 0) rows.push(row);
  return {
    type: 'table',
    attrs: { isNumberColumnEnabled: false, layout: 'default' },
    content: rows.map((r) => ({
      type: 'tableRow',
      content: r.map((cl) => {
        let content = blocksOf(cl.text.trim(), ctx, true);
        if (content.length === 0) content = [{ type: 'paragraph', content: [] }];
        if (cl.header) content = content.map((b) => strongInside(b));
        return { type: cl.header ? 'tableHeader' : 'tableCell', attrs: {}, content };
      }),
    })),
  };
}

const strongInside = (n: AdfNode): AdfNode =>
  n.type === 'text'
    ? (marked([n], { type: 'strong' })[0] as AdfNode)
    : n.content
      ? { ...n, content: n.content.map(strongInside) }
      : n;

/**
 * Wiki markup -> blocks. In a table cell (`cell`), a blank line cannot occur (it ends the table): the cell's
 * lines are one paragraph with line breaks, lists and headings on lines of their own.
 */
function blocksOf(source: string, ctx: WikiContext, cell = false): AdfNode[] {
  const out: AdfNode[] = [];
  const lines = source.split('\n');
  let para: string[] = [];
  let items: { marker: string; lines: string[] }[] = [];
  let tableLines: string[] = [];
  const endParagraph = () => {
    if (para.length > 0) out.push(...paragraphs(para.join('\n'), ctx));
    para = [];
  };
  const endList = () => {
    if (items.length > 0) out.push(...lists(items, ctx));
    items = [];
  };
  const endTable = () => {
    if (tableLines.length > 0) out.push(table(tableLines, ctx));
    tableLines = [];
  };
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n] as string;
    const line = raw.replace(/^[ \t]+/, '');
    if (line.trim() === '') {
      endParagraph();
      endList();
      endTable();
      continue;
    }
    if (tableLines.length > 0) {
      const open = !/\|\s*$/.test(tableLines.at(-1) ?? '');
      if (open || line.startsWith('|')) {
        tableLines.push(raw);
        continue;
      }
      endTable();
    }
    if (line.startsWith('{')) {
      const rest = lines.slice(n).join('\n');
      const macro = macroAt(rest, 0);
      if (macro && items.length === 0) {
        endParagraph();
        out.push(macroBlock(macro.kind, macro.params, macro.body, ctx));
        const used = rest.slice(0, macro.end).split('\n').length - 1;
        const after = rest.slice(macro.end).split('\n')[0] ?? '';
        n += used;
        if (after.trim() !== '') {
          lines[n] = after;
          n -= 1;
        }
        continue;
      }
      if (macro && items.length > 0) {
        const body = rest.slice(0, macro.end).split('\n');
        items.at(-1)?.lines.push(...body);
        n += body.length - 1;
        continue;
      }
    }
    if (!cell && line.startsWith('|')) {
      endParagraph();
      endList();
      tableLines.push(raw);
      continue;
    }
    const item = RULE.test(line) ? null : LIST_ITEM.exec(line);
    if (item) {
      endParagraph();
      items.push({ marker: item[1] ?? '*', lines: [item[2] ?? ''] });
      continue;
    }
    if (items.length > 0) {
      items.at(-1)?.lines.push(line);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      const content = tidy(inline(heading[2] ?? '', [], ctx).nodes);
      out.push({ type: 'heading', attrs: { level: Number(heading[1]) }, content });
    } else if (RULE.test(line)) {
      endParagraph();
      out.push({ type: 'rule' });
    } else if (QUOTE_LINE.test(line)) {
      endParagraph();
      out.push({ type: 'blockquote', content: paragraphs(QUOTE_LINE.exec(line)?.[1] ?? '', ctx) });
    } else para.push(line);
  }
  endParagraph();
  endList();
  endTable();
  return out;
}

/** A whole text in wiki markup as an ADF document (`content: []` for an empty one). */
export function wikiToAdf(markup: string, ctx: WikiContext = {}): AdfDoc {
  return { type: 'doc', version: 1, content: blocksOf(markup.replace(/\r\n?/g, '\n'), ctx) };
}
