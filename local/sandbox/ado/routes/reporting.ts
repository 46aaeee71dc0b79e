/**
 * The reporting revisions API (`GET`/`POST {org}/{project}/_apis/wit/reporting/workitemrevisions`): every revision
 * of every work item of the project, in the order they were made, a batch at a time, as a warehouse reads them.
 * Microsoft: https://learn.microsoft.com/en-us/rest/api/azure/devops/wit/reporting-work-item-revisions?view=azure-devops-rest-7.1
 * (Read Reporting Revisions Get / Post); the shapes are the 7.1 spec's (`ReportingWorkItemRevisionsBatch`, a
 * `StreamedBatch`: `values`, `nextLink`, `continuationToken`, `isLastBatch`; `ReportingWorkItemRevisionsFilter`).
 *
 * - The **watermark** is a revision's position in the project's change order (by ChangedDate, then id, then rev);
 *   `continuationToken` is the watermark of the batch's last revision and the next batch starts after it. A
 *   revision made later (a PATCH, a comment) gets a later watermark, so a reader that goes on from its token sees
 *   it; `isLastBatch` says the batch reached the current end (the token then still names where to go on from).
 * - `startDateTime` (revisions after that instant) cannot be combined with a token (a 400, as the docs say).
 * - `types` (the item's type), `fields` (reference names; an unknown one is TF51535), `includeLatestOnly` (only
 *   each item's current revision), `includeIdentityRef` (identity fields as IdentityRef objects; by default the
 *   reporting API's `Display Name <unique name>` strings), `$expand=fields` (long text fields, HTML and plain text,
 *   and History, which are not returned by default), `includeDeleted` (the sandbox deletes nothing).
 * - `$maxPageSize` (GET): Microsoft gives no bound; the sandbox answers at most 200 revisions a batch (its default
 *   too), so a client must follow the token until `isLastBatch`, as the docs' workflow says anyway.
 * - Not emulated (501): `includeTagRef` and `includeDiscussionChangesOnly` set to true.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  type AdoWorkItem,
  type AdoWorld,
  currentRev,
  findField,
  revisionPlan,
} from '../../generator/index.ts';
import { AdoErrors, notEmulatedError } from '../errors.ts';
import { type Ctx, workItemJson, workItemUrl } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { baseUrl, boolParam, enumParam, intParam, param, query } from './params.ts';

/** The most revisions one batch holds, and how many it holds unless `$maxPageSize` asks for fewer. */
export const REPORTING_BATCH_MAX = 200;

interface Entry {
  at: number;
  item: AdoWorkItem;
  rev: number;
}

/** The project's revisions in change order, kept while no revision is added (a PATCH adds one). */
const streams = new WeakMap<AdoWorld, { version: number; entries: Entry[] }>();

function changeOrder(world: AdoWorld): Entry[] {
  let version = 0;
  for (const item of world.workItems) version += currentRev(item);
  const cached = streams.get(world);
  if (cached?.version === version) return cached.entries;
  const entries: Entry[] = [];
  for (const item of world.workItems) {
    revisionPlan(world, item).forEach((r, i) => {
      entries.push({ at: r.changedDate, item, rev: i + 1 });
    });
    for (const u of item.updates ?? []) entries.push({ at: u.changedDate, item, rev: u.rev });
  }
  entries.sort((a, b) => a.at - b.at || a.item.id - b.item.id || a.rev - b.rev);
  streams.set(world, { version, entries });
  return entries;
}

const LONG_TEXT = new Set(['html', 'plainText', 'history']);

interface Filter {
  fields?: string[];
  types?: string[];
  includeIdentityRef: boolean;
  includeLatestOnly: boolean;
  expandFields: boolean;
  continuationToken?: string;
  startDateTime?: string;
  maxPageSize: number;
}

function fieldNames(raw: string[] | undefined): string[] | undefined {
  if (!raw) return undefined;
  const names = raw.map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return undefined;
  return names.map((n) => {
    const def = findField(n);
    if (!def) throw AdoErrors.fieldNotFound(n);
    return def.referenceName;
  });
}

const list = (raw: string | undefined) => (raw ? raw.split(',') : undefined);

/** Where the batch starts: after the token's watermark, or after `startDateTime`, or at the beginning. */
function startIndex(entries: Entry[], f: Filter): number {
  if (f.continuationToken !== undefined && f.startDateTime !== undefined)
    throw AdoErrors.badRequest('startDateTime cannot be used in conjunction with continuationToken.');
  if (f.continuationToken !== undefined) {
    if (!/^\d+$/.test(f.continuationToken))
      throw AdoErrors.badRequest(`The continuation token '${f.continuationToken}' is not valid.`);
    return Math.min(Number(f.continuationToken), entries.length);
  }
  if (f.startDateTime !== undefined) {
    const after = Date.parse(f.startDateTime);
    if (Number.isNaN(after))
      throw AdoErrors.badRequest(`The value '${f.startDateTime}' is not a valid date for startDateTime.`);
    const i = entries.findIndex((e) => e.at > after);
    return i < 0 ? entries.length : i;
  }
  return 0;
}

/** An identity field as the reporting API gives it unless asked for references: `Display Name <unique name>`. */
function identityText(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const { displayName, uniqueName } = v as { displayName?: string; uniqueName?: string };
  return uniqueName ? `${displayName ?? ''} <${uniqueName}>` : (displayName ?? v);
}

