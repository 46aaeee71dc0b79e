/**
 * The JQL a migrator needs, parsed properly (tokens, precedence, parentheses) rather than pattern-matched:
 *   clauses   project, key/issuekey/id, labels, issuetype/type, status, parent, sprint, summary, assignee,
 *             reporter, created, updated
 *   operators = != IN, NOT IN, ~ !~ (summary), IS [NOT] EMPTY|NULL, > >= < <= (dates, ids)
 *   logic     AND, OR, NOT, ( )       ordering  ORDER BY key|issuekey|id|created|updated|summary ASC|DESC
 * Errors answer Jira's messages: unknown fields, values that do not exist, malformed queries, and queries
 * without any restriction (the enhanced search refuses unbounded JQL).
 */
import { ISSUE_TYPES } from './catalog.ts';
import type { IndexDoc, JiraStore } from './store.ts';

export class JqlError extends Error {}

type Token =
  | { kind: 'word'; text: string; pos: number }
  | { kind: 'string'; text: string; pos: number }
  | { kind: 'op'; text: string; pos: number }
  | { kind: 'punct'; text: '(' | ')' | ','; pos: number }
  | { kind: 'end'; text: ''; pos: number };

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < jql.length) {
    const c = jql[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let text = '';
      let j = i + 1;
      while (j < jql.length && jql[j] !== c) {
        if (jql[j] === '\\' && j + 1 < jql.length) j++;
        text += jql[j];
        j++;
      }
      if (j >= jql.length)
        throw new JqlError(
          `Error in the JQL Query: The quoted string has not been completed. (line 1, character ${i + 1})`,
        );
      tokens.push({ kind: 'string', text, pos: i });
      i = j + 1;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: 'punct', text: c, pos: i });
      i++;
      continue;
    }
    const two = jql.slice(i, i + 2);
    if (two === '!=' || two === '!~' || two === '>=' || two === '<=') {
      tokens.push({ kind: 'op', text: two, pos: i });
      i += 2;
      continue;
    }
    if (c === '=' || c === '~' || c === '>' || c === '<') {
      tokens.push({ kind: 'op', text: c, pos: i });
      i++;
      continue;
    }
    const m = /^[A-Za-z0-9_.\-[\]@+:/]+/.exec(jql.slice(i));
    if (!m) {
      throw new JqlError(
        `Error in the JQL Query: The character '${c}' is a reserved JQL character. You must enclose it in a string or use the escape '\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}' instead. (line 1, character ${i + 1})`,
      );
    }
    tokens.push({ kind: 'word', text: m[0], pos: i });
    i += m[0].length;
  }
  tokens.push({ kind: 'end', text: '', pos: jql.length });
  return tokens;
}

type Value = { text: string; quoted: boolean } | { fn: string };

type Node =
  | { kind: 'and'; left: Node; right: Node }
  | { kind: 'or'; left: Node; right: Node }
  | { kind: 'not'; node: Node }
  | { kind: 'clause'; field: string; op: string; values: Value[]; list: boolean };

export interface SortKey {
  field: 'key' | 'id' | 'created' | 'updated' | 'summary';
  desc: boolean;
}

