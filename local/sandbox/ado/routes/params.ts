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

/**
 * A .NET enum as the service binds it: by name in any case, or by its number (the typed clients, e.g.
 * azure-devops-node-api, send numbers: WorkItemExpand.Relations is 1). Undefined when absent.
 */
export function enumParam<T extends string>(
  raw: unknown,
  values: Record<T, number>,
  name: string,
): T | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const text = String(raw).trim();
  const names = Object.keys(values) as T[];
  const found = /^-?\d+$/.test(text)
    ? names.find((n) => values[n] === Number(text))
    : names.find((n) => n.toLowerCase() === text.toLowerCase());
  if (found === undefined)
    throw AdoErrors.badRequest(
      `The value '${raw}' is not valid for ${name}. Valid values: ${names.join(', ')}.`,
    );
  return found;
}

/** WorkItemExpand's values (WorkItemTrackingInterfaces.WorkItemExpand). */
const EXPANDS: Record<Expand, number> = { none: 0, relations: 1, fields: 2, links: 3, all: 4 };

export function expandParam(raw: unknown): Expand {
  return enumParam(raw, EXPANDS, '$expand') ?? 'none';
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
