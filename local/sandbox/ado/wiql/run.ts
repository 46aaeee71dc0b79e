/**
 * Runs a parsed WIQL query over the world: resolves fields (reference or friendly names), type-checks literals
 * against the field type, and evaluates with WIQL's rules: case-insensitive strings, area/iteration paths that
 * must exist, UNDER for subtrees, and date precision unless the request asked for `timePrecision=true`
 * (then a literal with a time of day is an error, as on the real service).
 */
import { currentValue } from '../../generator/fields.ts';
import { type FieldDef, findField } from '../../generator/process.ts';
import type { AdoWorkItem, AdoWorld } from '../../generator/types.ts';
import { AdoErrors } from '../errors.ts';
import { WiqlSyntaxError } from './lexer.ts';
import { type Expr, type Literal, parseWiql, WiqlUnsupportedError } from './parser.ts';

const DAY = 86_400_000;

export interface WiqlContext {
  world: AdoWorld;
  timePrecision: boolean;
  /** Now, for @today. */
  now: number;
  /** The PAT owner's person index, for @me. */
  me: number;
}

export interface WiqlResult {
  ids: number[];
  columns: FieldDef[];
  sortColumns: { field: FieldDef; descending: boolean }[];
}

/** Fields the evaluator can read (see currentValue). */
const QUERYABLE = new Set([
  'System.Id',
  'System.Title',
  'System.State',
  'System.Reason',
  'System.WorkItemType',
  'System.TeamProject',
  'System.AreaPath',
  'System.IterationPath',
  'System.Tags',
  'System.AssignedTo',
  'System.CreatedBy',
  'System.ChangedBy',
  'System.CreatedDate',
  'System.ChangedDate',
  'System.Rev',
  'System.CommentCount',
  'System.Parent',
  'Microsoft.VSTS.Common.Priority',
  'Microsoft.VSTS.Common.Severity',
  'Microsoft.VSTS.Scheduling.StoryPoints',
]);

type Predicate = (item: AdoWorkItem) => boolean;

function resolveField(name: string): FieldDef {
  const def = findField(name);
  if (!def)
    throw AdoErrors.query(
      `TF51005: The query references a field that does not exist. The error is caused by «${name}».`,
    );
  return def;
}

function read(item: AdoWorkItem, def: FieldDef, project: string): unknown {
  return def.referenceName === 'System.TeamProject' ? project : currentValue(item, def.referenceName);
}

interface DateLiteral {
  ms: number;
  hasTime: boolean;
}

function parseDate(text: string): DateLiteral | null {
  const iso =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      text.trim(),
    );
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(text.trim());
  let y: number;
  let mo: number;
  let d: number;
  let h = 0;
  let mi = 0;
  let s = 0;
  let frac = 0;
  let tz = 0;
  if (iso) {
    [y, mo, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
    h = Number(iso[4] ?? 0);
    mi = Number(iso[5] ?? 0);
    s = Number(iso[6] ?? 0);
    frac = Number(iso[7] ?? 0);
    const zone = iso[8];
    if (zone && zone.toUpperCase() !== 'Z') {
      const m = /([+-])(\d{2}):?(\d{2})/.exec(zone)!;
      tz = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
    }
  } else if (us) {
    [mo, d, y] = [Number(us[1]), Number(us[2]), Number(us[3])];
    h = Number(us[4] ?? 0);
    mi = Number(us[5] ?? 0);
    s = Number(us[6] ?? 0);
  } else return null;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) + Math.round(frac * 1000) - tz;
  if (Number.isNaN(ms)) return null;
  return { ms, hasTime: h !== 0 || mi !== 0 || s !== 0 || frac !== 0 };
}

function compareNumbers(op: string, a: number, b: number): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '<>':
      return a !== b;
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '>=':
      return a >= b;
    default:
      return false;
  }
}

const ORDERED = new Set(['=', '<>', '<', '>', '<=', '>=']);