export interface ParsedJql {
  where: Node | undefined;
  orderBy: SortKey[];
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i] as Token;
  }
  private next(): Token {
    return this.tokens[this.i++] as Token;
  }
  private isWord(t: Token, ...words: string[]): boolean {
    return t.kind === 'word' && words.includes(t.text.toUpperCase());
  }
  private fail(expected: string, t: Token): never {
    const got = t.kind === 'end' ? 'the end of the query' : `'${t.text}'`;
    throw new JqlError(
      `Error in the JQL Query: Expecting ${expected} but got ${got}. (line 1, character ${t.pos + 1})`,
    );
  }

  parse(): ParsedJql {
    let where: Node | undefined;
    if (!this.isWord(this.peek(), 'ORDER') && this.peek().kind !== 'end') where = this.or();
    const orderBy: SortKey[] = [];
    if (this.isWord(this.peek(), 'ORDER')) {
      this.next();
      if (!this.isWord(this.next(), 'BY')) this.fail("'by'", this.tokens[this.i - 1] as Token);
      do {
        const f = this.next();
        if (f.kind !== 'word' && f.kind !== 'string') this.fail('a field name', f);
        orderBy.push({ field: sortField(f.text), desc: false });
        if (this.isWord(this.peek(), 'ASC', 'DESC')) {
          (orderBy[orderBy.length - 1] as SortKey).desc = this.next().text.toUpperCase() === 'DESC';
        }
      } while (this.peek().kind === 'punct' && this.peek().text === ',' && this.next());
    }
    if (this.peek().kind !== 'end') this.fail("'AND', 'OR' or 'ORDER BY'", this.peek());
    return { where, orderBy };
  }

  private or(): Node {
    let left = this.and();
    while (this.isWord(this.peek(), 'OR')) {
      this.next();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.isWord(this.peek(), 'AND')) {
      this.next();
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    const t = this.peek();
    if (this.isWord(t, 'NOT')) {
      this.next();
      return { kind: 'not', node: this.unary() };
    }
    if (t.kind === 'punct' && t.text === '(') {
      this.next();
      const node = this.or();
      const close = this.next();
      if (close.kind !== 'punct' || close.text !== ')') this.fail("')'", close);
      return node;
    }
    return this.clause();
  }

  private clause(): Node {
    const f = this.next();
    if (f.kind !== 'word' && f.kind !== 'string') this.fail('a field name', f);
    const field = f.text.toLowerCase();
    const o = this.next();
    let op: string;
    if (o.kind === 'op') op = o.text;
    else if (this.isWord(o, 'IN')) op = 'in';
    else if (this.isWord(o, 'NOT') && this.isWord(this.peek(), 'IN')) {
      this.next();
      op = 'not in';
    } else if (this.isWord(o, 'IS')) {
      op = 'is';
      if (this.isWord(this.peek(), 'NOT')) {
        this.next();
        op = 'is not';
      }
    } else {
      this.fail("operator ('=', '!=', '~', 'in', 'not in', 'is', ...)", o);
    }
    if (op === 'in' || op === 'not in') {
      const open = this.next();
      if (open.kind !== 'punct' || open.text !== '(') this.fail("'('", open);
      const values: Value[] = [this.value()];
      while (this.peek().kind === 'punct' && this.peek().text === ',') {
        this.next();
        values.push(this.value());
      }
      const close = this.next();
      if (close.kind !== 'punct' || close.text !== ')') this.fail("')' or ','", close);
      return { kind: 'clause', field, op, values, list: true };
    }
    return { kind: 'clause', field, op, values: [this.value()], list: false };
  }

  private value(): Value {
    const t = this.next();
    if (t.kind === 'string') return { text: t.text, quoted: true };
    if (t.kind !== 'word') this.fail('a value', t);
    const p = this.peek();
    if (p.kind === 'punct' && p.text === '(') {
      this.next();
      const close = this.next();
      if (close.kind !== 'punct' || close.text !== ')') this.fail("')'", close);
      return { fn: t.text };
    }
    return { text: t.text, quoted: false };
  }
}

function sortField(name: string): SortKey['field'] {
  const n = name.toLowerCase();
  if (n === 'key' || n === 'issuekey') return 'key';
  if (n === 'id' || n === 'created' || n === 'updated' || n === 'summary') return n;
  if (n === 'createddate') return 'created';
  if (n === 'updateddate') return 'updated';
  throw new JqlError(`Field '${name}' does not exist or you do not have permission to view it.`);
}

export function parseJql(jql: string): ParsedJql {
  return new Parser(tokenize(jql)).parse();
}

const FIELD_ALIASES: Record<string, string> = {
  project: 'project',
  key: 'key',
  issuekey: 'key',
  id: 'id',
  labels: 'labels',
  issuetype: 'issuetype',
  type: 'issuetype',
  status: 'status',
  parent: 'parent',
  sprint: 'sprint',
  'cf[10020]': 'sprint',
  summary: 'summary',
  assignee: 'assignee',
  reporter: 'reporter',
  created: 'created',
  createddate: 'created',
  updated: 'updated',
  updateddate: 'updated',
};

type Predicate = (doc: IndexDoc) => boolean;