function revisionJson(ctx: Ctx, e: Entry, f: Filter): Record<string, unknown> {
  const full = workItemJson(ctx, e.item, { expand: 'fields', rev: e.rev, asRevision: true });
  const all = full.fields as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [ref, value] of Object.entries(all)) {
    if (f.fields && !f.fields.includes(ref)) continue;
    const def = findField(ref);
    if (!f.expandFields && def && LONG_TEXT.has(def.type)) continue;
    fields[ref] = def?.type === 'identity' && !f.includeIdentityRef ? identityText(value) : value;
  }
  return { id: e.item.id, rev: e.rev, fields, url: `${workItemUrl(ctx, e.item.id)}/revisions/${e.rev}` };
}

function batch(state: AdoState, req: FastifyRequest, f: Filter, nextQuery: URLSearchParams) {
  const ctx: Ctx = { world: state.world, baseUrl: baseUrl(req) };
  const entries = changeOrder(state.world);
  const types = f.types?.map((t) => t.trim().toLowerCase()).filter(Boolean);
  const wanted = (e: Entry) =>
    (!types?.length || types.includes(e.item.type.toLowerCase())) &&
    (!f.includeLatestOnly || e.rev === currentRev(e.item));
  const values: Record<string, unknown>[] = [];
  let i = startIndex(entries, f);
  for (; i < entries.length && values.length < f.maxPageSize; i++) {
    const e = entries[i]!;
    if (wanted(e)) values.push(revisionJson(ctx, e, f));
  }
  // The rest of the stream may hold nothing this reader wants: then this is its last batch.
  let rest = i;
  while (rest < entries.length && !wanted(entries[rest]!)) rest++;
  const isLastBatch = rest >= entries.length;
  const continuationToken = String(isLastBatch ? entries.length : i);
  nextQuery.delete('startDateTime');
  nextQuery.set('continuationToken', continuationToken);
  const nextLink = `${ctx.baseUrl}/${encodeURIComponent(state.world.org)}/${state.world.projectId}/_apis/wit/reporting/workItemRevisions?${nextQuery}`;
  return { values, nextLink, continuationToken, isLastBatch };
}

const Body = z.object({
  fields: z.array(z.string()).optional().nullable(),
  types: z.array(z.string()).optional().nullable(),
  includeIdentityRef: z.boolean().optional().nullable(),
  includeLatestOnly: z.boolean().optional().nullable(),
  includeDeleted: z.boolean().optional().nullable(),
  includeTagRef: z.boolean().optional().nullable(),
});

const expandFields = (raw: string | undefined) =>
  enumParam(raw, { none: 0, fields: 1 }, '$expand') === 'fields';

function notEmulated(flag: boolean, name: string): void {
  if (flag) throw notEmulatedError('GET', `reporting/workitemrevisions with ${name}=true`);
}

/** The query's own parameters, kept for `nextLink` (a GET's filters travel in it). */
function queryOf(req: FastifyRequest): URLSearchParams {
  const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  for (const k of [...q.keys()]) if (k.toLowerCase() === 'continuationtoken') q.delete(k);
  return q;
}

export function registerReporting(app: FastifyInstance, state: AdoState): void {
  const project = { config: { ado: { scope: 'project' as const } } };

  app.get('/:organization/:project/_apis/wit/reporting/workitemrevisions', project, async (req) => {
    const q = query(req);
    notEmulated(boolParam(q, 'includeTagRef'), 'includeTagRef');
    notEmulated(boolParam(q, 'includeDiscussionChangesOnly'), 'includeDiscussionChangesOnly');
    const filter: Filter = {
      fields: fieldNames(list(param(q, 'fields'))),
      types: list(param(q, 'types')),
      includeIdentityRef: boolParam(q, 'includeIdentityRef'),
      includeLatestOnly: boolParam(q, 'includeLatestOnly'),
      expandFields: expandFields(param(q, '$expand')),
      continuationToken: param(q, 'continuationToken'),
      startDateTime: param(q, 'startDateTime'),
      maxPageSize: Math.min(
        intParam(q, '$maxPageSize', { min: 1 }) ?? REPORTING_BATCH_MAX,
        REPORTING_BATCH_MAX,
      ),
    };
    return batch(state, req, filter, queryOf(req));
  });

  app.post('/:organization/:project/_apis/wit/reporting/workitemrevisions', project, async (req) => {
    const parsed = Body.safeParse(req.body ?? {});
    if (!parsed.success) {
      throw AdoErrors.badRequest(
        `The request body is not a valid ReportingWorkItemRevisionsFilter: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const b = parsed.data;
    notEmulated(b.includeTagRef === true, 'includeTagRef');
    const q = query(req);
    const filter: Filter = {
      fields: fieldNames(b.fields ?? undefined),
      types: b.types ?? undefined,
      includeIdentityRef: b.includeIdentityRef === true,
      includeLatestOnly: b.includeLatestOnly === true,
      expandFields: expandFields(param(q, '$expand')),
      continuationToken: param(q, 'continuationToken'),
      startDateTime: param(q, 'startDateTime'),
      maxPageSize: REPORTING_BATCH_MAX,
    };
    return batch(state, req, filter, queryOf(req));
  });
}
