/**
 * GET workItems/{id}/updates[/{updateNumber}]: each revision as the change it made (fields with oldValue and
 * newValue, System.Rev and the revision dates among them; relations added and removed), derived from consecutive revisions so it always agrees with
 * /revisions. `revisedDate` is when the next revision superseded it (9999-01-01 for the latest), `revisedBy`
 * its System.ChangedBy. `$top` (at most 200) and `$skip` page the list.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AdoWorkItem, currentRev } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { type Ctx, NEVER, workItemJson, workItemUrl } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { baseUrl, findItem, intParam, parseId, query } from './params.ts';

type Json = Record<string, unknown>;
type Relation = { rel: string; url: string };

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const relationKey = (r: Relation) => `${r.rel} ${r.url}`;

function revision(ctx: Ctx, item: AdoWorkItem, rev: number): { fields: Json; relations: Relation[] } {
  const json = workItemJson(ctx, item, { expand: 'relations', rev, asRevision: true });
  return { fields: json.fields as Json, relations: (json.relations as Relation[] | undefined) ?? [] };
}

/**
 * The bookkeeping fields an update carries besides the changed ones (System.Rev, AuthorizedDate, RevisedDate:
 * what a revision's dates were and became), as the service's update records do.
 */
function bookkeeping(ctx: Ctx, item: AdoWorkItem, rev: number, revisedDate: string): Json {
  const changed = (r: number) => revision(ctx, item, r).fields['System.ChangedDate'] as string;
  const pair = (oldValue: unknown, newValue: unknown) => (rev > 1 ? { oldValue, newValue } : { newValue });
  const authorized = changed(rev);
  return {
    'System.Rev': pair(rev - 1, rev),
    'System.AuthorizedDate': pair(rev > 1 ? changed(rev - 1) : undefined, authorized),
    'System.RevisedDate': pair(authorized, revisedDate),
  };
}

function updateJson(ctx: Ctx, item: AdoWorkItem, rev: number): Json {
  const now = revision(ctx, item, rev);
  const before = rev > 1 ? revision(ctx, item, rev - 1) : { fields: {}, relations: [] };
  const revisedDate =
    rev < currentRev(item) ? (revision(ctx, item, rev + 1).fields['System.ChangedDate'] as string) : NEVER;
  const fields: Json = bookkeeping(ctx, item, rev, revisedDate);
  for (const name of new Set([...Object.keys(before.fields), ...Object.keys(now.fields)])) {
    const oldValue = before.fields[name];
    const newValue = now.fields[name];
    if (sameValue(oldValue, newValue)) continue;
    fields[name] = {
      ...(oldValue === undefined ? {} : { oldValue }),
      ...(newValue === undefined ? {} : { newValue }),
    };
  }
  const had = new Set(before.relations.map(relationKey));
  const has = new Set(now.relations.map(relationKey));
  const added = now.relations.filter((r) => !had.has(relationKey(r)));
  const removed = before.relations.filter((r) => !has.has(relationKey(r)));
  const out: Json = { id: rev, workItemId: item.id, rev };
  const changedBy = now.fields['System.ChangedBy'] as Json | undefined;
  if (changedBy) out.revisedBy = { ...changedBy, name: `${changedBy.displayName} <${changedBy.uniqueName}>` };
  out.revisedDate = revisedDate;
  out.fields = fields;
  if (added.length || removed.length) {
    out.relations = { ...(added.length ? { added } : {}), ...(removed.length ? { removed } : {}) };
  }
  out.url = `${workItemUrl(ctx, item.id)}/updates/${rev}`;
  return out;
}

export function registerUpdates(app: FastifyInstance, state: AdoState): void {
  const ctxOf = (req: FastifyRequest): Ctx => ({ world: state.world, baseUrl: baseUrl(req) });
  const project = { config: { ado: { scope: 'project' as const } } };

  app.get('/:organization/:project/_apis/wit/workItems/:id/updates', project, async (req) => {
    const q = query(req);
    const item = findItem(state, parseId((req.params as { id: string }).id));
    const top = Math.min(intParam(q, '$top', { min: 1 }) ?? 200, 200);
    const skip = intParam(q, '$skip', { min: 0 }) ?? 0;
    const ctx = ctxOf(req);
    const value: Json[] = [];
    for (let rev = skip + 1; rev <= Math.min(currentRev(item), skip + top); rev++) {
      value.push(updateJson(ctx, item, rev));
    }
    return { count: value.length, value };
  });

  app.get('/:organization/:project/_apis/wit/workItems/:id/updates/:updateNumber', project, async (req) => {
    const params = req.params as { id: string; updateNumber: string };
    const item = findItem(state, parseId(params.id));
    const rev = Number(params.updateNumber);
    if (!Number.isInteger(rev) || rev < 1 || rev > currentRev(item))
      throw AdoErrors.updateNotFound(item.id, params.updateNumber);
    return updateJson(ctxOf(req), item, rev);
  });
}
