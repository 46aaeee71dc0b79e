/**
 * Reading work items: one by id, a list by `ids` (GET) or by body (POST workitemsbatch), both capped at 200, and
 * revisions. `$expand` and `fields` are exclusive, as on the service; `asOf` picks the revision in force then;
 * `errorPolicy=omit` answers null for missing ids instead of failing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type AdoWorkItem, currentRev, findField, revisionPlan } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { type Ctx, type Expand, workItemJson } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { baseUrl, enumParam, expandParam, findItem, intParam, param, parseId, query } from './params.ts';

export const BATCH_LIMIT = 200;

function parseFields(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const list = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
  const names = list.map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!findField(n)) throw AdoErrors.fieldNotFound(n);
  return names;
}

function checkExpandAndFields(expand: Expand, fields: string[] | undefined): void {
  if (fields && expand !== 'none') throw AdoErrors.expandWithFields();
}

/** Every revision's date: the generated ones, then PATCHes. */
function revisionDates(state: AdoState, item: AdoWorkItem): number[] {
  return [
    ...revisionPlan(state.world, item).map((r) => r.changedDate),
    ...(item.updates ?? []).map((u) => u.changedDate),
  ];
}

function revisionAsOf(state: AdoState, item: AdoWorkItem, asOf: string | undefined): number | undefined {
  if (asOf === undefined || asOf === '') return undefined;
  const at = Date.parse(asOf);
  if (Number.isNaN(at)) throw AdoErrors.badRequest(`The value '${asOf}' is not a valid date for asOf.`);
  const dates = revisionDates(state, item);
  let rev = 0;
  dates.forEach((d, i) => {
    if (d <= at) rev = i + 1;
  });
  if (rev === 0) throw AdoErrors.workItemNotFound(item.id);
  return rev;
}

interface ListRequest {
  ids: number[];
  fields?: string[];
  expand: Expand;
  asOf?: string;
  errorPolicy: 'fail' | 'omit';
}

function listItems(state: AdoState, ctx: Ctx, r: ListRequest): (Record<string, unknown> | null)[] {
  if (r.ids.length > BATCH_LIMIT) throw AdoErrors.tooManyIds(r.ids.length);
  checkExpandAndFields(r.expand, r.fields);
  return r.ids.map((id) => {
    const item = state.world.workItems[id - 1];
    if (!item) {
      if (r.errorPolicy === 'omit') return null;
      throw AdoErrors.workItemNotFound(id);
    }
    return workItemJson(ctx, item, {
      expand: r.expand,
      fields: r.fields,
      rev: revisionAsOf(state, item, r.asOf),
    });
  });
}

const BatchBody = z.object({
  ids: z.array(z.number().int()).min(1),
  fields: z.array(z.string()).optional().nullable(),
  // Names or the enums' numbers, as the service binds them.
  $expand: z.union([z.string(), z.number().int()]).optional().nullable(),
  asOf: z.string().optional().nullable(),
  errorPolicy: z.union([z.string(), z.number().int()]).optional().nullable(),
});

function errorPolicy(raw: unknown): 'fail' | 'omit' {
  return enumParam(raw, { fail: 1, omit: 2 }, 'errorPolicy') ?? 'fail';
}

export function registerWorkItems(app: FastifyInstance, state: AdoState): void {
  const ctxOf = (req: FastifyRequest): Ctx => ({ world: state.world, baseUrl: baseUrl(req) });
  const project = { config: { ado: { scope: 'project' as const } } };

  app.get('/:organization/:project/_apis/wit/workitems/:id', project, async (req) => {
    const q = query(req);
    const item = findItem(state, parseId((req.params as { id: string }).id));
    const expand = expandParam(param(q, '$expand'));
    const fields = parseFields(param(q, 'fields'));
    checkExpandAndFields(expand, fields);
    return workItemJson(ctxOf(req), item, {
      expand,
      fields,
      rev: revisionAsOf(state, item, param(q, 'asOf')),
      linksByDefault: true,
    });
  });

  app.get('/:organization/:project/_apis/wit/workitems', project, async (req) => {
    const q = query(req);
    const rawIds = param(q, 'ids');
    if (!rawIds) throw AdoErrors.badRequest('Value cannot be null. Parameter name: ids');
    const ids = rawIds.split(',').map((s) => parseId(s.trim()));
    const value = listItems(state, ctxOf(req), {
      ids,
      fields: parseFields(param(q, 'fields')),
      expand: expandParam(param(q, '$expand')),
      asOf: param(q, 'asOf'),
      errorPolicy: errorPolicy(param(q, 'errorPolicy')),
    });
    return { count: value.length, value };
  });

  app.post('/:organization/:project/_apis/wit/workitemsbatch', project, async (req) => {
    const parsed = BatchBody.safeParse(req.body);
    if (!parsed.success) {
      throw AdoErrors.badRequest(
        `The request body is not a valid WorkItemBatchGetRequest: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const b = parsed.data;
    const value = listItems(state, ctxOf(req), {
      ids: b.ids,
      fields: parseFields(b.fields ?? undefined),
      expand: expandParam(b.$expand ?? undefined),
      asOf: b.asOf ?? undefined,
      errorPolicy: errorPolicy(b.errorPolicy ?? undefined),
    });
    return { count: value.length, value };
  });

  app.get('/:organization/:project/_apis/wit/workItems/:id/revisions', project, async (req) => {
    const q = query(req);
    const item = findItem(state, parseId((req.params as { id: string }).id));
    const expand = expandParam(param(q, '$expand'));
    const top = intParam(q, '$top', { min: 1 }) ?? 200;
    const skip = intParam(q, '$skip', { min: 0 }) ?? 0;
    const ctx = ctxOf(req);
    const latest = currentRev(item);
    const value: Record<string, unknown>[] = [];
    for (let rev = skip + 1; rev <= Math.min(latest, skip + Math.min(top, 200)); rev++) {
      value.push(workItemJson(ctx, item, { expand, rev, asRevision: true }));
    }
    return { count: value.length, value };
  });

  app.get(
    '/:organization/:project/_apis/wit/workItems/:id/revisions/:revisionNumber',
    project,
    async (req) => {
      const params = req.params as { id: string; revisionNumber: string };
      const item = findItem(state, parseId(params.id));
      const rev = Number(params.revisionNumber);
      if (!Number.isInteger(rev) || rev < 1 || rev > currentRev(item))
        throw AdoErrors.revisionNotFound(item.id, rev);
      return workItemJson(ctxOf(req), item, {
        expand: expandParam(param(query(req), '$expand')),
        rev,
        asRevision: true,
      });
    },
  );
}
