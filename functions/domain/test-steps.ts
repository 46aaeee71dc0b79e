/**
 * ADO test-case steps as structured steps: the pure half of the test-case-steps plugin.
 *
 * ADO keeps a Test Case's steps in `Microsoft.VSTS.TCM.Steps`:
 *
 *   <steps id="0" last="5">
 *     <step id="2" type="ValidateStep">
 *       <parameterizedString isformatted="true">&lt;DIV&gt;&lt;P&gt;Open @url&lt;/P&gt;&lt;/DIV&gt;</parameterizedString>
 *       <parameterizedString isformatted="true">&lt;P&gt;The page is shown&lt;/P&gt;</parameterizedString>
 *       <description/>
 *     </step>
 *     <compref id="3" ref="1234" />                       (a Shared Steps work item inserted here)
 *     <compref id="4" ref="1235"><step id="5" ...>...</step></compref>
 *   </steps>
 *
 * Decisions:
 *  - A `compref` becomes the referenced Shared Steps' own steps, expanded in place (recursively; a reference
 *    back into the chain or to a missing item is a problem, never a loop). Steps a compref wraps are the test
 *    case's own steps that follow the reference (ADO writes both shapes), so they come after the shared ones.
 *  - Formatted text (`isformatted="true"`: HTML escaped once more as XML text) becomes Jira wiki markup, the
 *    notation Xray renders step fields with: paragraphs and `<BR/>` as line breaks, bold `*x*`, italic `_x_`,
 *    underline `+x+`, list items `* x`, links `[text|url]`, entities decoded, other tags dropped. Unformatted
 *    (MTM-era) text is plain already and kept as it is. An empty paragraph (`<DIV><P><BR/></P></DIV>`, ADO's
 *    "no expected result") is the empty string. HTML over the converter's limits becomes an italic note.
 *  - Parameters: `@name` references stay in the step text as written, so a tester reads the same step as in
 *    ADO and the values stay with the step's data, not baked into one iteration. The case's parameter names
 *    (`Microsoft.VSTS.TCM.Parameters`) and its iterations (rows of `Microsoft.VSTS.TCM.LocalDataSource`) are
 *    kept; a step that references parameters gets `data`: one line per parameter, `@name: v1 | v2`, the
 *    values in iteration order (`stepData`). Shared parameter sets (a JSON data source) are not read: a problem.
 */
import { XMLParser } from 'fast-xml-parser';
import { Parser } from 'htmlparser2';
import { htmlLimitBreach } from './adf/index.ts';

/** One step as the test-management add-on gets it. */
export interface TestStep {
  action: string;
  expectedResult: string;
  /** The values of the parameters the step references, one `@name: v1 | v2` line each. */
  data?: string;
}

/** The steps XML read as written: own steps and references, nothing expanded yet. */
export type StepNode =
  | { kind: 'step'; id: number; action: string; expectedResult: string }
  | { kind: 'shared'; id: number; ref: number; wrapped: StepNode[] };

/** A test case's steps, ready to write, with what could not be read. */
export interface TestCaseSteps {
  steps: TestStep[];
  /** Parameter names in declaration order. */
  parameters: string[];
  /** The iterations: parameter name -> value, in data-source order. */
  dataRows: Record<string, string>[];
  /** Shared Steps ids met while expanding (for the report). */
  sharedStepIds: number[];
  /** Why the steps are incomplete (a missing or looping shared-steps item, unreadable XML); empty when whole. */
  problems: string[];
}

type XmlNode = Record<string, unknown> & { ':@'?: Record<string, string> };

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  preserveOrder: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Entities are decoded once here (XML), the HTML's own once more when formatted text is read.
  processEntities: true,
});

const tagOf = (n: XmlNode) => Object.keys(n).find((k) => k !== ':@') ?? '';
const kidsOf = (n: XmlNode): XmlNode[] => {
  const v = n[tagOf(n)];
  return Array.isArray(v) ? (v as XmlNode[]) : [];
};
const textOf = (n: XmlNode): string =>
  kidsOf(n)
    .map((k) => (tagOf(k) === '#text' ? String(k['#text'] ?? '') : textOf(k)))
    .join('');
const localName = (tag: string) => tag.slice(tag.indexOf(':') + 1);

function parseXml(xml: string): XmlNode[] {
  return xmlParser.parse(xml) as XmlNode[];
}

