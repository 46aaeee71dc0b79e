/**
 * POST workItems/{id}/comments (7.1-preview.4) {text}: adds a comment by the PAT owner, dated now, version 1,
 * with the next comment id of the organisation. As on the service, the comment is also a new revision of the
 * item: System.CommentCount goes up, System.History holds the text, ChangedDate/ChangedBy move (a
 * workitem.updated event for a posted comment carries exactly those changes). The comments listing serves it
 * after the generated ones.
 */
import type { FastifyInstance } from 'fastify';
import { commentSlots } from '../../generator/comments.ts';
import { commentAt, currentRev, currentValue } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { commentJson } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { nextChangeDate, nextCommentId } from '../writes/store.ts';
import { baseUrl, findItem, parseId } from './params.ts';

export function registerCommentAdd(app: FastifyInstance, state: AdoState): void {
  app.post(
    '/:organization/:project/_apis/wit/workItems/:workItemId/comments',
    { config: { ado: { scope: 'project', preview: true } } },
    async (req) => {
      const world = state.world;
      const item = findItem(state, parseId((req.params as { workItemId: string }).workItemId));
      const text = (req.body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || text.trim() === '') {
        throw AdoErrors.badRequest('The comment text must not be empty.');
      }
      const when = nextChangeDate(Number(currentValue(item, 'System.ChangedDate')));
      const count = Number(currentValue(item, 'System.CommentCount')) + 1;
      item.addedComments = [
        ...(item.addedComments ?? []),
        { id: nextCommentId(world), text, createdBy: state.me, createdDate: when },
      ];
      item.updates = [
        ...(item.updates ?? []),
        {
          rev: currentRev(item) + 1,
          changedDate: when,
          changedBy: state.me,
          fields: { 'System.CommentCount': count, 'System.History': text },
        },
      ];
      const base = baseUrl(req);
      return commentJson(
        { world, baseUrl: base },
        commentAt(world, item, commentSlots(item) - 1, base),
        false,
      );
    },
  );
}
