/** WIQL tokens: bracketed fields, words (keywords and bare reference names), literals, macros, operators. */

export type Token =
  | { kind: 'field'; value: string; start: number; end: number }
  | { kind: 'word'; value: string; start: number; end: number }
  | { kind: 'string'; value: string; start: number; end: number }
  | { kind: 'number'; value: number; start: number; end: number }
  | { kind: 'macro'; value: string; start: number; end: number }
  | { kind: 'op'; value: '=' | '<>' | '<' | '>' | '<=' | '>=' | '+' | '-'; start: number; end: number }
  | { kind: 'punct'; value: '(' | ')' | ',' | '.'; start: number; end: number }
  | { kind: 'eof'; value: ''; start: number; end: number };

export class WiqlSyntaxError extends Error {
  constructor(
    message: string,
    readonly near: string,
  ) {
    super(message);
  }
}

const isWordStart = (c: string) => /[A-Za-z_]/.test(c);
const isWordChar = (c: string) => /[A-Za-z0-9_.]/.test(c);

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '[') {
      const close = text.indexOf(']', i);
      if (close < 0) throw new WiqlSyntaxError('Unterminated field reference.', text.slice(i, i + 20));
      out.push({ kind: 'field', value: text.slice(i + 1, close).trim(), start, end: close + 1 });
      i = close + 1;
      continue;
    }
    if (c === "'" || c === '"') {
      // A quote inside a literal is doubled, as in SQL.
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length)
          throw new WiqlSyntaxError('Unterminated string literal.', text.slice(start, start + 20));
        const ch = text[i]!;
        if (ch === c) {
          if (text[i + 1] === c) {
            value += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += ch;
        i++;
      }
      out.push({ kind: 'string', value, start, end: i });
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(text.slice(i))!;
      out.push({ kind: 'number', value: Number(m[0]), start, end: i + m[0].length });
      i += m[0].length;
      continue;
    }
    if (c === '@') {
      const m = /^@[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
      if (!m) throw new WiqlSyntaxError('Expecting a macro name after @.', text.slice(i, i + 10));
      out.push({ kind: 'macro', value: m[0].slice(1).toLowerCase(), start, end: i + m[0].length });
      i += m[0].length;
      continue;
    }
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < text.length && isWordChar(text[j]!)) j++;
      out.push({ kind: 'word', value: text.slice(i, j), start, end: j });
      i = j;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '<>' || two === '<=' || two === '>=' || two === '!=') {
      out.push({ kind: 'op', value: two === '!=' ? '<>' : two, start, end: i + 2 });
      i += 2;
      continue;
    }
    if (c === '=' || c === '<' || c === '>' || c === '+' || c === '-') {
      out.push({ kind: 'op', value: c, start, end: i + 1 });
      i++;
      continue;
    }
    // '.' joins a link query's prefix to a field ([Source].[System.Id]).
    if (c === '(' || c === ')' || c === ',' || c === '.') {
      out.push({ kind: 'punct', value: c, start, end: i + 1 });
      i++;
      continue;
    }
    throw new WiqlSyntaxError(`Unexpected character '${c}' at position ${i + 1}.`, text.slice(i, i + 10));
  }
  out.push({ kind: 'eof', value: '', start: text.length, end: text.length });
  return out;
}
