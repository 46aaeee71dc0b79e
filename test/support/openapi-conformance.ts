/**
 * Checks the sandbox trackers against the official OpenAPI descriptions in ../shared/specs: a served route must
 * exist there with the same method, and a response must match the documented status and schema.
 *
 * The specs' known quirks (../shared/specs/PROVENANCE.md) are handled here, once:
 *  1. ADO WIQL is specced under `/{org}/{project}/{team}/_apis/wit/wiql`; the team-less path is added.
 *  2. ADO's comment list lives under `x-ms-paths` (keys with query strings): lifted into `paths`.
 *  3. ADO's loose .NET types (`{type: object}` with nothing else) are relaxed to "any".
 *  4. Jira's out-of-enum defaults: ajv runs with `strict: false`.
 *  5. Jira Agile operations without response schemas: only the status is checked.
 * And one the provenance note does not list: ADO specs collection answers as bare arrays, while the service
 * wraps them as `{count, value}`; such a body is checked by its `value`. ADO's `${type}` segment (POST
 * workitems/$Task) is a parameter after a literal `$`. ADO's generic `StreamedBatch<T>` says its `values` are
 * `{type: string, format: T}` (the type parameter); the reporting revisions batch holds WorkItems, so its values
 * are checked as those.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import AjvModule, { type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
// @ts-expect-error swagger2openapi ships no types
import swagger2openapi from 'swagger2openapi';

// Both are CommonJS modules whose default export NodeNext types as the module namespace.
const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;

export type SpecName = 'ado-wit' | 'ado-work' | 'ado-test' | 'ado-testplan' | 'jira-platform' | 'jira-agile';

const FILES: Record<SpecName, { file: string; swagger2: boolean }> = {
  'ado-wit': { file: 'ado/wit_7.1_workItemTracking.json', swagger2: true },
  'ado-work': { file: 'ado/work_7.1_work.json', swagger2: true },
  'ado-test': { file: 'ado/test_7.1_test.json', swagger2: true },
  'ado-testplan': { file: 'ado/testPlan_7.1_testPlan.json', swagger2: true },
  'jira-platform': { file: 'jira/jira-platform-v3.swagger-v3.v3.json', swagger2: false },
  'jira-agile': { file: 'jira/jira-software-agile.swagger.v3.json', swagger2: false },
};

/** The shared specs sit beside the repository (CI clones main with shared/ next to it). */
export const SPECS_DIR =
  process.env.SHARED_SPECS_DIR ?? resolve(import.meta.dirname, '../../../shared/specs');

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface Conformance {
  /** Whether the specs have this route: method + a path template in fastify (`:x`) or spec (`{x}`) syntax. */
  hasRoute(method: string, pathTemplate: string): boolean;
  /** Problems with one exchange: route unknown, status not documented, body off-schema. [] when conformant. */
  checkResponse(ex: { method: string; path: string; status: number; body: unknown }): string[];
}

interface Operation {
  spec: SpecName;
  method: string;
  template: string;
  segments: (string | null)[];
  pattern: RegExp;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  pointer: string;
}

type Json = Record<string, unknown>;

/** Quirk 3: `{type: object}` alone means "any .NET object" in the ADO specs. */
function relaxLooseObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) relaxLooseObjects(n);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  for (const [key, value] of Object.entries(obj)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const v = value as Json;
      const keys = Object.keys(v).filter((k) => k !== 'description');
      if (v.type === 'object' && keys.length === 1) {
        obj[key] = v.description ? { description: v.description } : {};
        continue;
      }
    }
    relaxLooseObjects(value);
  }
}

/** Quirk 2: lift `x-ms-paths` (keys carrying query strings) into `paths`. */
function liftMsPaths(doc: Json): void {
  const extra = (doc['x-ms-paths'] ?? {}) as Record<string, Json>;
  const paths = doc.paths as Record<string, Json>;
  for (const [key, item] of Object.entries(extra)) {
    const [base, query = ''] = key.split('?') as [string, string?];
    paths[base] ??= {};
    const target = paths[base];
    for (const m of METHODS) {
      // The bare `...?` entry is the one the provenance note names: it wins; others fill gaps.
      if (item[m] && (query === '' || !target[m])) target[m] = item[m];
    }
    if (item.parameters && !target.parameters) target.parameters = item.parameters;
  }
}

/** The generic `StreamedBatch<T>` made concrete where the spec names T's batch (see the header). */
const STREAMED_BATCHES: Record<string, string> = {
  ReportingWorkItemRevisionsBatch: '#/definitions/WorkItem',
};

function typeStreamedBatches(doc: Json): void {
  const defs = doc.definitions as Record<string, Json> | undefined;
  const streamed = defs?.StreamedBatch;
  if (!defs || !streamed) return;
  for (const [name, ref] of Object.entries(STREAMED_BATCHES)) {
    if (!defs[name] || !defs[ref.split('/').at(-1) as string]) continue;
    const properties = JSON.parse(JSON.stringify(streamed.properties)) as Record<string, Json>;
    if (properties.values) properties.values.items = { $ref: ref };
    defs[name] = { ...streamed, properties };
  }
}

