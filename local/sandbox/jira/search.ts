/**
 * The enhanced search (`/rest/api/3/search/jql`, GET and POST) with token paging, a `fields` selection (ids
 * only by default) and index lag: the answer comes from the index, where a write shows only `searchLagMs`
 * after it happened. Until then an issue just created is not found and one just edited is matched, and
 * answered, with its previous values (Atlassian: without reconcileIssues the search "may return stale or
 * outdated data"). Issues named in `reconcileIssues` are matched and answered in their current state
 * (Jira's read-after-write aid).
 * The removed `/rest/api/3/search` answers 410 Gone, as Atlassian's does since its removal.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentAccount } from './auth.ts';
import { sendError } from './errors.ts';
import { compileJql, JqlError, parseJql, sortDocs } from './jql.ts';
import { Render, selectFields } from './render.ts';
import type { IndexDoc, IssueRec, JiraStore } from './store.ts';

const MAX_RECONCILE = 50;
/** Page size caps: ids-only pages may be large; pages with field data are capped like Jira's. */
const MAX_IDS_PAGE = 5000;
const MAX_FIELDS_PAGE = 100;

const UNBOUNDED =
  'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.';
export const SEARCH_REMOVED =
  'The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046';

interface SearchRequest {
  jql?: unknown;
  nextPageToken?: unknown;
  maxResults?: unknown;
  fields?: unknown;
  reconcileIssues?: unknown;
}

class BadRequest extends Error {}

const queryHash = (jql: string) => createHash('sha256').update(jql).digest('base64url').slice(0, 12);

function encodeToken(offset: number, jql: string): string {
  return Buffer.from(JSON.stringify({ o: offset, q: queryHash(jql) })).toString('base64url');
}

function decodeToken(token: string, jql: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      o?: unknown;
      q?: unknown;
    };
    if (
      typeof parsed.o === 'number' &&
      Number.isInteger(parsed.o) &&
      parsed.o >= 0 &&
      parsed.q === queryHash(jql)
    ) {
      return parsed.o;
    }
  } catch {
    // Falls through to the error below.
  }
  throw new BadRequest('The provided next page token is invalid or expired.');
}

const listOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((x) => String(x).split(',')).filter(Boolean);

export function registerSearchRoutes(app: FastifyInstance, store: JiraStore): void {
  const search = (req: FastifyRequest, input: SearchRequest) => {
    const jql = typeof input.jql === 'string' ? input.jql : '';
    const parsed = parseJql(jql);
    const predicate = compileJql(parsed, store, currentAccount(req).accountId);
    if (!predicate) throw new JqlError(UNBOUNDED);

    const reconcile = new Set<number>();
    for (const raw of listOf(input.reconcileIssues)) {
      if (!/^\d+$/.test(raw.trim())) throw new BadRequest(`Invalid issue id in reconcileIssues: '${raw}'.`);
      reconcile.add(Number(raw));
    }
    if (reconcile.size > MAX_RECONCILE) {
      throw new BadRequest(`reconcileIssues accepts at most ${MAX_RECONCILE} issue ids.`);
    }

    const selection = selectFields(input.fields, 'id-only');
    let maxResults = 50;
    if (input.maxResults !== undefined && input.maxResults !== '') {
      const n = Number(input.maxResults);
      if (!Number.isInteger(n) || n < 0)
        throw new BadRequest(`Invalid maxResults: '${String(input.maxResults)}'.`);
      maxResults = n;
    }
    maxResults = Math.min(maxResults, selection === 'id-only' ? MAX_IDS_PAGE : MAX_FIELDS_PAGE);
    const offset =
      typeof input.nextPageToken === 'string' && input.nextPageToken !== ''
        ? decodeToken(input.nextPageToken, jql)
        : 0;

    // Each match with the issue as it is answered: the index's copy, or the live issue when reconciled.
    const answered = new Map<IndexDoc, IssueRec>();
    for (const issue of store.issues.values()) {
      const view = reconcile.has(issue.id)
        ? { doc: store.indexDoc(issue), issue }
        : store.indexedEntry(issue);
      if (view && predicate(view.doc)) answered.set(view.doc, view.issue);
    }
    const ordered = sortDocs([...answered.keys()], parsed.orderBy);
    const page = ordered.slice(offset, offset + maxResults);
    const render = Render.of(store, req);
    const issues = page.flatMap((d) => {
      const issue = answered.get(d);
      return issue ? [render.issue(issue, selection)] : [];
    });
    const isLast = offset + page.length >= ordered.length;
    return {
      issues,
      ...(isLast ? {} : { nextPageToken: encodeToken(offset + page.length, jql) }),
      isLast,
    };
  };

  const answer = async (req: FastifyRequest, reply: FastifyReply, input: SearchRequest) => {
    try {
      return search(req, input);
    } catch (err) {
      if (err instanceof JqlError || err instanceof BadRequest) return sendError(reply, 400, [err.message]);
      throw err;
    }
  };

  app.get('/rest/api/3/search/jql', async (req, reply) => answer(req, reply, req.query as SearchRequest));

  app.post('/rest/api/3/search/jql', async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const known = [
      'jql',
      'nextPageToken',
      'maxResults',
      'fields',
      'expand',
      'properties',
      'fieldsByKeys',
      'reconcileIssues',
      'failFast',
    ];
    const unknown = Object.keys(body).find((k) => !known.includes(k));
    if (unknown) {
      return sendError(reply, 400, [`Unrecognized field "${unknown}" (not marked as ignorable).`]);
    }
    return answer(req, reply, body);
  });

  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/rest/api/3/search',
      handler: async (_req, reply) => sendError(reply, 410, [SEARCH_REMOVED]),
    });
  }
}
