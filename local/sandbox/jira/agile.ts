/**
 * Jira Software's agile API: the project's Scrum board, sprints (future -> active -> closed, managed by project
 * administrators as the default permission scheme grants Manage sprints to them), moving issues into a sprint
 * (open or active ones only, at most 50 at once) and under an epic.
 *
 * Control endpoint: GET|PUT /_sandbox/jira/agile {parallelSprints} (off by default, as on a Jira site, where
 * an administrator turns it on under Features).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentAccount, requireProjectAdmin } from './auth.ts';
import { recordChanges, trackedFields } from './changelog.ts';
import { sendError } from './errors.ts';
import { moveToSprint } from './fields.ts';
import { Render, selectFields } from './render.ts';
import type { IssueRec, JiraStore, SprintRec } from './store.ts';

type Json = Record<string, unknown>;

const MAX_ISSUES_PER_MOVE = 50;
const STATE_ORDER: Record<SprintRec['state'], number> = { closed: 0, active: 1, future: 2 };
const MANAGE_SPRINTS =
  'You do not have permission to manage sprints on this board (Manage sprints permission).';
const BOARD_NOT_FOUND = 'Board does not exist or you do not have permission to see it.';
// Jira Cloud's words when a second sprint would start on a board without parallel sprints (Atlassian KB
// "Cannot start sprint with error 'There can only be one active sprint' in Jira Cloud").
const ONE_ACTIVE_SPRINT = 'There can only be one active sprint on each board.';
// What Jira answers when issues are moved into a completed sprint through this API.
const SPRINT_COMPLETED = 'You must specify a sprint which has not been completed.';
const AgileSettings = z.strictObject({ parallelSprints: z.boolean() });

function agileDate(value: unknown): string | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function page<T>(items: T[], startAt: number, maxResults: number) {
  const values = items.slice(startAt, startAt + maxResults);
  return {
    maxResults,
    startAt,
    total: items.length,
    isLast: startAt + values.length >= items.length,
    values,
  };
}

const pageParams = (q: { startAt?: string; maxResults?: string }) => ({
  startAt: Math.max(0, Number(q.startAt ?? 0) || 0),
  maxResults: Math.min(Math.max(1, Number(q.maxResults ?? 50) || 50), 50),
});

/** Resolves the issue keys or ids of a move request; answers 400 and returns undefined when one is unusable. */
function issuesOf(store: JiraStore, reply: FastifyReply, body: unknown): IssueRec[] | undefined {
  const refs = (body as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(refs) || refs.length === 0) {
    sendError(reply, 400, ["'issues' must be a non-empty array of issue keys or ids."]);
    return undefined;
  }
  if (refs.length > MAX_ISSUES_PER_MOVE) {
    sendError(reply, 400, [`At most ${MAX_ISSUES_PER_MOVE} issues can be moved in one operation.`]);
    return undefined;
  }
  const issues: IssueRec[] = [];
  for (const ref of refs) {
    const issue =
      typeof ref === 'string' || typeof ref === 'number' ? store.issueByIdOrKey(String(ref)) : undefined;
    if (!issue) {
      sendError(reply, 400, [`Issue does not exist or you do not have permission to see it: ${String(ref)}`]);
      return undefined;
    }
    issues.push(issue);
  }
  return issues;
}

