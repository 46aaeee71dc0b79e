/**
 * Issues: create (one, or up to 50 in bulk with per-element errors), read with a `fields` selection, edit
 * (`update.comment` adds comments), delete (with its sub-tasks only when asked).
 */
import type { FastifyInstance } from 'fastify';
import { currentAccount, requireProjectAdmin } from './auth.ts';
import { expandedChangelog, recordChanges, trackedFields } from './changelog.ts';
import { addComment } from './comments.ts';
import { type ErrorCollection, errorBody, JiraHttpError, notFoundIssue, sendError } from './errors.ts';
import { applyChanges, FieldParser } from './fields.ts';
import { Render, selectFields } from './render.ts';
import type { IssueRec, JiraStore } from './store.ts';
import { applyTransition } from './workflow.ts';

type Json = Record<string, unknown>;

export const BULK_CREATE_MAX = 50;

/** Validates and creates one issue; throws a JiraHttpError with Jira's 400 body when the request is invalid. */
export function createIssue(store: JiraStore, body: unknown, accountId: string): IssueRec {
  const changes = new FieldParser(store, 'create').parse(body);
  const refused = changes.labels?.some((l) => store.createRefusals.labels.has(l));
  if (refused) throw new JiraHttpError(400, errorBody([store.createRefusals.message]));
  const type = changes.issueType;
  if (!type) throw new JiraHttpError(400, errorBody([], { issuetype: 'Specify an issue type' }));
  const transitionId = (body as { transition?: { id?: unknown } }).transition?.id;
  const wf = store.workflows.get(type.id);
  const now = store.now();
  const project = changes.project ?? store.project;
  const { id, key } = store.allocateIssueKey(project);
  const issue: IssueRec = {
    id,
    key,
    projectId: project.id,
    issueTypeId: type.id,
    summary: '',
    description: null,
    statusId: wf?.initial ?? '10000',
    resolutionId: null,
    resolutionDate: null,
    statusCategoryChanged: now,
    priorityId: store.defaultPriorityId,
    labels: [],
    assigneeId: null,
    reporterId: accountId,
    creatorId: accountId,
    created: now,
    updated: now,
    duedate: null,
    componentIds: [],
    parentId: null,
    sprintIds: [],
    custom: { customfield_10019: `0|i${id.toString(36).padStart(5, '0')}:` },
    timetracking: { spentSeconds: 0 },
    attachmentIds: [],
    comments: [],
    worklogs: [],
    remoteLinks: [],
    changelog: [],
    index: [],
  };
  applyChanges(store, issue, changes);
  // A transition on create moves the new issue on from the initial status; if it is not available the issue
  // is not created, as in Jira.
  if (transitionId !== undefined) applyTransition(store, issue, String(transitionId), undefined);
  store.addIssue(issue);
  return issue;
}

export function registerIssueRoutes(app: FastifyInstance, store: JiraStore): void {
  const created = (render: Render, issue: IssueRec) => ({
    id: String(issue.id),
    key: issue.key,
    self: `${render.base}/rest/api/3/issue/${issue.id}`,
  });

  app.post('/rest/api/3/issue', async (req, reply) => {
    const issue = createIssue(store, req.body, currentAccount(req).accountId);
    return reply.code(201).send(created(Render.of(store, req), issue));
  });

  app.post('/rest/api/3/issue/bulk', async (req, reply) => {
    const render = Render.of(store, req);
    const updates = (req.body as { issueUpdates?: unknown } | null)?.issueUpdates;
    if (!Array.isArray(updates)) {
      return reply.code(400).send({
        issues: [],
        errors: [{ status: 400, elementErrors: errorBody(["'issueUpdates' must be an array."]) }],
      });
    }
    // The 400 body is a CreatedIssues in the spec, so a refused batch is reported as a request-level element error.
    if (updates.length > BULK_CREATE_MAX) {
      return reply.code(400).send({
        issues: [],
        errors: [
          {
            status: 400,
            elementErrors: errorBody([
              `The bulk create request has ${updates.length} issues; at most ${BULK_CREATE_MAX} can be created at once.`,
            ]),
          },
        ],
      });
    }
    const issues: Json[] = [];
    const errors: { status: number; elementErrors: ErrorCollection; failedElementNumber: number }[] = [];
    const accountId = currentAccount(req).accountId;
    updates.forEach((update, index) => {
      try {
        issues.push(created(render, createIssue(store, update, accountId)));
      } catch (err) {
        if (!(err instanceof JiraHttpError)) throw err;
        errors.push({ status: err.status, elementErrors: err.body, failedElementNumber: index });
      }
    });
    return reply.code(issues.length === 0 && updates.length > 0 ? 400 : 201).send({ issues, errors });
  });

  app.get<{
    Params: { issueIdOrKey: string };
    Querystring: { fields?: string | string[]; expand?: string | string[] };
  }>('/rest/api/3/issue/:issueIdOrKey', async (req, reply) => {
    const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
    if (!issue) return notFoundIssue(reply);
    const selection = selectFields(req.query.fields, 'all');
    const render = Render.of(store, req);
    // GET issue always answers the full bean, even for `fields=id`.
    const bean = render.issue(issue, selection === 'id-only' ? [] : selection);
    // Of the expansions only `changelog` is served (changelog.ts); the others are left out.
    const expand = [req.query.expand ?? []].flat().flatMap((e) => e.split(',').map((x) => x.trim()));
    return expand.includes('changelog') ? { ...bean, changelog: expandedChangelog(render, issue) } : bean;
  });

  app.put<{ Params: { issueIdOrKey: string }; Querystring: { returnIssue?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const changes = new FieldParser(store, 'edit', issue).parse(req.body ?? {});
      const before = trackedFields(store, issue);
      applyChanges(store, issue, changes);
      recordChanges(store, issue, before, currentAccount(req).accountId);
      for (const c of changes.comments ?? []) addComment(store, issue, c, currentAccount(req).accountId);
      store.touch(issue);
      if (req.query.returnIssue === 'true') {
        return reply.code(200).send(Render.of(store, req).issue(issue, selectFields(undefined, 'all')));
      }
      return reply.code(204).send();
    },
  );

  // Sub-tasks go only with `deleteSubtasks=true` (Jira's 400 otherwise, wording from Atlassian's own REST
  // tests); other children stay, without their parent. Delete issues is a permission schemes often keep to
  // administrators: the sandbox does, so a refusal (403, Jira's wording) can be tested.
  app.delete<{ Params: { issueIdOrKey: string }; Querystring: { deleteSubtasks?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      if (!requireProjectAdmin(req, reply, 'You do not have permission to delete issues in this project.'))
        return reply;
      const children = store.childrenOf(issue.id);
      const subtasks = children.filter((c) => store.issueTypeOf(c).hierarchyLevel === -1);
      if (subtasks.length > 0 && req.query.deleteSubtasks !== 'true') {
        return sendError(reply, 400, [
          `The issue '${issue.key}' has subtasks.  You must specify the 'deleteSubtasks' parameter to delete this issue and all its subtasks.`,
        ]);
      }
      const changed = new Map<number, IssueRec>();
      for (const child of children) {
        if (subtasks.includes(child)) continue;
        store.setParent(child, null);
        changed.set(child.id, child);
      }
      for (const gone of [...subtasks, issue]) {
        changed.delete(gone.id);
        for (const other of store.removeIssue(gone)) changed.set(other.id, other);
      }
      for (const other of changed.values()) if (store.issues.has(other.id)) store.touch(other);
      return reply.code(204).send();
    },
  );
}
