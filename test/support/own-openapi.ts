/**
 * Our own published contract as a test oracle, the way ./openapi-conformance.ts holds the sandboxes to the
 * trackers' official specs: every answer the integration tests receive through the test app (./app.ts) must be
 * a status the document lists for its operation, with a body its schema accepts, and an error code the
 * operation declares. So the document (functions/api/openapi.ts) cannot drift from what the handlers answer.
 */
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../functions/api/openapi.ts';

// CommonJS modules whose default export NodeNext types as the module namespace.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, Json>;
}

const DOC_ID = 'tms-openapi';

function compile(doc: { paths: Record<string, Record<string, Json>> }) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_ID);
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const source = template
      .split('/')
      .map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const [method, op] of Object.entries(item)) {
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}/?$`),
        responses: op.responses as Record<string, Json>,
      });
    }
  }
  // The literal path wins over a template (`/api/auth/sso/callback` is no tenant slug).
  operations.sort((a, b) =>
    (b.template.match(/\{/g)?.length ?? 0) > (a.template.match(/\{/g)?.length ?? 0) ? -1 : 1,
  );
  return { ajv, operations, validators: new Map<string, ValidateFunction>() };
}

/**
 * The compiled document, kept on `globalThis` for the worker: the files of `shared-packages` get this module fresh
 * each (test/support/fresh-modules.ts), and compiling the document's schemas again cost each of them about 0.2
 * CPU-s. Keyed by the document itself, so a changed contract (watch mode) is compiled again.
 */
const CACHE = Symbol.for('tms.test.own-openapi');
const cache = globalThis as { [CACHE]?: { key: string; compiled: ReturnType<typeof compile> } };

let compiled: ReturnType<typeof compile> | undefined;

function compiledDocument(): ReturnType<typeof compile> {
  if (compiled) return compiled;
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, Json>> };
  const key = JSON.stringify(doc);
  if (cache[CACHE]?.key !== key) cache[CACHE] = { key, compiled: compile(doc) };
  compiled = cache[CACHE].compiled;
  return compiled;
}

/** Problems with one exchange against our document; [] when it conforms (or the route is not ours). */
export function checkAgainstOwnDocument(ex: {
  method: string;
  path: string;
  status: number;
  contentType: string | undefined;
  body: unknown;
  text: string;
}): string[] {
  const oracle = compiledDocument();
  const pathname = new URL(ex.path, 'http://x').pathname;
  const op = oracle.operations.find((o) => o.method === ex.method.toUpperCase() && o.pattern.test(pathname));
  // An unknown route (404 ROUTE_NOT_FOUND) or method (405) is the gateway's, documented once in the info.
  if (!op) return [];
  const where = `${ex.method.toUpperCase()} ${op.template} -> ${ex.status}`;
  const response = op.responses[String(ex.status)];
  if (!response) return [`${where}: status not in the document (body: ${ex.text.slice(0, 300)})`];
  const content = response.content as Record<string, Json> | undefined;
  if (!content)
    return ex.text === '' ? [] : [`${where}: the document says no body, got ${ex.text.slice(0, 200)}`];
  const type = (ex.contentType ?? '').split(';')[0]?.trim() ?? '';
  if (!content[type]) return [`${where}: content type ${type} not in the document`];
  if (type !== 'application/json') return [];
  const pointer = `${DOC_ID}#/paths/${op.template.replaceAll('~', '~0').replaceAll('/', '~1')}/${ex.method.toLowerCase()}/responses/${ex.status}/content/application~1json/schema`;
  let validate = oracle.validators.get(pointer);
  if (!validate) {
    validate = oracle.ajv.compile({ $ref: pointer });
    oracle.validators.set(pointer, validate);
  }
  if (validate(ex.body)) return [];
  return (validate.errors ?? []).map(
    (e) => `${where}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`,
  );
}