const INLINE_MARKS: Record<string, string> = { b: '*', strong: '*', i: '_', em: '_', u: '+', ins: '+' };
const BLOCKS = new Set(['p', 'div', 'ul', 'ol', 'table', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre']);

/**
 * The step editor's HTML as Jira wiki markup (see the module's decisions). Marks with nothing inside are
 * dropped so an empty `<B></B>` does not leave `**`. HTML over the converter's limits (adf/html-limits.ts: too
 * long, or nested too deep to parse in bounded time) is not parsed: an italic note stands for it.
 */
export function htmlToWiki(html: string): string {
  const breach = htmlLimitBreach(html);
  if (breach) return `_(the original HTML was not converted: ${breach.reason})_`;
  let out = '';
  const marks: { tag: string; at: number }[] = [];
  const links: { href: string; at: number }[] = [];
  const newline = () => {
    if (out !== '' && !out.endsWith('\n')) out += '\n';
  };
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'br') out += '\n';
        else if (BLOCKS.has(name)) newline();
        else if (name === 'li') {
          newline();
          out += '* ';
        } else if (name === 'td' || name === 'th') {
          if (!out.endsWith('\n') && out !== '') out += ' | ';
        } else if (INLINE_MARKS[name]) {
          marks.push({ tag: name, at: out.length });
          out += INLINE_MARKS[name];
        } else if (name === 'a') links.push({ href: attrs.href ?? '', at: out.length });
      },
      ontext(text) {
        // Source line breaks inside HTML are layout, not content.
        out += text.replace(/[\r\n\t]+/g, ' ').replaceAll('\u00a0', ' ');
      },
      onclosetag(name, implied) {
        if (BLOCKS.has(name) || name === 'li') newline();
        else if (INLINE_MARKS[name]) {
          const open = marks.pop();
          if (!open) return;
          const inner = out.slice(open.at + 1);
          if (inner.trim() === '') out = out.slice(0, open.at) + inner;
          else if (!implied) {
            // Wiki marks must hug the text: move surrounding spaces outside.
            const lead = inner.match(/^\s*/)?.[0] ?? '';
            const trail = inner.match(/\s*$/)?.[0] ?? '';
            const mark = INLINE_MARKS[name];
            out = `${out.slice(0, open.at)}${lead}${mark}${inner.trim()}${mark}${trail}`;
          }
        } else if (name === 'a') {
          const open = links.pop();
          if (!open?.href) return;
          const text = out.slice(open.at);
          out = `${out.slice(0, open.at)}[${text.trim() || open.href}|${open.href}]`;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  // HTML collapses runs of spaces; plain (MTM) text keeps its own.
  return tidy(out.replace(/ {2,}/g, ' '));
}

/** Trailing spaces off each line, at most one blank line in a row, no blank lines around. */
function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/[ \t]+$/, '').replace(/^ +/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** One `<parameterizedString>` as text: formatted ones through htmlToWiki, MTM-era plain ones as they are. */
function stringOf(node: XmlNode | undefined): string {
  if (!node) return '';
  const raw = textOf(node);
  return node[':@']?.isformatted === 'true' ? htmlToWiki(raw) : tidy(raw);
}

function nodesOf(children: XmlNode[]): StepNode[] {
  const out: StepNode[] = [];
  for (const n of children) {
    const tag = tagOf(n);
    const id = Number(n[':@']?.id);
    if (tag === 'step') {
      const strings = kidsOf(n).filter((k) => tagOf(k) === 'parameterizedString');
      out.push({ kind: 'step', id, action: stringOf(strings[0]), expectedResult: stringOf(strings[1]) });
    } else if (tag === 'compref') {
      out.push({ kind: 'shared', id, ref: Number(n[':@']?.ref), wrapped: nodesOf(kidsOf(n)) });
    }
  }
  return out;
}

/** The steps XML as written (own steps and shared-steps references, in order); [] for an empty field. */
export function parseStepsXml(xml: string | null | undefined): StepNode[] {
  if (!xml?.trim()) return [];
  const root = parseXml(xml).find((n) => tagOf(n) === 'steps');
  if (!root) throw new Error('the steps XML has no <steps> element');
  return nodesOf(kidsOf(root));
}

/** The Shared Steps ids the steps XML references directly (nested ones are found when those are read). */
export function sharedStepRefs(xml: string | null | undefined): number[] {
  const refs: number[] = [];
  const walk = (nodes: StepNode[]) => {
    for (const n of nodes) {
      if (n.kind === 'shared') {
        if (Number.isInteger(n.ref) && !refs.includes(n.ref)) refs.push(n.ref);
        walk(n.wrapped);
      }
    }
  };
  walk(parseStepsXml(xml));
  return refs;
}

/** Parameter names from `Microsoft.VSTS.TCM.Parameters` (`<parameters><param name="x" .../>`). */
export function parseParameters(xml: string | null | undefined): string[] {
  if (!xml?.trim()) return [];
  const root = parseXml(xml).find((n) => tagOf(n) === 'parameters');
  return (root ? kidsOf(root) : [])
    .filter((n) => tagOf(n) === 'param')
    .map((n) => n[':@']?.name ?? '')
    .filter(Boolean);
}

/**
 * The iterations of `Microsoft.VSTS.TCM.LocalDataSource`: a .NET DataSet (`<NewDataSet>`, an inline schema,
 * one element per row, one child per column). Undefined when the source is not such XML (a shared
 * parameter set is JSON).
 */
export function parseDataRows(xml: string | null | undefined): Record<string, string>[] | undefined {
  if (!xml?.trim()) return [];
  if (!xml.trimStart().startsWith('<')) return undefined;
  const root = parseXml(xml).find((n) => !tagOf(n).startsWith('?') && tagOf(n) !== '#text');
  if (!root) return [];
  return kidsOf(root)
    .filter((n) => !['#text', 'schema'].includes(localName(tagOf(n))))
    .map((row) =>
      Object.fromEntries(
        kidsOf(row)
          .filter((c) => tagOf(c) !== '#text')
          .map((c) => [tagOf(c), textOf(c)]),
      ),
    );
}

/** The parameters a text references (`@name`, case-insensitive as ADO matches them), as declared. */
function referenced(text: string, parameters: readonly string[]): string[] {
  const used = new Set([...text.matchAll(/@(\w+)/g)].map((m) => (m[1] ?? '').toLowerCase()));
  return parameters.filter((p) => used.has(p.toLowerCase()));
}

/** A step's `data`: `@name: v1 | v2` for each parameter it references; undefined when it references none. */
export function stepData(
  step: { action: string; expectedResult: string },
  parameters: readonly string[],
  rows: readonly Record<string, string>[],
): string | undefined {
  const names = referenced(`${step.action}\n${step.expectedResult}`, parameters);
  if (names.length === 0) return undefined;
  const cell = (row: Record<string, string>, name: string) =>
    row[name] ?? Object.entries(row).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? '';
  return names.map((n) => `@${n}: ${rows.map((r) => cell(r, n)).join(' | ')}`.trimEnd()).join('\n');
}

/**
 * A test case's steps with shared steps expanded and parameter data attached. `sharedSteps` answers a Shared
 * Steps item's own steps XML (undefined: not found).
 */
export function testCaseSteps(
  fields: { steps?: string | null; parameters?: string | null; localDataSource?: string | null },
  sharedSteps: (id: number) => string | null | undefined,
): TestCaseSteps {
  const problems: string[] = [];
  const sharedStepIds: number[] = [];
  const parameters = parseParameters(fields.parameters);
  let dataRows = parseDataRows(fields.localDataSource);
  if (dataRows === undefined) {
    problems.push('the parameter values come from a shared parameter set, which is not migrated');
    dataRows = [];
  }
  const flat: { action: string; expectedResult: string }[] = [];

  const expand = (nodes: StepNode[], chain: number[]) => {
    for (const n of nodes) {
      if (n.kind === 'step') {
        flat.push({ action: n.action, expectedResult: n.expectedResult });
        continue;
      }
      if (chain.includes(n.ref)) {
        problems.push(
          `shared steps #${n.ref} include themselves (via ${chain.map((c) => `#${c}`).join(' > ')})`,
        );
      } else {
        const xml = sharedSteps(n.ref);
        if (xml === undefined) problems.push(`shared steps #${n.ref} not found`);
        else {
          if (!sharedStepIds.includes(n.ref)) sharedStepIds.push(n.ref);
          try {
            expand(parseStepsXml(xml), [...chain, n.ref]);
          } catch (err) {
            problems.push(`shared steps #${n.ref}: ${(err as Error).message}`);
          }
        }
      }
      expand(n.wrapped, chain);
    }
  };
  try {
    expand(parseStepsXml(fields.steps), []);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const rows = dataRows;
  const steps = flat.map((s) => {
    const data = stepData(s, parameters, rows);
    return data === undefined ? s : { ...s, data };
  });
  return { steps, parameters, dataRows: rows, sharedStepIds, problems };
}