function compileCondition(cond: Extract<Expr, { kind: 'cond' }>, ctx: WiqlContext): Predicate {
  const def = resolveField(cond.field);
  const ref = def.referenceName;
  if (!QUERYABLE.has(ref) && !ref.startsWith('Custom.')) {
    throw new WiqlUnsupportedError(
      `The sandbox cannot filter on ${ref} (supported: ${[...QUERYABLE].join(', ')}, Custom.*).`,
    );
  }
  const { op } = cond;
  if (op === 'ever') throw new WiqlUnsupportedError('The sandbox does not support EVER (history queries).');
  const project = ctx.world.project;
  const badOp = () =>
    AdoErrors.query(
      `The operator cannot be used with the field «${def.name}». The error is caused by «${cond.text}».`,
    );
  const literalValue = (lit: Literal): string | number => {
    if (lit.kind === 'field')
      throw new WiqlUnsupportedError('The sandbox does not support comparing two fields.');
    if (lit.kind === 'macro') {
      switch (lit.name) {
        case 'project':
          return project;
        case 'today':
          return new Date((Math.floor(ctx.now / DAY) + lit.offset) * DAY).toISOString().slice(0, 10);
        case 'me':
          return ctx.world.people[ctx.me]?.email ?? '';
        case 'currentiteration': {
          const { sprints } = ctx.world.iterations;
          const idx = sprints.findIndex(
            (s) => Date.parse(s.startDate!) <= ctx.now && ctx.now < Date.parse(s.finishDate!) + DAY,
          );
          return sprints[
            Math.max(0, Math.min(sprints.length - 1, (idx < 0 ? sprints.length - 1 : idx) + lit.offset))
          ]!.path;
        }
        default:
          throw new WiqlUnsupportedError(`The sandbox does not support the macro @${lit.name}.`);
      }
    }
    return lit.value;
  };
  const values = cond.values.map(literalValue);
  const anyOf = op === 'in' || op === 'not in';
  const negate = op.startsWith('not ') || op === '<>';

  switch (def.type) {
    case 'integer':
    case 'double': {
      const nums = values.map((v) => {
        const n = typeof v === 'number' ? v : Number(v);
        if (v === '' || Number.isNaN(n)) {
          throw AdoErrors.query(
            `The value '${v}' is not valid for the field «${def.name}». The error is caused by «${cond.text}».`,
          );
        }
        return n;
      });
      if (!anyOf && !ORDERED.has(op)) throw badOp();
      return (item) => {
        const v = read(item, def, project);
        if (typeof v !== 'number') return op === '<>' || op === 'not in';
        if (anyOf) return nums.includes(v) !== negate;
        return compareNumbers(op, v, nums[0]!);
      };
    }
    case 'treePath': {
      const kind = ref === 'System.AreaPath' ? 'area' : 'iteration';
      const paths = values.map((v) =>
        String(v)
          .replace(/^\\+|\\+$/g, '')
          .toLowerCase(),
      );
      for (const p of paths) {
        const root = kind === 'area' ? ctx.world.areas : ctx.world.iterations.root;
        const exists = p === root.path.toLowerCase() || nodeExists(root, p);
        if (!exists) {
          throw AdoErrors.query(
            kind === 'area'
              ? `TF51011: The specified area path does not exist. The error is caused by «'${cond.values.map(literalText).join("', '")}'».`
              : `TF51012: The specified iteration path does not exist. The error is caused by «'${cond.values.map(literalText).join("', '")}'».`,
          );
        }
      }
      if (!['=', '<>', 'in', 'not in', 'under', 'not under'].includes(op)) throw badOp();
      const under = op === 'under' || op === 'not under';
      return (item) => {
        const v = String(read(item, def, project)).toLowerCase();
        const hit = paths.some((p) => v === p || (under && v.startsWith(`${p}\\`)));
        return hit !== negate;
      };
    }
    case 'dateTime': {
      const dates = values.map((v) => {
        const d = parseDate(String(v));
        if (!d)
          throw AdoErrors.query(
            `The value '${v}' is not a valid date. The error is caused by «${cond.text}».`,
          );
        if (d.hasTime && !ctx.timePrecision) {
          throw AdoErrors.query(
            `You cannot supply a time with the date when running a query using date precision. The error is caused by «${cond.text}».`,
          );
        }
        return d.ms;
      });
      if (!anyOf && !ORDERED.has(op)) throw badOp();
      // Without timePrecision WIQL compares calendar days (UTC here).
      const scale = (ms: number) => (ctx.timePrecision ? ms : Math.floor(ms / DAY));
      const targets = dates.map(scale);
      return (item) => {
        const v = read(item, def, project);
        if (typeof v !== 'number') return op === '<>' || op === 'not in';
        const x = scale(v);
        if (anyOf) return targets.includes(x) !== negate;
        return compareNumbers(op, x, targets[0]!);
      };
    }
    case 'identity': {
      const people = ctx.world.people;
      const indexes = values.map((v) => {
        const text = String(v).trim().toLowerCase();
        if (text === '') return -1;
        const found = people.findIndex(
          (p) =>
            p.email.toLowerCase() === text ||
            p.displayName.toLowerCase() === text ||
            p.adoId === text ||
            `${p.displayName} <${p.email}>`.toLowerCase() === text,
        );
        return found < 0 ? -2 : found;
      });
      if (op === 'contains' || op === 'not contains') {
        const needle = String(values[0]).toLowerCase();
        return (item) => {
          const v = read(item, def, project) as number;
          const p = people[v];
          const hit =
            !!p && (p.displayName.toLowerCase().includes(needle) || p.email.toLowerCase().includes(needle));
          return hit !== negate;
        };
      }
      if (!['=', '<>', 'in', 'not in'].includes(op)) throw badOp();
      return (item) => {
        const v = read(item, def, project) as number;
        return indexes.includes(v) !== negate;
      };
    }
    case 'boolean': {
      const wanted = values.map((v) => String(v).toLowerCase() === 'true');
      if (op !== '=' && op !== '<>') throw badOp();
      return (item) => (read(item, def, project) === wanted[0]) !== negate;
    }
    case 'plainText': {
      // Tags: CONTAINS matches a whole tag, as the query editor's "Tags Contains" does.
      if (op !== 'contains' && op !== 'not contains') throw badOp();
      const tag = String(values[0]).trim().toLowerCase();
      return (item) => {
        const v = read(item, def, project);
        const tags = typeof v === 'string' ? v.split(';').map((t) => t.trim().toLowerCase()) : [];
        return tags.includes(tag) !== negate;
      };
    }
    case 'string': {
      const texts = values.map((v) => String(v).toLowerCase());
      if (
        op === 'contains' ||
        op === 'not contains' ||
        op === 'contains words' ||
        op === 'not contains words'
      ) {
        const words = op.endsWith('words');
        const needle = texts[0]!;
        const re = new RegExp(`(^|\\W)${needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|\\W)`, 'i');
        return (item) => {
          const v = String(read(item, def, project) ?? '').toLowerCase();
          return (words ? re.test(v) : v.includes(needle)) !== negate;
        };
      }
      if (!anyOf && !ORDERED.has(op)) throw badOp();
      return (item) => {
        const raw = read(item, def, project);
        const v = raw === null || raw === undefined ? '' : String(raw).toLowerCase();
        if (anyOf) return texts.includes(v) !== negate;
        const cmp = v < texts[0]! ? -1 : v > texts[0]! ? 1 : 0;
        return compareNumbers(op, cmp, 0);
      };
    }
    default:
      throw new WiqlUnsupportedError(`The sandbox cannot filter on ${def.type} fields such as ${ref}.`);
  }
}