export function registerAgileRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get('/_sandbox/jira/agile', async () => store.agile);
  app.put('/_sandbox/jira/agile', async (req, reply) => {
    const parsed = AgileSettings.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply
        .code(400)
        .send({ message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    store.agile = parsed.data;
    return store.agile;
  });

  const board = (render: Render, id: number) => {
    const b = store.boards.get(id);
    if (!b) return undefined;
    const p = store.projectById(b.projectId);
    return {
      id: b.id,
      self: `${render.base}/rest/agile/1.0/board/${b.id}`,
      name: b.name,
      type: b.type,
      location: {
        projectId: Number(p.id),
        displayName: `${p.name} (${p.key})`,
        projectName: p.name,
        projectKey: p.key,
        projectTypeKey: 'software',
        avatarURI: `${render.base}/secure/projectavatar?size=small&pid=${p.id}`,
        name: `${p.name} (${p.key})`,
      },
      isPrivate: false,
    };
  };

  app.get<{
    Querystring: {
      projectKeyOrId?: string;
      type?: string;
      name?: string;
      startAt?: string;
      maxResults?: string;
    };
  }>('/rest/agile/1.0/board', async (req) => {
    const render = Render.of(store, req);
    const { projectKeyOrId, type, name } = req.query;
    const project = projectKeyOrId === undefined ? undefined : store.projectOf(projectKeyOrId);
    const boards = [...store.boards.values()].filter(
      (b) =>
        (projectKeyOrId === undefined || b.projectId === project?.id) &&
        (type === undefined || type.split(',').includes(b.type)) &&
        (name === undefined || b.name.toLowerCase().includes(name.toLowerCase())),
    );
    const { startAt, maxResults } = pageParams(req.query);
    return page(
      boards.flatMap((b) => board(render, b.id) ?? []),
      startAt,
      maxResults,
    );
  });

  app.get<{ Params: { boardId: string } }>('/rest/agile/1.0/board/:boardId', async (req, reply) => {
    const b = board(Render.of(store, req), Number(req.params.boardId));
    if (!b) return sendError(reply, 404, [BOARD_NOT_FOUND]);
    return b;
  });

  app.get<{
    Params: { boardId: string };
    Querystring: { state?: string; startAt?: string; maxResults?: string };
  }>('/rest/agile/1.0/board/:boardId/sprint', async (req, reply) => {
    const boardId = Number(req.params.boardId);
    if (!store.boards.has(boardId)) {
      return sendError(reply, 404, [BOARD_NOT_FOUND]);
    }
    const states = req.query.state?.split(',').map((s) => s.trim());
    const render = Render.of(store, req);
    const sprints = [...store.sprints.values()]
      .filter((s) => s.originBoardId === boardId && (!states || states.includes(s.state)))
      .sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || a.id - b.id)
      .map((s) => render.sprint(s));
    const { startAt, maxResults } = pageParams(req.query);
    return page(sprints, startAt, maxResults);
  });

  app.post('/rest/agile/1.0/sprint', async (req, reply) => {
    if (!requireProjectAdmin(req, reply, MANAGE_SPRINTS)) return reply;
    const body = (req.body ?? {}) as Json;
    const errors: Record<string, string> = {};
    const name = typeof body.name === 'string' ? body.name.trim() : '';
    if (!name) errors.name = 'The sprint name is required.';
    else if (name.length > 255) errors.name = 'The sprint name must not exceed 255 characters.';
    const startDate = agileDate(body.startDate);
    const endDate = agileDate(body.endDate);
    if (startDate === null) errors.startDate = 'The start date is not a valid date.';
    if (endDate === null) errors.endDate = 'The end date is not a valid date.';
    if (startDate && endDate && endDate < startDate)
      errors.endDate = 'The end date must be after the start date.';
    const boardId = typeof body.originBoardId === 'number' ? body.originBoardId : Number.NaN;
    if (body.originBoardId === undefined) errors.originBoardId = 'The origin board is required.';
    if (Object.keys(errors).length > 0) return sendError(reply, 400, [], errors);
    // The spec's answer for an unknown board (or one the caller cannot see) is 404.
    if (!store.boards.has(boardId)) return sendError(reply, 404, [BOARD_NOT_FOUND]);
    const sprint: SprintRec = {
      id: store.nextId('sprint', 1),
      name,
      state: 'future',
      createdDate: new Date(store.now()).toISOString(),
      originBoardId: boardId,
      ...(startDate ? { startDate } : {}),
      ...(endDate ? { endDate } : {}),
      ...(typeof body.goal === 'string' ? { goal: body.goal } : {}),
    };
    store.sprints.set(sprint.id, sprint);
    return reply.code(201).send(Render.of(store, req).sprint(sprint));
  });

  app.get<{ Params: { sprintId: string } }>('/rest/agile/1.0/sprint/:sprintId', async (req, reply) => {
    const sprint = store.sprints.get(Number(req.params.sprintId));
    if (!sprint) return sendError(reply, 404, [`Sprint with id ${req.params.sprintId} does not exist.`]);
    return Render.of(store, req).sprint(sprint);
  });

  /**
   * POST is a partial update; PUT a full one ("any fields not present in the request JSON will be set to
   * null", Jira Software Cloud REST, "Update sprint"): name and state required, an absent goal cleared, absent
   * dates cleared on a sprint not yet started. `state` moves future -> active (dates needed, one active sprint
   * per board) -> closed.
   */
  const updateSprint =
    (full: boolean) => async (req: FastifyRequest<{ Params: { sprintId: string } }>, reply: FastifyReply) => {
      const sprint = store.sprints.get(Number(req.params.sprintId));
      if (!sprint) return sendError(reply, 404, [`Sprint with id ${req.params.sprintId} does not exist.`]);
      if (!requireProjectAdmin(req, reply, MANAGE_SPRINTS)) return reply;
      if (sprint.state === 'closed') return sendError(reply, 400, ['A closed sprint cannot be updated.']);
      const body = { ...((req.body ?? {}) as Json) };
      if (full) {
        if (body.name === undefined)
          return sendError(reply, 400, [], { name: 'The sprint name is required.' });
        if (body.state === undefined)
          return sendError(reply, 400, [], { state: 'The sprint state is required.' });
        body.goal ??= '';
        if (sprint.state === 'future' && body.state === 'future') {
          body.startDate ??= null;
          body.endDate ??= null;
        }
      }
      if (body.completeDate !== undefined) {
        return sendError(reply, 400, [], { completeDate: 'The complete date cannot be set manually.' });
      }
      // A full update's null clears a date (`cleared`); any other unreadable value is refused.
      const cleared = (v: unknown) => full && v === null;
      const dateOf = (value: unknown, current: string | undefined) =>
        value === undefined ? current : cleared(value) ? undefined : agileDate(value);
      const startDate = dateOf(body.startDate, sprint.startDate);
      const endDate = dateOf(body.endDate, sprint.endDate);
      if (startDate === null)
        return sendError(reply, 400, [], { startDate: 'The start date is not a valid date.' });
      if (endDate === null)
        return sendError(reply, 400, [], { endDate: 'The end date is not a valid date.' });
      if (body.name !== undefined && (typeof body.name !== 'string' || body.name.trim() === '')) {
        return sendError(reply, 400, [], { name: 'The sprint name is required.' });
      }
      const state = body.state;
      if (state !== undefined && state !== sprint.state) {
        if (sprint.state === 'future' && state === 'active') {
          if (!startDate || !endDate) {
            return sendError(reply, 400, ['A sprint can only be started with a start date and an end date.']);
          }
          const active = [...store.sprints.values()].some(
            (s) => s.originBoardId === sprint.originBoardId && s.state === 'active',
          );
          if (active && !store.agile.parallelSprints) return sendError(reply, 400, [ONE_ACTIVE_SPRINT]);
        } else if (!(sprint.state === 'active' && state === 'closed')) {
          return sendError(reply, 400, [
            `A sprint in state '${sprint.state}' cannot be moved to '${String(state)}'.`,
          ]);
        }
        sprint.state = state;
        if (state === 'closed') sprint.completeDate = new Date(store.now()).toISOString();
      }
      if (typeof body.name === 'string') sprint.name = body.name.trim();
      if (typeof body.goal === 'string') sprint.goal = body.goal;
      if (startDate) sprint.startDate = startDate;
      else if (cleared(body.startDate)) delete sprint.startDate;
      if (endDate) sprint.endDate = endDate;
      else if (cleared(body.endDate)) delete sprint.endDate;
      // The sprint's state shows in its issues' Sprint field and in JQL.
      for (const issue of store.issues.values()) if (issue.sprintIds.includes(sprint.id)) store.touch(issue);
      return Render.of(store, req).sprint(sprint);
    };
  app.post('/rest/agile/1.0/sprint/:sprintId', updateSprint(false));
  app.put('/rest/agile/1.0/sprint/:sprintId', updateSprint(true));

  /** The sprint's issues, in key order (the service's rank order is not modelled), a page at a time. */
  app.get<{
    Params: { sprintId: string };
    Querystring: { startAt?: string; maxResults?: string; fields?: string };
  }>('/rest/agile/1.0/sprint/:sprintId/issue', async (req, reply) => {
    const sprint = store.sprints.get(Number(req.params.sprintId));
    if (!sprint) return sendError(reply, 404, [`Sprint with id ${req.params.sprintId} does not exist.`]);
    const { startAt, maxResults } = pageParams(req.query);
    const inSprint = [...store.issues.values()]
      .filter((i) => i.sprintIds.includes(sprint.id))
      .sort((a, b) => a.id - b.id);
    const render = Render.of(store, req);
    const selection = selectFields(req.query.fields, 'all');
    return {
      expand: 'schema,names',
      startAt,
      maxResults,
      total: inSprint.length,
      issues: inSprint.slice(startAt, startAt + maxResults).map((i) => render.issue(i, selection)),
    };
  });

  /** "Once a sprint is deleted, all open issues in the sprint will be moved to the backlog" (the spec). */
  app.delete<{ Params: { sprintId: string } }>('/rest/agile/1.0/sprint/:sprintId', async (req, reply) => {
    const sprint = store.sprints.get(Number(req.params.sprintId));
    if (!sprint) return sendError(reply, 404, [`Sprint with id ${req.params.sprintId} does not exist.`]);
    if (!requireProjectAdmin(req, reply, MANAGE_SPRINTS)) return reply;
    for (const issue of store.issues.values())
      if (issue.sprintIds.includes(sprint.id)) {
        issue.sprintIds = issue.sprintIds.filter((id) => id !== sprint.id);
        store.touch(issue);
      }
    store.sprints.delete(sprint.id);
    return reply.code(204).send();
  });

  app.post<{ Params: { sprintId: string } }>('/rest/agile/1.0/sprint/:sprintId/issue', async (req, reply) => {
    const sprint = store.sprints.get(Number(req.params.sprintId));
    if (!sprint) return sendError(reply, 404, [`Sprint with id ${req.params.sprintId} does not exist.`]);
    if (sprint.state === 'closed') return sendError(reply, 400, [SPRINT_COMPLETED]);
    const issues = issuesOf(store, reply, req.body);
    if (!issues) return reply;
    const subtask = issues.find((i) => store.issueTypeOf(i).hierarchyLevel === -1);
    if (subtask) {
      return sendError(reply, 400, [`${subtask.key} is a sub-task; sub-tasks move with their parent.`]);
    }
    const author = currentAccount(req).accountId;
    for (const issue of issues) {
      const before = trackedFields(store, issue);
      moveToSprint(store, issue, sprint.id);
      recordChanges(store, issue, before, author);
      store.touch(issue);
    }
    return reply.code(204).send();
  });

  // A move under an epic (or out of one) is a parent change: in the issue's changelog, by the account that made it.
  const moveToEpic = (issues: IssueRec[], epic: IssueRec | null, author: string, reply: FastifyReply) => {
    const wrong = issues.find((i) => store.issueTypeOf(i).hierarchyLevel !== 0);
    if (wrong) {
      return sendError(reply, 400, [
        `${wrong.key} cannot be moved to an epic: only standard issues belong to epics.`,
      ]);
    }
    for (const issue of issues) {
      const before = trackedFields(store, issue);
      store.setParent(issue, epic?.id ?? null);
      recordChanges(store, issue, before, author);
      store.touch(issue);
    }
    return reply.code(204).send();
  };

  app.post('/rest/agile/1.0/epic/none/issue', async (req, reply) => {
    const issues = issuesOf(store, reply, req.body);
    if (!issues) return reply;
    return moveToEpic(issues, null, currentAccount(req).accountId, reply);
  });

  app.post<{ Params: { epicIdOrKey: string } }>(
    '/rest/agile/1.0/epic/:epicIdOrKey/issue',
    async (req, reply) => {
      const epic = store.issueByIdOrKey(req.params.epicIdOrKey);
      if (!epic)
        return sendError(reply, 404, ['Issue does not exist or you do not have permission to see it.']);
      if (store.issueTypeOf(epic).hierarchyLevel !== 1) {
        return sendError(reply, 400, [`Issue ${epic.key} is not an epic.`]);
      }
      const issues = issuesOf(store, reply, req.body);
      if (!issues) return reply;
      return moveToEpic(issues, epic, currentAccount(req).accountId, reply);
    },
  );
}
