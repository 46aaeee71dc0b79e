/**
 * An issue's changelog: `GET /rest/api/3/issue/{issueIdOrKey}/changelog` (the `PageBeanChangelog` schema: pages
 * by `startAt`/`maxResults`, oldest first, as the platform spec describes it: "Returns a paginated list of all
 * changelogs for an issue sorted by date, starting from the oldest"), and `expand=changelog` on GET issue (the
 * `PageOfChangelogs` schema: at most 100 entries, the changelog route pages the rest).
 *
 * What is in it: the history the JSON importer brought (importer.ts), then one entry per REST write that changed
 * a tracked field (`recordChanges`): edits (`PUT /issue`), transitions, sprint moves, by the account that made
 * them, at the time they were made. Tracked: status, resolution, summary, description (as its plain text),
 * priority, issue type, the parent, assignee, reporter, labels, components, due date, estimates, Sprint and the
 * site's other custom fields. Not recorded: links, attachments, worklogs and comments (Jira records some of these
 * too; the sandbox does not).
 *
 * A parent change is written as Jira Cloud writes it since the Epic Link and Parent Link fields gave way to the one
 * `parent` (Atlassian's deprecation notice for re-parenting changelogs, 2021): on the child, one item
 * `{"field": "IssueParentAssociation", "fieldtype": "jira", "from": <parent id>, "fromString": <parent key>, "to":
 * ..., "toString": ...}` with no `fieldId` (Atlassian: consumers should not use `fieldId` for these items).
 */
import type { FastifyInstance } from 'fastify';
import { adfText } from './adf.ts';
import { FIELDS, RESOLUTIONS } from './catalog.ts';
import { notFoundIssue, sendError } from './errors.ts';
import { intParam } from './params.ts';
import { Render } from './render.ts';
import type { ChangeItemRec, IssueRec, JiraStore } from './store.ts';

type Json = Record<string, unknown>;

/** A tracked field's value as the changelog writes it: an id (`from`/`to`) and a text (`fromString`/`toString`). */
type Tracked = Omit<ChangeItemRec, 'from' | 'fromString' | 'to' | 'toString'> & {
  value: string | null;
  text: string | null;
};

const joined = (values: string[]) => (values.length > 0 ? values.join(', ') : null);

/** The issue's tracked fields now, in a fixed order (before and after a write compare item by item). */
export function trackedFields(store: JiraStore, issue: IssueRec): Tracked[] {
  const user = (id: string | null) => (id ? (store.users.get(id)?.displayName ?? id) : null);
  const jira = (field: string, fieldId: string, value: string | null, text: string | null): Tracked => ({
    field,
    fieldtype: 'jira',
    fieldId,
    value,
    text,
  });
  const status = store.statusOf(issue);
  const type = store.issueTypeOf(issue);
  const priority = store.priorities.find((p) => p.id === issue.priorityId);
  const parent = issue.parentId === null ? undefined : store.issues.get(issue.parentId);
  const components = issue.componentIds.flatMap((id) => store.components.get(id) ?? []);
  const t = issue.timetracking;
  const seconds = (n: number | undefined) => (n === undefined ? null : String(n));
  const description = issue.description ? adfText(issue.description).trim() : null;
  const out: Tracked[] = [
    jira('status', 'status', status.id, status.name),
    jira(
      'resolution',
      'resolution',
      issue.resolutionId,
      RESOLUTIONS.find((r) => r.id === issue.resolutionId)?.name ?? null,
    ),
    jira('summary', 'summary', null, issue.summary),
    jira('description', 'description', null, description || null),
    jira('priority', 'priority', issue.priorityId, priority?.name ?? null),
    jira('issuetype', 'issuetype', type.id, type.name),
    // Jira Cloud's re-parenting item: the parent's id and key, and no fieldId.
    {
      field: 'IssueParentAssociation',
      fieldtype: 'jira',
      value: issue.parentId === null ? null : String(issue.parentId),
      text: parent?.key ?? null,
    },
    jira('assignee', 'assignee', issue.assigneeId, user(issue.assigneeId)),
    jira('reporter', 'reporter', issue.reporterId, user(issue.reporterId)),
    jira('labels', 'labels', null, issue.labels.length > 0 ? issue.labels.join(' ') : null),
    jira(
      'Component',
      'components',
      joined(components.map((c) => c.id)),
      joined(components.map((c) => c.name)),
    ),
    jira('duedate', 'duedate', issue.duedate, issue.duedate),
    jira(
      'timeoriginalestimate',
      'timeoriginalestimate',
      seconds(t.originalSeconds),
      seconds(t.originalSeconds),
    ),
    jira('timeestimate', 'timeestimate', seconds(t.remainingSeconds), seconds(t.remainingSeconds)),
  ];
  for (const f of FIELDS) {
    if (!f.custom || f.kind === 'rank') continue;
    if (f.kind === 'sprint') {
      const sprints = issue.sprintIds.flatMap((id) => store.sprints.get(id) ?? []);
      out.push({
        field: f.name,
        fieldtype: 'custom',
        fieldId: f.id,
        value: joined(sprints.map((sp) => String(sp.id))),
        text: joined(sprints.map((sp) => sp.name)),
      });
      continue;
    }
    const raw = issue.custom[f.id];
    const text =
      raw === undefined || raw === null ? null : typeof raw === 'object' ? adfText(raw).trim() : String(raw);
    out.push({ field: f.name, fieldtype: 'custom', fieldId: f.id, value: null, text });
  }
  return out;
}

