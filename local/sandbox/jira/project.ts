/**
 * The site and project metadata a migrator reads before writing: who am I and what may I do, the project
 * with its issue types, statuses per issue type, fields, priorities, resolutions, users (search by e-mail,
 * assignable in the project), project roles (administrators only) and components (created by administrators only).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { currentAccount, requireProjectAdmin } from './auth.ts';
import { FIELDS, ISSUE_TYPES, PROJECT_PERMISSIONS, RESOLUTIONS } from './catalog.ts';
import { sendError } from './errors.ts';
import { intParam } from './params.ts';
import { Render } from './render.ts';
import type { ComponentRec, JiraStore } from './store.ts';

type Json = Record<string, unknown>;

const ROLES = [
  { id: '10002', name: 'Administrators' },
  { id: '10003', name: 'Member' },
  { id: '10004', name: 'Viewer' },
];

export function projectNotFound(reply: FastifyReply, idOrKey: string) {
  const what = /^\d+$/.test(idOrKey) ? 'id' : 'key';
  return sendError(reply, 404, [`No project could be found with ${what} '${idOrKey}'.`]);
}

export function registerProjectRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get('/rest/api/3/myself', async (req) => {
    const user = store.users.get(currentAccount(req).accountId);
    return user ? Render.of(store, req).user(user) : {};
  });

  app.get<{ Querystring: { accountId?: string } }>('/rest/api/3/user', async (req, reply) => {
    const user = req.query.accountId ? store.users.get(req.query.accountId) : undefined;
    if (!user)
      return sendError(reply, 404, [
        `The user with account ID '${req.query.accountId ?? ''}' does not exist.`,
      ]);
    return Render.of(store, req).user(user);
  });

  // Jira matches the query against the start of the display name's words and of the e-mail address.
  app.get<{ Querystring: { query?: string; accountId?: string; startAt?: string; maxResults?: string } }>(
    '/rest/api/3/user/search',
    async (req, reply) => {
      const { query, accountId } = req.query;
      if (query !== undefined && accountId !== undefined) {
        return sendError(reply, 400, ["The 'query' and 'accountId' parameters cannot be used together."]);
      }
      if (!query && !accountId)
        return sendError(reply, 400, ["The 'query' or 'accountId' parameter is required."]);
      const q = (query ?? '').toLowerCase();
      const startAt = Number(req.query.startAt ?? 0) || 0;
      const maxResults = Math.min(Number(req.query.maxResults ?? 50) || 50, 1000);
      const matches = [...store.users.values()].filter((u) =>
        accountId !== undefined
          ? u.accountId === accountId
          : u.email.toLowerCase().startsWith(q) ||
            u.displayName
              .toLowerCase()
              .split(/\s+/)
              .some((w) => w.startsWith(q)) ||
            u.displayName.toLowerCase().startsWith(q),
      );
      const render = Render.of(store, req);
      return matches.slice(startAt, startAt + maxResults).map((u) => render.user(u));
    },
  );

  // The users who can be assigned a new issue of the project: in the sandbox (one project, no permission
  // schemes) every active account. Jira filters a window of at most 1,000 users (startAt + maxResults), then
  // matches `query` on the start of the display name's words and of the e-mail, as the user search does.
  app.get<{ Querystring: { project?: string; query?: string; startAt?: string; maxResults?: string } }>(
    '/rest/api/3/user/assignable/search',
    async (req, reply) => {
      const { project, query } = req.query;
      if (!project)
        return sendError(reply, 400, ["The 'project', 'issueKey' or 'issueId' parameter is required."]);
      if (!store.projectMatches(project)) return projectNotFound(reply, project);
      const startAt = intParam(req.query.startAt, 0);
      const maxResults = intParam(req.query.maxResults, 50);
      if (Number.isNaN(startAt) || Number.isNaN(maxResults))
        return sendError(reply, 400, ["'startAt' and 'maxResults' must be non-negative integers."]);
      const window = [...store.users.values()].slice(startAt, Math.min(startAt + maxResults, 1000));
      const q = (query ?? '').toLowerCase();
      const render = Render.of(store, req);
      return window
        .filter((u) => u.active)
        .filter(
          (u) =>
            !q ||
            u.email.toLowerCase().startsWith(q) ||
            u.displayName
              .toLowerCase()
              .split(/\s+/)
              .some((w) => w.startsWith(q)),
        )
        .map((u) => render.user(u));
    },
  );

  app.get<{ Params: { projectIdOrKey: string } }>(
    '/rest/api/3/project/:projectIdOrKey',
    async (req, reply) => {
      const p = store.projectOf(req.params.projectIdOrKey);
      if (!p) return projectNotFound(reply, req.params.projectIdOrKey);
      const render = Render.of(store, req);
      const lead = store.users.get(p.leadAccountId);
      return {
        expand: 'description,lead,issueTypes,url,projectKeys,permissions,insight',
        self: `${render.base}/rest/api/3/project/${p.id}`,
        id: p.id,
        key: p.key,
        description: 'Target project of the Azure DevOps migration.',
        ...(lead ? { lead: render.user(lead) } : {}),
        components: store.componentsOf(p.id).map((c) => render.component(c)),
        issueTypes: ISSUE_TYPES.map((t) => render.issueType(t)),
        assigneeType: 'UNASSIGNED',
        versions: [],
        name: p.name,
        roles: Object.fromEntries(
          ROLES.map((r) => [r.name, `${render.base}/rest/api/3/project/${p.id}/role/${r.id}`]),
        ),
        avatarUrls: render.avatarUrls('project', p.id),
        projectTypeKey: 'software',
        simplified: false,
        style: 'classic',
        isPrivate: false,
        properties: {},
      };
    },
  );

  // The site's projects, a page at a time (PageBeanProject), ordered by key; `keys` and `id` (repeatable) pick
  // projects, `query` matches a key or name case-insensitively. Every project is visible to every account here.
  app.get<{
    Querystring: {
      startAt?: string;
      maxResults?: string;
      keys?: string | string[];
      id?: string | string[];
      query?: string;
    };
  }>('/rest/api/3/project/search', async (req, reply) => {
    const startAt = intParam(req.query.startAt, 0);
    const maxResults = Math.min(intParam(req.query.maxResults, 50), 100);
    if (Number.isNaN(startAt) || Number.isNaN(maxResults))
      return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
    const list = (v: string | string[] | undefined) =>
      [v ?? []].flat().flatMap((x) => x.split(',').filter(Boolean));
    const keys = list(req.query.keys).map((k) => k.toUpperCase());
    const ids = list(req.query.id);
    const q = req.query.query?.toLowerCase();
    const matching = [...store.projects.values()]
      .filter(
        (p) =>
          (keys.length === 0 || keys.includes(p.key)) &&
          (ids.length === 0 || ids.includes(p.id)) &&
          (!q || p.key.toLowerCase().includes(q) || p.name.toLowerCase().includes(q)),
      )
      .sort((a, b) => a.key.localeCompare(b.key));
    const render = Render.of(store, req);
    const values = matching.slice(startAt, startAt + maxResults).map((p) => render.projectDetails(p));
    const isLast = startAt + values.length >= matching.length;
    const pageUrl = (from: number) =>
      `${render.base}/rest/api/3/project/search?startAt=${from}&maxResults=${maxResults}`;
    return {
      self: pageUrl(startAt),
      ...(isLast ? {} : { nextPage: pageUrl(startAt + values.length) }),
      maxResults,
      startAt,
      total: matching.length,
      isLast,
      values,
    };
  });

  app.get<{ Querystring: { projectId?: string } }>('/rest/api/3/issuetype/project', async (req, reply) => {
    const projectId = req.query.projectId;
    if (!projectId) return sendError(reply, 400, ["The 'projectId' parameter is required."]);
    if (!store.projects.has(projectId)) return projectNotFound(reply, projectId);
    const render = Render.of(store, req);
    return ISSUE_TYPES.map((t) => render.issueType(t));
  });

  app.get<{ Params: { projectIdOrKey: string } }>(
    '/rest/api/3/project/:projectIdOrKey/statuses',
    async (req, reply) => {
      if (!store.projectMatches(req.params.projectIdOrKey))
        return projectNotFound(reply, req.params.projectIdOrKey);
      const render = Render.of(store, req);
      return ISSUE_TYPES.map((t) => ({
        self: `${render.base}/rest/api/3/issuetype/${t.id}`,
        id: t.id,
        name: t.name,
        subtask: t.hierarchyLevel === -1,
        statuses: (store.workflows.get(t.id)?.statuses ?? []).flatMap((sid) => {
          const s = store.statuses.get(sid);
          return s ? [render.status(s)] : [];
        }),
      }));
    },
  );

  app.get('/rest/api/3/field', async () =>
    FIELDS.map((f) => ({
      id: f.id,
      key: f.id,
      name: f.name,
      custom: f.custom,
      orderable: f.orderable,
      navigable: f.navigable,
      searchable: f.searchable,
      clauseNames: f.clauseNames,
      schema: f.schema,
    })),
  );

  const priorityOf = (render: Render, id: string) => ({
    ...render.priority(id),
    isDefault: id === store.defaultPriorityId,
  });

  // Deprecated in favour of /priority/search, still served by Jira Cloud: every priority of the site.
  app.get('/rest/api/3/priority', async (req) => {
    const render = Render.of(store, req);
    return store.priorities.map((p) => priorityOf(render, p.id));
  });

  // A page of priorities, filtered by id, name and default. The sandbox has one project, whose scheme holds
  // every priority of the site: a `projectId` filter naming it (or naming none known) keeps them all, as
  // unknown project ids are ignored.
  app.get<{
    Querystring: {
      startAt?: string;
      maxResults?: string;
      id?: string | string[];
      projectId?: string | string[];
      priorityName?: string;
      onlyDefault?: string;
    };
  }>('/rest/api/3/priority/search', async (req, reply) => {
    const startAt = intParam(req.query.startAt, 0);
    const maxResults = Math.min(intParam(req.query.maxResults, 50), 50);
    if (Number.isNaN(startAt) || Number.isNaN(maxResults)) {
      return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
    }
    const list = (v: string | string[] | undefined) => (v === undefined ? [] : [v].flat());
    const ids = list(req.query.id);
    const name = req.query.priorityName?.toLowerCase();
    const matching = store.priorities.filter(
      (p) =>
        (ids.length === 0 || ids.includes(p.id)) &&
        (!name || p.name.toLowerCase().includes(name)) &&
        (req.query.onlyDefault !== 'true' || p.id === store.defaultPriorityId),
    );
    const render = Render.of(store, req);
    const values = matching.slice(startAt, startAt + maxResults).map((p) => priorityOf(render, p.id));
    const isLast = startAt + values.length >= matching.length;
    const self = `${render.base}/rest/api/3/priority/search?startAt=${startAt}&maxResults=${maxResults}`;
    return {
      self,
      ...(isLast
        ? {}
        : {
            nextPage: `${render.base}/rest/api/3/priority/search?startAt=${startAt + values.length}&maxResults=${maxResults}`,
          }),
      maxResults,
      startAt,
      total: matching.length,
      isLast,
      values,
    };
  });

  app.get('/rest/api/3/resolution', async (req) => {
    const render = Render.of(store, req);
    return RESOLUTIONS.map((r) => render.resolution(r.id));
  });

  // The paged successor of the deprecated list above. The spec's example flags the default resolution
  // (`isDefault`), which its own ResolutionJsonBean schema does not allow: the sandbox leaves the flag out.
  app.get<{ Querystring: { startAt?: string; maxResults?: string; id?: string | string[] } }>(
    '/rest/api/3/resolution/search',
    async (req, reply) => {
      const startAt = intParam(req.query.startAt, 0);
      const maxResults = intParam(req.query.maxResults, 50);
      if (Number.isNaN(startAt) || Number.isNaN(maxResults))
        return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
      const ids = [req.query.id ?? []]
        .flat()
        .flatMap((v) => v.split(','))
        .filter(Boolean);
      const render = Render.of(store, req);
      const matching = RESOLUTIONS.filter((r) => ids.length === 0 || ids.includes(r.id));
      const values = matching.slice(startAt, startAt + maxResults).map((r) => render.resolution(r.id));
      return {
        self: `${render.base}${req.url}`,
        maxResults,
        startAt,
        total: matching.length,
        isLast: startAt + values.length >= matching.length,
        values,
      };
    },
  );

  app.get('/rest/api/3/status', async (req) => {
    const render = Render.of(store, req);
    return [...store.statuses.values()].map((s) => render.status(s));
  });

  // Learning one's role without side effects: which of the named permissions the caller holds.
  app.get<{ Querystring: { projectKey?: string; projectId?: string; permissions?: string } }>(
    '/rest/api/3/mypermissions',
    async (req, reply) => {
      const project = req.query.projectId ?? req.query.projectKey;
      if (project !== undefined && !store.projectMatches(project)) return projectNotFound(reply, project);
      const keys = (req.query.permissions ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      if (keys.length === 0) return sendError(reply, 400, ["The 'permissions' parameter is required."]);
      const unknown = keys.filter((k) => !PROJECT_PERMISSIONS.some((p) => p.key === k));
      if (unknown.length > 0)
        return sendError(reply, 400, [`Invalid permission key(s): ${unknown.join(', ')}`]);
      const account = currentAccount(req);
      const admin = account.projectAdmin;
      const permissions: Record<string, Json> = {};
      for (const key of keys) {
        const p = PROJECT_PERMISSIONS.find((x) => x.key === key);
        if (!p) continue;
        permissions[key] = {
          id: String(PROJECT_PERMISSIONS.indexOf(p) + 1),
          key: p.key,
          name: p.name,
          type: p.type,
          description: `Permission to ${p.name.toLowerCase()}.`,
          // The service account administers the project, not the site; a site admin account (siteAdmin) both.
          havePermission: p.type === 'GLOBAL' ? account.siteAdmin : admin || !p.adminOnly,
        };
      }
      return { permissions };
    },
  );

  // Needs Administer Projects. The spec (401 "...or if the user lacks administrative permissions for the
  // project") and the service (401 "You cannot edit the configuration of this project.", pycontribs/jira#535)
  // answer a non-administrator with 401, not 403; the sandbox does the same.
  app.get<{ Params: { projectIdOrKey: string } }>(
    '/rest/api/3/project/:projectIdOrKey/role',
    async (req, reply) => {
      const p = store.projectOf(req.params.projectIdOrKey);
      if (!p) return projectNotFound(reply, req.params.projectIdOrKey);
      if (!currentAccount(req).projectAdmin) {
        return sendError(reply, 401, ['You cannot edit the configuration of this project.']);
      }
      const base = Render.of(store, req).base;
      return Object.fromEntries(
        ROLES.map((r) => [r.name, `${base}/rest/api/3/project/${p.id}/role/${r.id}`]),
      );
    },
  );

  app.get<{ Params: { projectIdOrKey: string } }>(
    '/rest/api/3/project/:projectIdOrKey/components',
    async (req, reply) => {
      const p = store.projectOf(req.params.projectIdOrKey);
      if (!p) return projectNotFound(reply, req.params.projectIdOrKey);
      const render = Render.of(store, req);
      return store.componentsOf(p.id).map((c) => render.component(c));
    },
  );

  app.get<{ Params: { id: string } }>('/rest/api/3/component/:id', async (req, reply) => {
    const c = store.components.get(req.params.id);
    if (!c) return sendError(reply, 404, [`The component with id ${req.params.id} does not exist.`]);
    return Render.of(store, req).component(c);
  });

  app.get<{ Params: { id: string } }>('/rest/api/3/component/:id/relatedIssueCounts', async (req, reply) => {
    const c = store.components.get(req.params.id);
    if (!c) return sendError(reply, 404, [`The component with id ${req.params.id} does not exist.`]);
    const issueCount = [...store.issues.values()].filter((i) => i.componentIds.includes(c.id)).length;
    return {
      self: `${Render.of(store, req).base}/rest/api/3/component/${c.id}/relatedIssueCounts`,
      issueCount,
    };
  });

  /** Its issues lose it, or move to `moveIssuesTo` (another component of the project). Administer Projects. */
  app.delete<{ Params: { id: string }; Querystring: { moveIssuesTo?: string } }>(
    '/rest/api/3/component/:id',
    async (req, reply) => {
      const c = store.components.get(req.params.id);
      if (!c) return sendError(reply, 404, [`The component with id ${req.params.id} does not exist.`]);
      if (!requireProjectAdmin(req, reply, 'You cannot edit the configuration of this project.'))
        return reply;
      const to = req.query.moveIssuesTo;
      const target = to === undefined ? undefined : store.components.get(to);
      if (to !== undefined && (!target || target.projectId !== c.projectId || target.id === c.id))
        return sendError(reply, 404, [`The component with id ${to} does not exist.`]);
      for (const issue of store.issues.values())
        if (issue.componentIds.includes(c.id)) {
          const rest = issue.componentIds.filter((id) => id !== c.id);
          issue.componentIds = target && !rest.includes(target.id) ? [...rest, target.id] : rest;
          store.touch(issue);
        }
      store.components.delete(c.id);
      return reply.code(204).send();
    },
  );

  app.post('/rest/api/3/component', async (req, reply) => {
    const body = (req.body ?? {}) as Json;
    const project =
      typeof body.project === 'string'
        ? body.project
        : body.projectId !== undefined
          ? String(body.projectId)
          : '';
    if (!project) return sendError(reply, 400, [], { project: 'The project is required.' });
    const p = store.projectOf(project);
    if (!p) return projectNotFound(reply, project);
    if (!requireProjectAdmin(req, reply, 'You cannot edit the configuration of this project.')) return reply;
    const errors: Record<string, string> = {};
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (!name) errors.name = 'The component name specified is invalid.';
    else if (name.length > 255) errors.name = 'The component name must not exceed 255 characters.';
    else if (store.componentsOf(p.id).some((c) => c.name.toLowerCase() === name.toLowerCase())) {
      errors.name = `A component with the name ${name} already exists in this project.`;
    }
    const lead = typeof body.leadAccountId === 'string' ? body.leadAccountId : undefined;
    if (lead !== undefined && !store.users.has(lead))
      errors.leadAccountId = `The user ${lead} does not exist.`;
    const assigneeType = body.assigneeType ?? 'PROJECT_DEFAULT';
    const types = ['PROJECT_DEFAULT', 'COMPONENT_LEAD', 'PROJECT_LEAD', 'UNASSIGNED'] as const;
    if (!types.includes(assigneeType as (typeof types)[number])) {
      errors.assigneeType = `The assignee type '${String(assigneeType)}' is not valid.`;
    }
    if (Object.keys(errors).length > 0) return sendError(reply, 400, [], errors);
    const component: ComponentRec = {
      id: String(store.nextId('component')),
      projectId: p.id,
      name,
      assigneeType: assigneeType as ComponentRec['assigneeType'],
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
      ...(lead !== undefined ? { leadAccountId: lead } : {}),
    };
    store.components.set(component.id, component);
    return reply.code(201).send(Render.of(store, req).component(component));
  });
}
