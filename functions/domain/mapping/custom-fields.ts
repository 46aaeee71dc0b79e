/**
 * The project's confirmed field mappings (ADO field reference name -> Jira field id), as a run applies them:
 * - the ADO size fields (SIZE_FIELDS) choose the Story Points field, instead of the name rule;
 * - any other entry writes the ADO value to a Jira custom field on create (and incremental update), shaped by
 *   the field's schema from Jira's `GET /field`:
 *
 * | Jira schema                                     | written as                                   |
 * |-------------------------------------------------|----------------------------------------------|
 * | `string`, custom `textarea` (multi-line)        | an ADF document (Jira Cloud's v3 API wants one) |
 * | `string`, custom `url`                          | the URL, when it is http(s) or mailto (as links) |
 * | `string` (single line)                          | the text, cut at 255 characters              |
 * | `number`                                        | a number                                     |
 * | `option` (select list, radio)                   | `{value}`                                    |
 * | `array` of `string` (labels: sanitised as labels) | a list; ADO multi-values split at `;`       |
 * | `array` of `option` (multi-select, checkboxes)  | `[{value}]`                                  |
 * | `date` / `datetime`                             | `2024-03-01` / `2024-03-01T09:30:00.000+0000` |
 * | anything else (users, cascading selects ...)    | not written: one run warning names the field |
 *
 * Only custom fields are written this way: the system fields (summary, assignee ...) follow the engine's own
 * rules, and a mapping onto one would fight them.
 */
import { type AdfDoc, fitAdf, htmlLimitBreach, htmlToAdf, safeHref, textToAdf } from '../adf/index.ts';
import { SIZE_FIELDS } from './estimates.ts';
import { parseAdoIdentity } from './identity.ts';
import { toLabels } from './labels.ts';
import { clip, JIRA_NAME_MAX } from './text.ts';

/** A field as Jira's `GET /rest/api/3/field` describes it. */
export interface JiraFieldMeta {
  id: string;
  name: string;
  custom?: boolean;
  schema?: Record<string, unknown>;
}

export type FieldShape =
  | 'string'
  | 'url'
  | 'adf'
  | 'number'
  | 'option'
  | 'strings'
  | 'labels'
  | 'options'
  | 'date'
  | 'datetime';

/** One confirmed ADO field -> Jira custom field entry a run writes. */
export interface CustomFieldMapping {
  /** The ADO field reference name (`Custom.Team`). */
  source: string;
  /** The Jira field id (`customfield_10050`). */
  fieldId: string;
  /** The Jira field's name, for messages. */
  name: string;
  shape: FieldShape;
}

export interface FieldPlan {
  /** The Story Points field a confirmed size mapping names; undefined when none does (the name rule applies). */
  storyPointsFieldId?: string;
  custom: CustomFieldMapping[];
  /** Entries the run cannot apply, one each. */
  warnings: string[];
}

const customType = (schema: Record<string, unknown> | undefined) =>
  typeof schema?.custom === 'string' ? schema.custom : '';

/** How a Jira field's value is written, from its schema; undefined when the migration cannot write it. */
export function shapeOf(field: Pick<JiraFieldMeta, 'schema'>): FieldShape | undefined {
  const type = field.schema?.type;
  const custom = customType(field.schema);
  switch (type) {
    case 'string':
      if (custom.endsWith(':textarea')) return 'adf';
      if (custom.endsWith(':url')) return 'url';
      return 'string';
    case 'number':
      return 'number';
    case 'option':
      return 'option';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'array':
      if (field.schema?.items === 'option') return 'options';
      if (field.schema?.items !== 'string') return undefined;
      return custom.endsWith(':labels') ? 'labels' : 'strings';
    default:
      return undefined;
  }
}

const isCustom = (f: JiraFieldMeta) => f.custom === true || f.id.startsWith('customfield_');
const SIZE: ReadonlySet<string> = new Set(SIZE_FIELDS.map((r) => r.toLowerCase()));

/**
 * What a run applies of the confirmed `fields` table, given the site's fields: the size fields' Story Points
 * field (the first size field mapped, in SIZE_FIELDS order) and the writable custom field entries.
 */
