/**
 * Create metadata, as Jira Cloud serves it since the old `GET /rest/api/3/issue/createmeta` was deprecated
 * (developer.atlassian.com changelog CHANGE-1304): pages of the project's issue types, and pages of the fields
 * a create may set for one type.
 *   GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes                  PageOfCreateMetaIssueTypes
 *   GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes/{issueTypeId}    PageOfCreateMetaIssueTypeWithField
 * The fields are exactly those the sandbox's create accepts (fields.ts), required as it requires them:
 * summary, issue type and project always, the parent for a sub-task.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { FIELDS, type FieldDef, ISSUE_TYPES, type IssueTypeDef, SETTABLE_SYSTEM_FIELDS } from './catalog.ts';
import { sendError } from './errors.ts';
import { intParam } from './params.ts';
import { projectNotFound } from './project.ts';
import { Render } from './render.ts';
import type { JiraStore, ProjectInfo } from './store.ts';

type Json = Record<string, unknown>;

/** Jira's default page size for both routes (the spec's `maxResults` default). */
const PAGE = 50;

const OPERATIONS: Record<string, string[]> = {
  labels: ['add', 'set', 'remove'],
  components: ['add', 'set', 'remove'],
};

function page<T>(all: T[], query: { startAt?: string; maxResults?: string }, reply: FastifyReply) {
  const startAt = intParam(query.startAt, 0);
  const maxResults = Math.min(intParam(query.maxResults, PAGE), 200);
  if (Number.isNaN(startAt) || Number.isNaN(maxResults)) {
    sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
    return undefined;
  }
  return { items: all.slice(startAt, startAt + maxResults), startAt, maxResults, total: all.length };
}

function fieldMeta(
  render: Render,
  store: JiraStore,
  project: ProjectInfo,
  def: FieldDef,
  type: IssueTypeDef,
): Json {
  const required =
    def.id === 'summary' ||
    def.id === 'issuetype' ||
    def.id === 'project' ||
    (def.id === 'parent' && type.hierarchyLevel === -1);
  const out: Json = {
    required,
    schema: def.schema,
    name: def.name,
    key: def.id,
    fieldId: def.id,
    hasDefaultValue: def.id === 'priority',
    operations: OPERATIONS[def.id] ?? ['set'],
  };
  if (def.id === 'issuetype') out.allowedValues = [render.issueType(type)];
  if (def.id === 'project') out.allowedValues = [render.projectDetails(project)];
  if (def.id === 'priority') {
    out.allowedValues = store.priorities.map((p) => render.priority(p.id));
    out.defaultValue = render.priority(store.defaultPriorityId);
  }
  if (def.id === 'components')
    out.allowedValues = store.componentsOf(project.id).map((c) => render.component(c));
  if (def.id === 'assignee' || def.id === 'reporter')
    out.autoCompleteUrl = `${render.base}/rest/api/3/user/search?query=`;
  return out;
}

export function registerCreateMetaRoutes(app: FastifyInstance, store: JiraStore): void {
  type Query = { startAt?: string; maxResults?: string };

  app.get<{ Params: { projectIdOrKey: string }; Querystring: Query }>(
    '/rest/api/3/issue/createmeta/:projectIdOrKey/issuetypes',
    async (req, reply) => {
      if (!store.projectMatches(req.params.projectIdOrKey))
        return projectNotFound(reply, req.params.projectIdOrKey);
      const render = Render.of(store, req);
      const p = page(ISSUE_TYPES, req.query, reply);
      if (!p) return reply;
      return {
        issueTypes: p.items.map((t) => render.issueType(t)),
        maxResults: p.maxResults,
        startAt: p.startAt,
        total: p.total,
      };
    },
  );

  app.get<{ Params: { projectIdOrKey: string; issueTypeId: string }; Querystring: Query }>(
    '/rest/api/3/issue/createmeta/:projectIdOrKey/issuetypes/:issueTypeId',
    async (req, reply) => {
      const project = store.projectOf(req.params.projectIdOrKey);
      if (!project) return projectNotFound(reply, req.params.projectIdOrKey);
      const type = ISSUE_TYPES.find((t) => t.id === req.params.issueTypeId);
      if (!type) return sendError(reply, 404, ['The issue type ID is invalid or not found.']);
      const render = Render.of(store, req);
      const settable = FIELDS.filter(
        (f) =>
          (f.custom ? f.kind !== 'rank' : SETTABLE_SYSTEM_FIELDS.has(f.id)) &&
          (f.id !== 'parent' || type.hierarchyLevel < 1),
      );
      const p = page(settable, req.query, reply);
      if (!p) return reply;
      return {
        fields: p.items.map((f) => fieldMeta(render, store, project, f, type)),
        maxResults: p.maxResults,
        startAt: p.startAt,
        total: p.total,
      };
    },
  );
}
