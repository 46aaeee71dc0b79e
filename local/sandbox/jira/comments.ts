/**
 * Issue comments: ADF bodies checked with Atlassian's validator and against the text limit a description has
 * (32,767 characters, measured as the document's JSON: see fields.ts); paged list ordered by creation; edit
 * (PUT); delete (DELETE, 204). An edit's `update.comment` adds one too (fields.ts reads it, the edit route writes it with
 * `addComment`).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { adfProblems, isEmptyAdf, TEXT_LIMIT, TEXT_TOO_LONG } from './adf.ts';
import { currentAccount } from './auth.ts';
import { notFoundIssue, sendError } from './errors.ts';
import { intParam } from './params.ts';
import { Render } from './render.ts';
import type { CommentRec, IssueRec, JiraStore } from './store.ts';

type Json = Record<string, unknown>;

/** Why Jira refuses this comment body (its message, under `errors.comment`), or undefined when it is valid. */
export function commentBodyProblem(body: unknown): string | undefined {
  if (body === undefined || body === null) return 'Comment body can not be empty!';
  if (adfProblems(body).length > 0) return 'Comment body is not valid!';
  if (isEmptyAdf(body)) return 'Comment body can not be empty!';
  if (JSON.stringify(body).length > TEXT_LIMIT) return TEXT_TOO_LONG;
  return undefined;
}

/** Adds a validated comment to the issue; the caller records the write (`store.touch`). */
export function addComment(
  store: JiraStore,
  issue: IssueRec,
  input: { body: unknown; visibility?: Json },
  authorId: string,
): CommentRec {
  const now = store.now();
  const comment: CommentRec = {
    id: String(store.nextId('comment')),
    authorId,
    body: input.body,
    created: now,
    updated: now,
    ...(input.visibility ? { visibility: input.visibility } : {}),
  };
  issue.comments.push(comment);
  return comment;
}

/** The issue and its comment the path names, or Jira's 404 for whichever is missing (already sent). */
function commentOf(
  store: JiraStore,
  params: { issueIdOrKey: string; id: string },
  reply: FastifyReply,
): { issue: IssueRec; comment: CommentRec } | FastifyReply {
  const issue = store.issueByIdOrKey(params.issueIdOrKey);
  if (!issue) return notFoundIssue(reply);
  const comment = issue.comments.find((c) => c.id === params.id);
  if (!comment) return sendError(reply, 404, [`Can not find a comment for the id: ${params.id}.`]);
  return { issue, comment };
}

export function registerCommentRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get<{
    Params: { issueIdOrKey: string };
    Querystring: { startAt?: string; maxResults?: string; orderBy?: string };
  }>('/rest/api/3/issue/:issueIdOrKey/comment', async (req, reply) => {
    const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
    if (!issue) return notFoundIssue(reply);
    const { orderBy } = req.query;
    if (orderBy !== undefined && !['created', '-created', '+created'].includes(orderBy)) {
      return sendError(reply, 400, [`Invalid orderBy value '${orderBy}'. Only 'created' is supported.`]);
    }
    const startAt = intParam(req.query.startAt, 0);
    const maxResults = Math.min(intParam(req.query.maxResults, 100), 5000);
    if (Number.isNaN(startAt) || Number.isNaN(maxResults)) {
      return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
    }
    const ordered = [...issue.comments].sort((a, b) => a.created - b.created || Number(a.id) - Number(b.id));
    if (orderBy === '-created') ordered.reverse();
    const render = Render.of(store, req);
    return {
      startAt,
      maxResults,
      total: ordered.length,
      comments: ordered.slice(startAt, startAt + maxResults).map((c) => render.comment(issue, c)),
    };
  });

  app.get<{ Params: { issueIdOrKey: string; id: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/comment/:id',
    async (req, reply) => {
      const found = commentOf(store, req.params, reply);
      if (!('issue' in found)) return found;
      return Render.of(store, req).comment(found.issue, found.comment);
    },
  );

  app.post<{ Params: { issueIdOrKey: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/comment',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const body = (req.body ?? {}) as Json;
      const problem = commentBodyProblem(body.body);
      if (problem) return sendError(reply, 400, [], { comment: problem });
      const visibility =
        body.visibility && typeof body.visibility === 'object' ? (body.visibility as Json) : undefined;
      const comment = addComment(
        store,
        issue,
        { body: body.body, ...(visibility ? { visibility } : {}) },
        currentAccount(req).accountId,
      );
      store.touch(issue);
      return reply.code(201).send(Render.of(store, req).comment(issue, comment));
    },
  );

  // Edits a comment's body (and visibility); the same checks as a new one. 200 with the comment.
  app.put<{ Params: { issueIdOrKey: string; id: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/comment/:id',
    async (req, reply) => {
      const found = commentOf(store, req.params, reply);
      if (!('issue' in found)) return found;
      const { issue, comment } = found;
      const body = (req.body ?? {}) as Json;
      const problem = commentBodyProblem(body.body);
      if (problem) return sendError(reply, 400, [], { comment: problem });
      comment.body = body.body;
      if (body.visibility && typeof body.visibility === 'object')
        comment.visibility = body.visibility as Json;
      comment.updated = store.now();
      store.touch(issue);
      return Render.of(store, req).comment(issue, comment);
    },
  );

  // Deletes a comment: 204, or 404 for an id the issue does not (or no longer) have.
  app.delete<{ Params: { issueIdOrKey: string; id: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/comment/:id',
    async (req, reply) => {
      const found = commentOf(store, req.params, reply);
      if (!('issue' in found)) return found;
      found.issue.comments.splice(found.issue.comments.indexOf(found.comment), 1);
      store.touch(found.issue);
      return reply.code(204).send();
    },
  );
}