export function planFieldMappings(
  confirmed: Readonly<Record<string, string>>,
  siteFields: readonly JiraFieldMeta[],
): FieldPlan {
  const plan: FieldPlan = { custom: [], warnings: [] };
  const byId = new Map(siteFields.map((f) => [f.id, f]));
  for (const size of SIZE_FIELDS) {
    const key = Object.keys(confirmed).find((k) => k.toLowerCase() === size.toLowerCase());
    const id = key === undefined ? undefined : confirmed[key];
    if (id === undefined || plan.storyPointsFieldId !== undefined) continue;
    if (byId.has(id)) plan.storyPointsFieldId = id;
    else
      plan.warnings.push(`fields.${key}: Jira has no field "${id}": the Story Points field is found by name`);
  }
  for (const [source, fieldId] of Object.entries(confirmed)) {
    if (SIZE.has(source.toLowerCase())) continue;
    const field = byId.get(fieldId);
    const label = `fields.${source} -> ${field ? `"${field.name}" (${fieldId})` : fieldId}`;
    if (!field) plan.warnings.push(`${label}: Jira has no such field: ${source} is not migrated`);
    else if (!isCustom(field))
      plan.warnings.push(
        `${label}: a Jira system field, which the migration sets by its own rules: ${source} is not migrated`,
      );
    else {
      const shape = shapeOf(field);
      if (shape) plan.custom.push({ source, fieldId, name: field.name, shape });
      else
        plan.warnings.push(
          `${label}: the migration cannot write a field of type ${String(field.schema?.type ?? 'unknown')}${customType(field.schema) ? ` (${customType(field.schema)})` : ''}: ${source} is not migrated`,
        );
    }
  }
  return plan;
}

/** The text of an ADO value: strings as they are, numbers and booleans spelled out, a person by name. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const person = parseAdoIdentity(value);
  return person?.displayName ?? person?.email;
}

const MARKUP = /<[a-z][^>]*>/i;
/**
 * Whether a value holds a tag. Only its part up to its last `>` is searched: from every `<` with no `>` after
 * it, a backtracking engine would scan to the end (quadratic in a value of such `<`).
 */
const hasMarkup = (text: string) => MARKUP.test(text.slice(0, text.lastIndexOf('>') + 1));
const CUT_NOTE = textToAdf('(cut short: the Azure DevOps value is longer than Jira allows)').content;
/** ADO multi-value fields (tags-like picklists) separate their values with semicolons. */
const partsOf = (text: string) =>
  text
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean);

const fitted = (doc: AdfDoc) => (doc.content.length > 0 ? { value: fitAdf(doc, CUT_NOTE).doc } : {});

/**
 * An ADO field value as the Jira field takes it: `value` to write, undefined when the item has none, or a
 * `problem` (said per item) when it cannot be read as the field's type.
 */
export function customFieldValue(raw: unknown, shape: FieldShape): { value?: unknown; problem?: string } {
  if (raw === undefined || raw === null || raw === '') return {};
  const text = textOf(raw)?.trim();
  switch (shape) {
    case 'number': {
      const n = typeof raw === 'number' ? raw : text !== undefined && text !== '' ? Number(text) : Number.NaN;
      return Number.isFinite(n) ? { value: n } : { problem: `"${text ?? typeof raw}" is not a number` };
    }
    case 'date':
    case 'datetime': {
      const ms = text ? Date.parse(text) : Number.NaN;
      if (Number.isNaN(ms)) return { problem: `"${text ?? typeof raw}" is not a date` };
      const iso = new Date(ms).toISOString();
      // Jira reads a date as yyyy-MM-dd and a date-time with a numeric offset (no `Z`).
      return { value: shape === 'date' ? iso.slice(0, 10) : `${iso.slice(0, 23)}+0000` };
    }
    default:
      break;
  }
  if (!text) return text === '' ? {} : { problem: `a ${typeof raw} value is not text` };
  switch (shape) {
    case 'string':
      return { value: clip(text, JIRA_NAME_MAX) };
    case 'url':
      // Jira shows the value as a link: a `javascript:` or `data:` one would run or render in the reader's
      // browser. Only what a link in a description may be (safeHref) is written.
      if (!URL.canParse(text)) return { problem: `"${text}" is not a URL` };
      return safeHref(text) ? { value: text } : { problem: `"${text}" is not an http(s) or mailto URL` };
    case 'adf': {
      if (!hasMarkup(text)) return fitted(textToAdf(text));
      // HTML over the converter's limits is not parsed (nor written: the field keeps no note of it).
      const breach = htmlLimitBreach(text);
      return breach ? { problem: `HTML not converted (${breach.reason})` } : fitted(htmlToAdf(text));
    }
    case 'option':
      return { value: { value: text } };
    case 'options':
      return { value: partsOf(text).map((value) => ({ value })) };
    case 'strings':
      return { value: partsOf(text) };
    case 'labels':
      return { value: toLabels(partsOf(text)) };
    default:
      return {};
  }
}

/** The custom fields of one item's create or edit request, and what could not be carried over. */
export function customFieldWrites(
  fields: Readonly<Record<string, unknown>>,
  mappings: readonly CustomFieldMapping[],
): { fields: Record<string, unknown>; warnings: string[] } {
  const out: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const m of mappings) {
    const { value, problem } = customFieldValue(fields[m.source], m.shape);
    if (problem) warnings.push(`${m.source} not migrated to "${m.name}": ${problem}`);
    else if (value !== undefined) out[m.fieldId] = value;
  }
  return { fields: out, warnings };
}