/** Compiles a parsed query into a predicate over the index's documents, checking values as Jira does. */
export function compileJql(
  parsed: ParsedJql,
  store: JiraStore,
  currentAccountId: string,
): Predicate | undefined {
  const compile = (node: Node): Predicate => {
    if (node.kind === 'and') {
      const [l, r] = [compile(node.left), compile(node.right)];
      return (d) => l(d) && r(d);
    }
    if (node.kind === 'or') {
      const [l, r] = [compile(node.left), compile(node.right)];
      return (d) => l(d) || r(d);
    }
    if (node.kind === 'not') {
      const inner = compile(node.node);
      return (d) => !inner(d);
    }
    return compileClause(node, store, currentAccountId);
  };
  return parsed.where ? compile(parsed.where) : undefined;
}

function compileClause(
  c: Extract<Node, { kind: 'clause' }>,
  store: JiraStore,
  currentAccountId: string,
): Predicate {
  const field = FIELD_ALIASES[c.field];
  if (!field)
    throw new JqlError(`Field '${c.field}' does not exist or you do not have permission to view it.`);
  const isEmptyCheck = c.op === 'is' || c.op === 'is not';
  if (isEmptyCheck) {
    const v = c.values[0];
    const word = v && 'text' in v && !v.quoted ? v.text.toUpperCase() : '';
    if (word !== 'EMPTY' && word !== 'NULL') {
      throw new JqlError(
        `Error in the JQL Query: Expecting 'EMPTY' or 'NULL' after '${c.op.toUpperCase()}'.`,
      );
    }
    const empty = emptiness(field);
    if (!empty) throw new JqlError(`The field '${c.field}' does not support searching for EMPTY values.`);
    return c.op === 'is' ? empty : (d) => !empty(d);
  }
  const texts = c.values.map((v) => {
    if ('fn' in v) {
      if (v.fn.toLowerCase() === 'currentuser' && (field === 'assignee' || field === 'reporter')) {
        return currentAccountId;
      }
      throw new JqlError(`Unable to find JQL function '${v.fn}()'.`);
    }
    return v.text;
  });
  const valueLabel = (t: string) => `The value '${t}' does not exist for the field '${c.field}'.`;
  const equality = ['=', '!=', 'in', 'not in'];
  const positive = c.op === '=' || c.op === 'in';

  const setOp = (matches: (d: IndexDoc, wanted: string) => boolean): Predicate => {
    if (!equality.includes(c.op)) {
      throw new JqlError(`The operator '${c.op}' is not supported by the '${c.field}' field.`);
    }
    return positive ? (d) => texts.some((t) => matches(d, t)) : (d) => !texts.some((t) => matches(d, t));
  };

  switch (field) {
    case 'project':
      for (const t of texts) if (!store.projectMatches(t)) throw new JqlError(valueLabel(t));
      return setOp((d, t) => d.projectKey === store.projectOf(t)?.key);
    case 'key':
    case 'id': {
      const ids = texts.map((t) => {
        if (/^\d+$/.test(t)) return Number(t);
        if (!/^[A-Z][A-Z0-9_]*-\d+$/i.test(t))
          throw new JqlError(`The issue key '${t}' for field '${c.field}' is invalid.`);
        const issue = store.issueByIdOrKey(t);
        if (!issue) throw new JqlError(`An issue with key '${t}' does not exist for field '${c.field}'.`);
        return issue.id;
      });
      if (['>', '>=', '<', '<='].includes(c.op)) {
        const bound = ids[0] ?? 0;
        return compare(c.op, (d) => d.id, bound);
      }
      return setOp((d, t) => d.id === ids[texts.indexOf(t)]);
    }
    case 'labels':
      return setOp((d, t) => d.labels.includes(t));
    case 'issuetype': {
      for (const t of texts) {
        if (!ISSUE_TYPES.some((it) => it.id === t || it.name.toLowerCase() === t.toLowerCase())) {
          throw new JqlError(valueLabel(t));
        }
      }
      const names = (t: string) =>
        ISSUE_TYPES.find((it) => it.id === t || it.name.toLowerCase() === t.toLowerCase())?.name;
      return setOp((d, t) => d.issueType === names(t));
    }
    case 'status': {
      const byText = (t: string) =>
        [...store.statuses.values()].find((s) => s.id === t || s.name.toLowerCase() === t.toLowerCase());
      for (const t of texts) if (!byText(t)) throw new JqlError(valueLabel(t));
      return setOp((d, t) => d.status === byText(t)?.name);
    }
    case 'parent': {
      const keys = texts.map((t) => {
        const issue = store.issueByIdOrKey(t);
        if (!issue) throw new JqlError(`An issue with key '${t}' does not exist for field 'parent'.`);
        return issue.key;
      });
      return setOp((d, t) => d.parentKey === keys[texts.indexOf(t)]);
    }
    case 'sprint': {
      const sprintIds = texts.map((t) => {
        const sprint = /^\d+$/.test(t)
          ? store.sprints.get(Number(t))
          : [...store.sprints.values()].find((s) => s.name === t);
        if (!sprint) throw new JqlError(valueLabel(t));
        return sprint.id;
      });
      return setOp((d, t) => d.sprintIds.includes(sprintIds[texts.indexOf(t)] ?? -1));
    }
    case 'summary': {
      if (c.op !== '~' && c.op !== '!~') {
        throw new JqlError(`The operator '${c.op}' is not supported by the 'summary' field.`);
      }
      const needle = (texts[0] ?? '').toLowerCase();
      const has = (d: IndexDoc) => d.summary.toLowerCase().includes(needle);
      return c.op === '~' ? has : (d) => !has(d);
    }
    case 'assignee':
    case 'reporter': {
      const accountIds = texts.map((t) => {
        const u =
          store.users.get(t) ??
          [...store.users.values()].find((x) => x.email.toLowerCase() === t.toLowerCase());
        if (!u) throw new JqlError(valueLabel(t));
        return u.accountId;
      });
      const of = (d: IndexDoc) => (field === 'assignee' ? d.assigneeId : d.reporterId);
      return setOp((d, t) => of(d) === accountIds[texts.indexOf(t)]);
    }
    case 'created':
    case 'updated': {
      const t = texts[0] ?? '';
      const ms = Date.parse(/^\d{4}-\d\d-\d\d$/.test(t) ? `${t}T00:00:00Z` : `${t.replace(' ', 'T')}Z`);
      if (Number.isNaN(ms) || c.list) {
        throw new JqlError(
          `Date value '${t}' for field '${c.field}' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd'.`,
        );
      }
      const of = (d: IndexDoc) => (field === 'created' ? d.created : d.updated);
      if (c.op === '=') return (d) => of(d) === ms;
      if (c.op === '!=') return (d) => of(d) !== ms;
      return compare(c.op, of, ms);
    }
  }
  throw new JqlError(`Field '${c.field}' does not exist or you do not have permission to view it.`);
}