function literalText(lit: Literal): string {
  return lit.kind === 'string'
    ? lit.value
    : lit.kind === 'number'
      ? String(lit.value)
      : lit.kind === 'macro'
        ? `@${lit.name}`
        : lit.name;
}

function nodeExists(
  root: { path: string; children: { path: string; children: unknown[] }[] },
  path: string,
): boolean {
  const stack = [...root.children] as { path: string; children: unknown[] }[];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.path.toLowerCase() === path) return true;
    stack.push(...(n.children as { path: string; children: unknown[] }[]));
  }
  return false;
}

function compile(expr: Expr, ctx: WiqlContext): Predicate {
  if (expr.kind === 'cond') return compileCondition(expr, ctx);
  const left = compile(expr.left, ctx);
  const right = compile(expr.right, ctx);
  return expr.kind === 'and' ? (i) => left(i) && right(i) : (i) => left(i) || right(i);
}

function sortKey(item: AdoWorkItem, def: FieldDef, project: string): string | number {
  const v = read(item, def, project);
  if (v === null || v === undefined) return '';
  if (def.type === 'identity') return typeof v === 'number' && v >= 0 ? v : -1;
  return typeof v === 'string' ? v.toLowerCase() : (v as number);
}

export function runWiql(text: string, ctx: WiqlContext): WiqlResult {
  let query: ReturnType<typeof parseWiql>;
  try {
    query = parseWiql(text);
  } catch (e) {
    if (e instanceof WiqlSyntaxError) throw AdoErrors.query(e.message);
    if (e instanceof WiqlUnsupportedError)
      throw AdoErrors.query(`Unsupported by the Azure DevOps sandbox: ${e.message}`);
    throw e;
  }
  const columns = query.select.map(resolveField);
  const sortColumns = query.orderBy.map((o) => ({ field: resolveField(o.field), descending: o.descending }));
  for (const s of sortColumns) {
    if (!QUERYABLE.has(s.field.referenceName) && !s.field.referenceName.startsWith('Custom.')) {
      throw AdoErrors.query(
        `Unsupported by the Azure DevOps sandbox: cannot sort by ${s.field.referenceName}.`,
      );
    }
  }
  let predicate: Predicate = () => true;
  try {
    if (query.where) predicate = compile(query.where, ctx);
  } catch (e) {
    if (e instanceof WiqlUnsupportedError)
      throw AdoErrors.query(`Unsupported by the Azure DevOps sandbox: ${e.message}`);
    throw e;
  }
  const matched = ctx.world.workItems.filter(predicate);
  const project = ctx.world.project;
  if (sortColumns.length) {
    const keys = new Map(matched.map((i) => [i, sortColumns.map((s) => sortKey(i, s.field, project))]));
    matched.sort((a, b) => {
      const ka = keys.get(a)!;
      const kb = keys.get(b)!;
      for (let i = 0; i < sortColumns.length; i++) {
        const x = ka[i]!;
        const y = kb[i]!;
        if (x === y) continue;
        const c = x < y ? -1 : 1;
        return sortColumns[i]!.descending ? -c : c;
      }
      return a.id - b.id;
    });
  }
  return { ids: matched.map((i) => i.id), columns, sortColumns };
}