/** Quirk 1: the team-less WIQL path the real service serves. */
function addTeamlessWiql(doc: Json): void {
  const paths = doc.paths as Record<string, Json>;
  for (const key of Object.keys(paths)) {
    if (key.includes('/{team}/_apis/wit/wiql')) {
      const alias = key.replace('/{team}', '');
      const item = JSON.parse(JSON.stringify(paths[key])) as Json;
      for (const m of METHODS) {
        const op = item[m] as Json | undefined;
        if (op?.parameters) op.parameters = (op.parameters as Json[]).filter((p) => p.name !== 'team');
      }
      paths[alias] ??= item;
    }
  }
}

async function loadDocument(name: SpecName): Promise<Json> {
  const { file, swagger2 } = FILES[name];
  if (!existsSync(resolve(SPECS_DIR, file))) {
    throw new Error(
      `official spec ${file} not found under ${SPECS_DIR}: shared/ must sit beside the repository, or set SHARED_SPECS_DIR`,
    );
  }
  const raw = JSON.parse(readFileSync(resolve(SPECS_DIR, file), 'utf8')) as Json;
  if (!swagger2) return raw;
  liftMsPaths(raw);
  addTeamlessWiql(raw);
  typeStreamedBatches(raw);
  // A fresh copy: the converter refuses objects referenced from two places (it takes them for YAML anchors).
  const copy = JSON.parse(JSON.stringify(raw)) as Json;
  const converted = (await swagger2openapi.convertObj(copy, { patch: true, warnOnly: true })) as {
    openapi: Json;
  };
  relaxLooseObjects(converted.openapi);
  return converted.openapi;
}

/** A parameter after a literal `$`: the spec's `${type}` and fastify's `$:type` (POST workitems/$Task). */
const DOLLAR_PARAM = '$param';
const normaliseSegment = (s: string): string | null =>
  /^\$(\{.+\}|:.+)$/.test(s)
    ? DOLLAR_PARAM
    : /^\{.+\}$/.test(s) || s.startsWith(':')
      ? null
      : s.toLowerCase();
const escapePointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

function templateSegments(template: string): (string | null)[] {
  return template.split('/').filter(Boolean).map(normaliseSegment);
}

function literalCount(op: Operation): number {
  return op.segments.filter((s) => s !== null).length;
}

export async function loadConformance(specs: SpecName[]): Promise<Conformance> {
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    logger: false,
    discriminator: false,
    validateFormats: true,
  });
  addFormats(ajv);
  const operations: Operation[] = [];
  for (const spec of specs) {
    const doc = await loadDocument(spec);
    ajv.addSchema(doc, spec);
    for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const method of METHODS) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        const segments = templateSegments(template);
        const source = segments
          .map((s) =>
            s === null
              ? '[^/]+'
              : s === DOLLAR_PARAM
                ? '\\$[^/]+'
                : s.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&'),
          )
          .join('/');
        operations.push({
          spec,
          method: method.toUpperCase(),
          template,
          segments,
          pattern: new RegExp(`^/${source}/?$`, 'i'),
          responses: (op.responses ?? {}) as Operation['responses'],
          pointer: `#/paths/${escapePointer(template)}/${method}/responses`,
        });
      }
    }
  }
  const validators = new Map<string, ValidateFunction>();

  function find(method: string, path: string): Operation | undefined {
    const bare = path.split('?')[0] ?? path;
    const candidates = operations.filter((o) => o.method === method.toUpperCase() && o.pattern.test(bare));
    // The most specific template wins (`/issue/bulk` over `/issue/{issueIdOrKey}`).
    return candidates.sort((a, b) => literalCount(b) - literalCount(a))[0];
  }

  return {
    hasRoute(method, pathTemplate) {
      const wanted = templateSegments(pathTemplate);
      return operations.some(
        (o) =>
          o.method === method.toUpperCase() &&
          o.segments.length === wanted.length &&
          o.segments.every((s, i) => s === wanted[i] || (s === null && wanted[i] === null)),
      );
    },

    checkResponse({ method, path, status, body }) {
      const op = find(method, path);
      if (!op) return [`${method} ${path}: no such operation in the specs`];
      const code = String(status);
      const responseKey = [code, `${code[0]}XX`, 'default'].find((k) => op.responses[k]);
      if (!responseKey) {
        return [
          `${method} ${op.template}: status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`,
        ];
      }
      const content = op.responses[responseKey]?.content ?? {};
      const mediaType =
        ['application/json', '*/*'].find((m) => content[m]?.schema) ??
        Object.keys(content).find((m) => content[m]?.schema);
      if (!mediaType || body === undefined || body === '') return [];
      const schema = content[mediaType]?.schema as Json;
      const key = `${op.spec}${op.pointer}/${escapePointer(responseKey)}/content/${escapePointer(mediaType)}/schema`;
      const validate = validators.get(key) ?? ajv.compile({ $ref: key });
      validators.set(key, validate);
      const isEnvelope =
        schema?.type === 'array' &&
        body !== null &&
        typeof body === 'object' &&
        !Array.isArray(body) &&
        'value' in (body as Json);
      const subject = isEnvelope ? (body as Json).value : body;
      if (validate(subject)) return [];
      return (validate.errors ?? [])
        .slice(0, 10)
        .map((e) => `${method} ${op.template} ${status}: ${e.instancePath || '(body)'} ${e.message}`);
    },
  };
}
