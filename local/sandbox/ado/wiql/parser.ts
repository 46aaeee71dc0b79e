/**
 * A recursive-descent parser for the flat-query subset of WIQL a migrator uses:
 *
 *   SELECT field, ... FROM WorkItems [WHERE expr] [ORDER BY field [ASC|DESC], ...]
 *   expr      := and (OR and)*
 *   and       := primary (AND primary)*
 *   primary   := '(' expr ')' | field op operand
 *   op        := = <> < > <= >= | [NOT] IN | [NOT] UNDER | [NOT] CONTAINS [WORDS] | EVER
 *   operand   := literal | '(' literal, ... ')' | @macro [(+|-) number]
 *
 * Link queries (FROM WorkItemLinks), ASOF and MODE are valid WIQL the sandbox does not serve: they are refused
 * with a message saying so rather than answered wrongly.
 */
import { type Token, tokenize, WiqlSyntaxError } from './lexer.ts';

export type Operator =
  | '='
  | '<>'
  | '<'
  | '>'
  | '<='
  | '>='
  | 'in'
  | 'not in'
  | 'under'
  | 'not under'
  | 'contains'
  | 'not contains'
  | 'contains words'
  | 'not contains words'
  | 'ever';

export type Literal =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'macro'; name: string; offset: number }
  | { kind: 'field'; name: string };

export type Expr =
  | { kind: 'and' | 'or'; left: Expr; right: Expr }
  | {
      kind: 'cond';
      field: string;
      op: Operator;
      values: Literal[];
      /** The clause as written, for error messages («[System.ChangedDate] > '…'»). */
      text: string;
    };

export interface WiqlQuery {
  select: string[];
  from: string;
  where: Expr | null;
  orderBy: { field: string; descending: boolean }[];
}