/** Adds one changelog entry for what changed since `before` (trackedFields), by `authorId`; none if nothing did. */
export function recordChanges(store: JiraStore, issue: IssueRec, before: Tracked[], authorId: string): void {
  const after = trackedFields(store, issue);
  const items: ChangeItemRec[] = [];
  after.forEach((a, i) => {
    const b = before[i];
    if (!b || (a.value === b.value && a.text === b.text)) return;
    items.push({
      field: a.field,
      fieldtype: a.fieldtype,
      ...(a.fieldId ? { fieldId: a.fieldId } : {}),
      from: b.value,
      fromString: b.text,
      to: a.value,
      toString: a.text,
    });
  });
  if (items.length === 0) return;
  issue.changelog.push({ id: String(store.nextId('changelog')), authorId, created: store.now(), items });
}

/** The platform spec's default page and the most the sandbox answers in one. */
export const CHANGELOG_PAGE = 100;

/** The `PageOfChangelogs` an issue's `expand=changelog` carries. */
export function expandedChangelog(render: Render, issue: IssueRec): Json {
  const histories = issue.changelog.slice(0, CHANGELOG_PAGE).map((c) => render.changelog(c));
  return { startAt: 0, maxResults: histories.length, total: issue.changelog.length, histories };
}

export function registerChangelogRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get<{ Params: { issueIdOrKey: string }; Querystring: { startAt?: string; maxResults?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/changelog',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const startAt = intParam(req.query.startAt, 0);
      const asked = intParam(req.query.maxResults, CHANGELOG_PAGE);
      if (Number.isNaN(startAt) || Number.isNaN(asked)) {
        return sendError(reply, 400, ['startAt and maxResults must be non-negative integers.']);
      }
      const maxResults = Math.min(Math.max(asked, 1), CHANGELOG_PAGE);
      const render = Render.of(store, req);
      const total = issue.changelog.length;
      const values = issue.changelog.slice(startAt, startAt + maxResults).map((c) => render.changelog(c));
      const isLast = startAt + values.length >= total;
      const page = (from: number) =>
        `${render.base}/rest/api/3/issue/${issue.key}/changelog?startAt=${from}&maxResults=${maxResults}`;
      return {
        self: page(startAt),
        ...(isLast ? {} : { nextPage: page(startAt + maxResults) }),
        maxResults,
        startAt,
        total,
        isLast,
        values,
      };
    },
  );
}