function compare(op: string, of: (d: IndexDoc) => number, bound: number): Predicate {
  switch (op) {
    case '>':
      return (d) => of(d) > bound;
    case '>=':
      return (d) => of(d) >= bound;
    case '<':
      return (d) => of(d) < bound;
    case '<=':
      return (d) => of(d) <= bound;
  }
  throw new JqlError(`The operator '${op}' is not supported here.`);
}

function emptiness(field: string): Predicate | undefined {
  switch (field) {
    case 'labels':
      return (d) => d.labels.length === 0;
    case 'parent':
      return (d) => d.parentKey === null;
    case 'sprint':
      return (d) => d.sprintIds.length === 0;
    case 'assignee':
      return (d) => d.assigneeId === null;
    case 'reporter':
      return (d) => d.reporterId === null;
  }
  return undefined;
}

const keyNumber = (key: string) => Number(key.slice(key.lastIndexOf('-') + 1));

/** Orders documents by the ORDER BY clause; Jira's default without one is newest first. */
export function sortDocs(docs: IndexDoc[], orderBy: SortKey[]): IndexDoc[] {
  const keys: SortKey[] = orderBy.length > 0 ? orderBy : [{ field: 'created', desc: true }];
  const value = (d: IndexDoc, f: SortKey['field']): number | string => {
    switch (f) {
      case 'key':
        return keyNumber(d.key);
      case 'id':
        return d.id;
      case 'created':
        return d.created;
      case 'updated':
        return d.updated;
      case 'summary':
        return d.summary.toLowerCase();
    }
  };
  return [...docs].sort((a, b) => {
    for (const k of keys) {
      const [x, y] = [value(a, k.field), value(b, k.field)];
      if (x < y) return k.desc ? 1 : -1;
      if (x > y) return k.desc ? -1 : 1;
    }
    // Ties (same millisecond) fall back to the key, in the direction of the first sort key.
    const tie = keyNumber(a.key) - keyNumber(b.key);
    return keys[0]?.desc ? -tie : tie;
  });
}
