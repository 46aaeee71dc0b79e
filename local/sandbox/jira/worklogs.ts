/**
 * Worklogs: `started` in Jira's strict format, time as `timeSpentSeconds` or `timeSpent` ("2h 30m"), an ADF
 * comment; logging work adjusts the remaining estimate (`adjustEstimate`: auto, leave, new, manual), and so does
 * deleting a worklog (the official spec's words: `auto` reduces the estimate by the worklog's time, `manual`
 * increases it by `increaseBy`, `new` sets it, `leave` leaves it).
 */
import type { FastifyInstance } from 'fastify';
import { adfProblems } from './adf.ts';
import { currentAccount } from './auth.ts';
import { notFoundIssue, sendError } from './errors.ts';
import { intParam } from './params.ts';
import { Render } from './render.ts';
import type { JiraStore, WorklogRec } from './store.ts';
import { parseJiraDuration, parseJiraStarted } from './time.ts';

type Json = Record<string, unknown>;

export function registerWorklogRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get<{ Params: { issueIdOrKey: string }; Querystring: { startAt?: string; maxResults?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/worklog',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const startAt = intParam(req.query.startAt, 0);
      const maxResults = Math.min(intParam(req.query.maxResults, 5000), 5000);
      if (Number.isNaN(startAt) || Number.isNaN(maxResults)) {
        return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
      }
      const render = Render.of(store, req);
      return {
        startAt,
        maxResults,
        total: issue.worklogs.length,
        worklogs: issue.worklogs.slice(startAt, startAt + maxResults).map((w) => render.worklog(issue, w)),
      };
    },
  );

  app.post<{
    Params: { issueIdOrKey: string };
    Querystring: { adjustEstimate?: string; newEstimate?: string; reduceBy?: string };
  }>('/rest/api/3/issue/:issueIdOrKey/worklog', async (req, reply) => {
    const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
    if (!issue) return notFoundIssue(reply);
    const body = (req.body ?? {}) as Json;
    const errors: Record<string, string> = {};
    const started = parseJiraStarted(body.started);
    if (body.started === undefined) errors.started = 'You must specify a valid start date.';
    else if (started === undefined) {
      errors.started =
        "Invalid date format. Use 'yyyy-MM-dd'T'HH:mm:ss.SSSZ', e.g. 2024-05-01T10:00:00.000+0000.";
    }
    let seconds: number | undefined;
    if (body.timeSpentSeconds !== undefined) {
      seconds = typeof body.timeSpentSeconds === 'number' ? body.timeSpentSeconds : Number.NaN;
    } else if (body.timeSpent !== undefined) {
      seconds = parseJiraDuration(body.timeSpent) ?? Number.NaN;
    }
    if (seconds === undefined || !Number.isInteger(seconds) || seconds <= 0) {
      errors.timeLogged = 'You must indicate the time spent working.';
    }
    if (body.comment !== undefined && adfProblems(body.comment).length > 0) {
      errors.comment = 'Comment body is not valid!';
    }
    const mode = req.query.adjustEstimate ?? 'auto';
    let newRemaining: number | undefined;
    if (!['auto', 'leave', 'new', 'manual'].includes(mode)) {
      errors.adjustEstimate = `Invalid adjustEstimate '${mode}'.`;
    } else if (mode === 'new') {
      newRemaining = parseJiraDuration(req.query.newEstimate);
      if (newRemaining === undefined) errors.newEstimate = 'You must supply a valid new estimate.';
    } else if (mode === 'manual') {
      const reduceBy = parseJiraDuration(req.query.reduceBy);
      if (reduceBy === undefined)
        errors.reduceBy = 'You must supply a valid amount to reduce the estimate by.';
      else newRemaining = Math.max(0, (issue.timetracking.remainingSeconds ?? 0) - reduceBy);
    }
    if (Object.keys(errors).length > 0 || started === undefined || seconds === undefined) {
      return sendError(reply, 400, [], errors);
    }
    const now = store.now();
    const worklog: WorklogRec = {
      id: String(store.nextId('worklog')),
      authorId: currentAccount(req).accountId,
      started,
      timeSpentSeconds: seconds,
      created: now,
      updated: now,
      ...(body.comment !== undefined ? { comment: body.comment } : {}),
    };
    issue.worklogs.push(worklog);
    issue.timetracking.spentSeconds += seconds;
    if (mode === 'auto' && issue.timetracking.remainingSeconds !== undefined) {
      issue.timetracking.remainingSeconds = Math.max(0, issue.timetracking.remainingSeconds - seconds);
    } else if (newRemaining !== undefined) {
      issue.timetracking.remainingSeconds = newRemaining;
    }
    store.touch(issue);
    return reply.code(201).send(Render.of(store, req).worklog(issue, worklog));
  });

  app.delete<{
    Params: { issueIdOrKey: string; id: string };
    Querystring: { adjustEstimate?: string; newEstimate?: string; increaseBy?: string };
  }>('/rest/api/3/issue/:issueIdOrKey/worklog/:id', async (req, reply) => {
    const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
    if (!issue) return notFoundIssue(reply);
    const at = issue.worklogs.findIndex((w) => w.id === req.params.id);
    if (at < 0) return sendError(reply, 404, [`Cannot find worklog with id: ${req.params.id}.`]);
    const mode = req.query.adjustEstimate ?? 'auto';
    const worklog = issue.worklogs[at] as WorklogRec;
    const remaining = issue.timetracking.remainingSeconds;
    let newRemaining: number | undefined;
    if (!['auto', 'leave', 'new', 'manual'].includes(mode)) {
      return sendError(reply, 400, [], { adjustEstimate: `Invalid adjustEstimate '${mode}'.` });
    } else if (mode === 'new') {
      newRemaining = parseJiraDuration(req.query.newEstimate);
      if (newRemaining === undefined)
        return sendError(reply, 400, [], { newEstimate: 'You must supply a valid new estimate.' });
    } else if (mode === 'manual') {
      const increaseBy = parseJiraDuration(req.query.increaseBy);
      if (increaseBy === undefined)
        return sendError(reply, 400, [], {
          increaseBy: 'You must supply a valid amount to increase the estimate by.',
        });
      newRemaining = (remaining ?? 0) + increaseBy;
    } else if (mode === 'auto' && remaining !== undefined) {
      newRemaining = Math.max(0, remaining - worklog.timeSpentSeconds);
    }
    issue.worklogs.splice(at, 1);
    issue.timetracking.spentSeconds = Math.max(0, issue.timetracking.spentSeconds - worklog.timeSpentSeconds);
    if (newRemaining !== undefined) issue.timetracking.remainingSeconds = newRemaining;
    store.touch(issue);
    return reply.code(204).send();
  });
}
