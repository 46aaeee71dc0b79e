/**
 * GET workItems/{id}/comments (7.1-preview.4): pages of at most 200 (`$top` is capped there), newest first
 * unless `order=asc`, with an opaque continuationToken and a nextPage URL while more remain. Deleted comments
 * only with `includeDeleted=true`. With `ids=` it is the spec's "get comments batch" instead.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { commentDeleted, commentIndex, commentSlots } from '../../generator/comments.ts';
import { commentAt } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { commentJson, workItemUrl } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { baseUrl, boolParam, enumParam, findItem, intParam, param, parseId, query } from './params.ts';

export const COMMENT_PAGE_MAX = 200;

interface Token {
  /** Position in the ordered list of comments the next page starts at. */
  offset: number;
  order: 'asc' | 'desc';
  workItemId: number;
  includeDeleted: boolean;
}

const encode = (t: Token) => Buffer.from(JSON.stringify(t)).toString('base64url');

function decode(raw: string, workItemId: number): Token {
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Token;
    if (t.workItemId === workItemId && Number.isInteger(t.offset) && t.offset >= 0) return t;
  } catch {
    // fall through to the 400
  }
  throw AdoErrors.badRequest(`The continuation token '${raw}' is not valid.`);
}

/**
 * Whether `$expand` asks for renderedText: CommentExpandOptions by name, or by number as a flags value
 * (RenderedText 8, RenderedTextOnly 16, All -17; the typed client sends the number).
 */
function rendersText(raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  const text = raw.trim();
  if (/^-?\d+$/.test(text)) return (Number(text) & (8 | 16)) !== 0;
  return text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .some((s) => s === 'renderedtext' || s === 'renderedtextonly' || s === 'all');
}

export function registerComments(app: FastifyInstance, state: AdoState): void {
  app.get(
    '/:organization/:project/_apis/wit/workItems/:workItemId/comments',
    { config: { ado: { scope: 'project', preview: true } } },
    async (req: FastifyRequest) => {
      const q = query(req);
      const item = findItem(state, parseId((req.params as { workItemId: string }).workItemId));
      const world = state.world;
      const base = baseUrl(req);
      const ctx = { world, baseUrl: base };
      const rendered = rendersText(param(q, '$expand'));
      const url = `${workItemUrl(ctx, item.id)}/comments`;
      const ids = param(q, 'ids');
      if (ids) {
        const comments = ids
          .split(',')
          .map((s) => commentIndex(item, Number(s.trim())))
          .filter((k) => k >= 0)
          .map((k) => commentJson(ctx, commentAt(world, item, k, base), rendered));
        return { totalCount: comments.length, count: comments.length, comments, url };
      }
      const token = param(q, 'continuationToken');
      const includeDeleted = boolParam(q, 'includeDeleted');
      const rawOrder = enumParam(param(q, 'order'), { asc: 1, desc: 2 }, 'order') ?? 'desc';
      const state0: Token = token
        ? decode(token, item.id)
        : { offset: 0, order: rawOrder, workItemId: item.id, includeDeleted };
      const top = Math.min(intParam(q, '$top', { min: 1 }) ?? COMMENT_PAGE_MAX, COMMENT_PAGE_MAX);
      // Comment indexes in creation order, without deleted ones unless asked for.
      const indexes: number[] = [];
      for (let k = 0; k < commentSlots(item); k++) {
        if (state0.includeDeleted || !commentDeleted(world, item, k)) indexes.push(k);
      }
      if (state0.order === 'desc') indexes.reverse();
      const page = indexes.slice(state0.offset, state0.offset + top);
      const comments = page.map((k) => commentJson(ctx, commentAt(world, item, k, base), rendered));
      const out: Record<string, unknown> = { totalCount: indexes.length, count: comments.length, comments };
      const nextOffset = state0.offset + page.length;
      if (nextOffset < indexes.length) {
        const next = encode({ ...state0, offset: nextOffset });
        out.continuationToken = next;
        const version = encodeURIComponent(req.adoApiVersion ?? '7.1-preview.4');
        out.nextPage = `${url}?continuationToken=${next}&$top=${top}&order=${state0.order}&api-version=${version}`;
      }
      out.url = url;
      return out;
    },
  );
}
