/**
 * POST wiql (project and team scoped): ids only, as the real service answers. Results over 20,000 are refused
 * with VS402337 unless `$top` (at most 20,000) caps them first.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adoDate } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { type Ctx, fieldUrl, workItemUrl } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { runWiql } from '../wiql/run.ts';
import { baseUrl, boolParam, intParam, query } from './params.ts';

export const WIQL_LIMIT = 20_000;

export function registerWiql(app: FastifyInstance, state: AdoState): void {
  const handler = async (req: FastifyRequest) => {
    const body = req.body as { query?: unknown } | null | undefined;
    if (!body || typeof body.query !== 'string' || body.query.trim() === '') {
      throw AdoErrors.badRequest('Value cannot be null. Parameter name: wiql.Query');
    }
    const q = query(req);
    const top = intParam(q, '$top', { min: 1 });
    const now = Date.now();
    const result = runWiql(body.query, {
      world: state.world,
      timePrecision: boolParam(q, 'timePrecision'),
      now,
      me: state.me,
    });
    let ids = result.ids;
    if (top !== undefined && top <= WIQL_LIMIT) ids = ids.slice(0, top);
    else if (ids.length > WIQL_LIMIT) throw AdoErrors.queryTooLarge();
    const ctx: Ctx = { world: state.world, baseUrl: baseUrl(req) };
    const ref = (f: { referenceName: string; name: string }) => ({
      referenceName: f.referenceName,
      name: f.name,
      url: fieldUrl(ctx, f.referenceName),
    });
    return {
      queryType: 'flat',
      queryResultType: 'workItem',
      asOf: adoDate(now),
      columns: result.columns.map(ref),
      ...(result.sortColumns.length
        ? { sortColumns: result.sortColumns.map((s) => ({ field: ref(s.field), descending: s.descending })) }
        : {}),
      workItems: ids.map((id) => ({ id, url: workItemUrl(ctx, id) })),
    };
  };
  app.post('/:organization/:project/_apis/wit/wiql', { config: { ado: { scope: 'project' } } }, handler);
  app.post('/:organization/:project/:team/_apis/wit/wiql', { config: { ado: { scope: 'team' } } }, handler);
}