export class WiqlUnsupportedError extends Error {}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly text: string,
  ) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }
  private next(): Token {
    const t = this.peek();
    if (this.pos < this.tokens.length - 1) this.pos++;
    return t;
  }
  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'word' && t.value.toLowerCase() === word;
  }
  private fail(expecting: string): never {
    const t = this.peek();
    const near = t.kind === 'eof' ? '<end of query>' : this.text.slice(t.start, t.end);
    throw new WiqlSyntaxError(`Expecting ${expecting}. The error is caused by «${near}».`, near);
  }
  private expectWord(word: string): void {
    if (!this.isWord(word)) this.fail(word.toUpperCase());
    this.next();
  }

  parse(): WiqlQuery {
    this.expectWord('select');
    const select = [this.fieldName()];
    while (this.peek().kind === 'punct' && this.peek().value === ',') {
      this.next();
      select.push(this.fieldName());
    }
    this.expectWord('from');
    const from = this.peek();
    if (from.kind !== 'word') this.fail('WorkItems or WorkItemLinks');
    this.next();
    if (from.value.toLowerCase() === 'workitemlinks') {
      throw new WiqlUnsupportedError(
        'The sandbox serves flat queries only (FROM WorkItems); link queries are not supported.',
      );
    }
    if (from.value.toLowerCase() !== 'workitems') this.fail('WorkItems or WorkItemLinks');
    let where: Expr | null = null;
    if (this.isWord('where')) {
      this.next();
      where = this.orExpr();
    }
    const orderBy: WiqlQuery['orderBy'] = [];
    if (this.isWord('order')) {
      this.next();
      this.expectWord('by');
      do {
        if (orderBy.length) this.next();
        const field = this.fieldName();
        let descending = false;
        if (this.isWord('asc')) this.next();
        else if (this.isWord('desc')) {
          this.next();
          descending = true;
        }
        orderBy.push({ field, descending });
      } while (this.peek().kind === 'punct' && this.peek().value === ',');
    }
    if (this.isWord('asof')) throw new WiqlUnsupportedError('The sandbox does not support ASOF queries.');
    if (this.isWord('mode')) throw new WiqlUnsupportedError('The sandbox does not support MODE clauses.');
    if (this.peek().kind !== 'eof') this.fail('end of query');
    return { select, from: from.value, where, orderBy };
  }

  private fieldName(): string {
    const t = this.peek();
    // Bare names are only reference names (System.Id); friendly names need brackets ([Work Item Type]).
    if (t.kind === 'field' || (t.kind === 'word' && t.value.includes('.'))) {
      this.next();
      return t.value;
    }
    return this.fail('a field name');
  }

  private orExpr(): Expr {
    let left = this.andExpr();
    while (this.isWord('or')) {
      this.next();
      left = { kind: 'or', left, right: this.andExpr() };
    }
    return left;
  }

  private andExpr(): Expr {
    let left = this.primary();
    while (this.isWord('and')) {
      this.next();
      left = { kind: 'and', left, right: this.primary() };
    }
    return left;
  }

  private primary(): Expr {
    const t = this.peek();
    if (t.kind === 'punct' && t.value === '(') {
      this.next();
      const inner = this.orExpr();
      const close = this.peek();
      if (close.kind !== 'punct' || close.value !== ')') this.fail(')');
      this.next();
      return inner;
    }
    if (this.isWord('not'))
      throw new WiqlUnsupportedError(
        'The sandbox does not support NOT before a clause; use <>, NOT IN or NOT UNDER.',
      );
    const start = t.start;
    const field = this.fieldName();
    const op = this.operator();
    const values = op === 'in' || op === 'not in' ? this.list() : [this.literal()];
    const end = this.tokens[this.pos - 1]!.end;
    return { kind: 'cond', field, op, values, text: this.text.slice(start, end) };
  }

  private operator(): Operator {
    const t = this.peek();
    if (t.kind === 'op' && t.value !== '+' && t.value !== '-') {
      this.next();
      return t.value;
    }
    const negated = this.isWord('not');
    if (negated) this.next();
    const w = this.peek();
    if (w.kind !== 'word') return this.fail('a comparison operator');
    const word = w.value.toLowerCase();
    if (word === 'in' || word === 'under') {
      this.next();
      return (negated ? `not ${word}` : word) as Operator;
    }
    if (word === 'contains') {
      this.next();
      if (this.isWord('words')) {
        this.next();
        return negated ? 'not contains words' : 'contains words';
      }
      return negated ? 'not contains' : 'contains';
    }
    if (word === 'ever' && !negated) {
      this.next();
      return 'ever';
    }
    return this.fail('a comparison operator');
  }

  private list(): Literal[] {
    const open = this.peek();
    if (open.kind !== 'punct' || open.value !== '(') this.fail('(');
    this.next();
    const values = [this.literal()];
    while (this.peek().kind === 'punct' && this.peek().value === ',') {
      this.next();
      values.push(this.literal());
    }
    const close = this.peek();
    if (close.kind !== 'punct' || close.value !== ')') this.fail(')');
    this.next();
    return values;
  }

  private literal(): Literal {
    const t = this.peek();
    if (t.kind === 'string' || t.kind === 'number') {
      this.next();
      return t.kind === 'string' ? { kind: 'string', value: t.value } : { kind: 'number', value: t.value };
    }
    if (t.kind === 'op' && t.value === '-' && this.peek(1).kind === 'number') {
      this.next();
      return { kind: 'number', value: -(this.next().value as number) };
    }
    if (t.kind === 'field') {
      this.next();
      return { kind: 'field', name: t.value };
    }
    if (t.kind === 'word' && (t.value.toLowerCase() === 'true' || t.value.toLowerCase() === 'false')) {
      this.next();
      return { kind: 'string', value: t.value };
    }
    if (t.kind === 'macro') {
      this.next();
      let offset = 0;
      const sign = this.peek();
      if (
        sign.kind === 'op' &&
        (sign.value === '+' || sign.value === '-') &&
        this.peek(1).kind === 'number'
      ) {
        this.next();
        offset = (this.next().value as number) * (sign.value === '-' ? -1 : 1);
      }
      return { kind: 'macro', name: t.value, offset };
    }
    return this.fail('a value');
  }
}

export function parseWiql(text: string): WiqlQuery {
  return new Parser(tokenize(text), text).parse();
}
