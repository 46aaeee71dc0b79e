/**
 * Workflows and transitions. Each issue type has a workflow (configurable through PUT /_sandbox/jira/workflow);
 * an issue moves only along the transitions available from its current status, so reaching Done from To Do
 * takes several hops with the default workflow. Entering a done-category status sets the resolution (Done, or
 * Won't Do for that status, or the one the request names); leaving it clears the resolution.
 */
import type { FastifyInstance } from 'fastify';
import { adfProblems, isEmptyAdf } from './adf.ts';
import { currentAccount } from './auth.ts';
import { RESOLUTIONS, type TransitionDef } from './catalog.ts';
import { recordChanges, trackedFields } from './changelog.ts';
import { errorBody, JiraHttpError, notFoundIssue, sendError } from './errors.ts';
import { Render } from './render.ts';
import type { IssueRec, JiraStore } from './store.ts';

type Json = Record<string, unknown>;

export function availableTransitions(store: JiraStore, issue: IssueRec): TransitionDef[] {
  const wf = store.workflowOf(issue);
  return wf.transitions.filter((t) =>
    t.from === 'any' ? t.to !== issue.statusId : t.from.includes(issue.statusId),
  );
}

/** Moves an issue along one transition; throws Jira's 400 when it is not available from the current status. */
export function applyTransition(
  store: JiraStore,
  issue: IssueRec,
  transitionId: string,
  fields: Json | undefined,
): void {
  const transition = availableTransitions(store, issue).find((t) => t.id === transitionId);
  if (!transition) {
    throw new JiraHttpError(400, errorBody([`Transition id '${transitionId}' is not valid for this issue.`]));
  }
  const target = store.statuses.get(transition.to);
  if (!target)
    throw new JiraHttpError(400, errorBody([`Transition id '${transitionId}' is not valid for this issue.`]));
  let resolutionId: string | null = null;
  if (target.category === 'done') {
    const wanted = fields?.resolution as { id?: unknown; name?: unknown } | undefined;
    if (wanted !== undefined) {
      const r = RESOLUTIONS.find((x) => x.id === String(wanted?.id) || x.name === wanted?.name);
      if (!r)
        throw new JiraHttpError(400, errorBody([], { resolution: 'The resolution selected is invalid.' }));
      resolutionId = r.id;
    } else {
      resolutionId = (RESOLUTIONS.find((r) => r.name === target.name) ?? RESOLUTIONS[0])?.id ?? null;
    }
  } else if (fields?.resolution !== undefined && fields.resolution !== null) {
    throw new JiraHttpError(
      400,
      errorBody([], {
        resolution: "Field 'resolution' cannot be set. It is not on the appropriate screen, or unknown.",
      }),
    );
  }
  const before = store.statusOf(issue).category;
  const now = store.now();
  issue.statusId = target.id;
  if (before !== target.category) issue.statusCategoryChanged = now;
  issue.resolutionId = resolutionId;
  issue.resolutionDate = resolutionId === null ? null : now;
}

export function registerWorkflowRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get<{ Params: { issueIdOrKey: string }; Querystring: { transitionId?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/transitions',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const render = Render.of(store, req);
      const wf = store.workflowOf(issue);
      const transitions = availableTransitions(store, issue)
        .filter((t) => req.query.transitionId === undefined || t.id === req.query.transitionId)
        .flatMap((t) => {
          const to = store.statuses.get(t.to);
          if (!to) return [];
          return [
            {
              id: t.id,
              name: t.name,
              to: render.status(to),
              hasScreen: false,
              isGlobal: t.from === 'any',
              isInitial: t.to === wf.initial && t.from === 'any',
              isAvailable: true,
              isConditional: false,
              isLooped: false,
            },
          ];
        });
      return { expand: 'transitions', transitions };
    },
  );

  app.post<{ Params: { issueIdOrKey: string }; Body: unknown }>(
    '/rest/api/3/issue/:issueIdOrKey/transitions',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const body = (req.body ?? {}) as Json;
      const transition = body.transition as { id?: unknown } | undefined;
      const id = transition?.id;
      if (typeof id !== 'string' && typeof id !== 'number') {
        return sendError(reply, 400, ['Missing transition id in the request.']);
      }
      const comments = commentsToAdd(body.update);
      const before = trackedFields(store, issue);
      applyTransition(store, issue, String(id), body.fields as Json | undefined);
      const author = currentAccount(req).accountId;
      recordChanges(store, issue, before, author);
      for (const comment of comments) {
        const now = store.now();
        issue.comments.push({
          id: String(store.nextId('comment')),
          authorId: author,
          body: comment,
          created: now,
          updated: now,
        });
      }
      store.touch(issue);
      return reply.code(204).send();
    },
  );
}

/** `update.comment: [{add: {body}}]` on a transition adds comments; their bodies must be ADF. */
function commentsToAdd(update: unknown): unknown[] {
  const ops = (update as { comment?: unknown } | undefined)?.comment;
  if (ops === undefined) return [];
  if (!Array.isArray(ops))
    throw new JiraHttpError(400, errorBody([], { comment: 'Comment body is not valid!' }));
  return ops.map((op) => {
    const body = (op as { add?: { body?: unknown } })?.add?.body;
    if (adfProblems(body).length > 0 || isEmptyAdf(body)) {
      throw new JiraHttpError(400, errorBody([], { comment: 'Comment body is not valid!' }));
    }
    return body;
  });
}
