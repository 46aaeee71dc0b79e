/** Query and path parameter parsing with the service's kind of 400s. */
import type { FastifyRequest } from 'fastify';
import type { AdoWorkItem } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import type { Expand } from '../serialize.ts';
import type { AdoState } from '../state.ts';

export type Query = Record<string, string | undefined>;

export function query(req: FastifyRequest): Query {
  return req.query as Query;
}

/** The query value for a name, case-insensitively (`$Top`, `$top`). */
export function param(q: Query, name: string): string | undefined {
  const key = Object.keys(q).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : q[key];
}

export function intParam(q: Query, name: string, opts: { min?: number } = {}): number | undefined {
  const raw = param(q, name);
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw.trim())) throw AdoErrors.badRequest(`The value '${raw}' is not valid for ${name}.`);
  const n = Number(raw);
  if (opts.min !== undefined && n < opts.min) {
    throw AdoErrors.badRequest(
      `Specified argument was out of the range of valid values. Parameter name: ${name}`,
    );
  }
  return n;
}

export function boolParam(q: Query, name: string): boolean {
  return param(q, name)?.toLowerCase() === 'true';
}

const EXPANDS: Expand[] = ['none', 'relations', 'fields', 'links', 'all'];

export function expandParam(raw: unknown): Expand {
  if (raw === undefined || raw === null || raw === '') return 'none';
  const v = String(raw).toLowerCase();
  const found = EXPANDS.find((e) => e === v);
  if (!found)
    throw AdoErrors.badRequest(
      `The value '${raw}' is not valid for $expand. Valid values: ${EXPANDS.join(', ')}.`,
    );
  return found;
}

export function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? 'localhost'}`;
}

export function parseId(raw: string | undefined): number {
  if (!raw || !/^\d+$/.test(raw)) throw AdoErrors.badRequest(`The work item id '${raw ?? ''}' is not valid.`);
  return Number(raw);
}

export function findItem(state: AdoState, id: number): AdoWorkItem {
  const item = state.world.workItems[id - 1];
  if (!item) throw AdoErrors.workItemNotFound(id);
  return item;
}
