/**
 * JSON representations in the shapes of Jira's OpenAPI schemas (User, StatusDetails, IssueBean, Comment, ...).
 * `self` links are absolute, built from the request's host, as Jira's are.
 */
import type { FastifyRequest } from 'fastify';
import {
  CUSTOM,
  FIELDS,
  type IssueTypeDef,
  LINK_TYPES,
  RESOLUTIONS,
  STATUS_CATEGORIES,
  type StatusCategoryKey,
  type StatusDef,
} from './catalog.ts';
import type {
  AttachmentRec,
  ChangelogRec,
  CommentRec,
  ComponentRec,
  IssueRec,
  JiraStore,
  JiraUser,
  ProjectInfo,
  SprintRec,
  WorklogRec,
} from './store.ts';
import { formatJiraDuration, jiraDateTime } from './time.ts';

type Json = Record<string, unknown>;

export function baseUrl(req: FastifyRequest): string {
  return `http://${req.headers.host ?? '127.0.0.1'}`;
}

export class Render {
  constructor(
    readonly store: JiraStore,
    readonly base: string,
  ) {}

  static of(store: JiraStore, req: FastifyRequest): Render {
    return new Render(store, baseUrl(req));
  }

  avatarUrls(kind: string, id: string): Json {
    const url = (size: number) => `${this.base}/secure/viewavatar?size=${size}&avatarType=${kind}&id=${id}`;
    return { '48x48': url(48), '24x24': url(24), '16x16': url(16), '32x32': url(32) };
  }

  /** The `User` schema. E-mail addresses are visible: the sandbox's users all allow it. */
  user(u: JiraUser): Json {
    return {
      self: `${this.base}/rest/api/3/user?accountId=${u.accountId}`,
      accountId: u.accountId,
      accountType: 'atlassian',
      emailAddress: u.email,
      avatarUrls: this.avatarUrls('user', u.accountId),
      displayName: u.displayName,
      active: u.active,
      timeZone: 'Etc/UTC',
      locale: 'en_US',
    };
  }

  /** The `UserDetails` schema (authors of comments, worklogs, attachments; issue user fields). */
  userDetails(accountId: string | null): Json | null {
    if (!accountId) return null;
    const u = this.store.users.get(accountId);
    if (!u) return null;
    return {
      self: `${this.base}/rest/api/3/user?accountId=${u.accountId}`,
      accountId: u.accountId,
      emailAddress: u.email,
      avatarUrls: this.avatarUrls('user', u.accountId),
      displayName: u.displayName,
      active: u.active,
      timeZone: 'Etc/UTC',
      accountType: 'atlassian',
    };
  }

  statusCategory(key: StatusCategoryKey): Json {
    const c = STATUS_CATEGORIES[key];
    return {
      self: `${this.base}/rest/api/3/statuscategory/${c.id}`,
      id: c.id,
      key,
      colorName: c.colorName,
      name: c.name,
    };
  }

  status(s: StatusDef): Json {
    return {
      self: `${this.base}/rest/api/3/status/${s.id}`,
      description: '',
      iconUrl: `${this.base}/images/icons/statuses/generic.png`,
      name: s.name,
      id: s.id,
      statusCategory: this.statusCategory(s.category),
    };
  }

  issueType(t: IssueTypeDef): Json {
    return {
      self: `${this.base}/rest/api/3/issuetype/${t.id}`,
      id: t.id,
      description: t.description,
      iconUrl: `${this.base}/rest/api/2/universal_avatar/view/type/issuetype/avatar/${t.avatarId}?size=medium`,
      name: t.name,
      subtask: t.hierarchyLevel === -1,
      avatarId: t.avatarId,
      hierarchyLevel: t.hierarchyLevel,
    };
  }

  priority(id: string): Json | null {
    const p = this.store.priorities.find((x) => x.id === id);
    if (!p) return null;
    return {
      self: `${this.base}/rest/api/3/priority/${p.id}`,
      statusColor: p.statusColor,
      description: p.description,
      iconUrl: `${this.base}/images/icons/priorities/${p.name.toLowerCase()}.svg`,
      name: p.name,
      id: p.id,
    };
  }

  resolution(id: string | null): Json | null {
    const r = RESOLUTIONS.find((x) => x.id === id);
    if (!r) return null;
    return {
      self: `${this.base}/rest/api/3/resolution/${r.id}`,
      id: r.id,
      description: r.description,
      name: r.name,
    };
  }

  projectDetails(p: ProjectInfo = this.store.project): Json {
    return {
      self: `${this.base}/rest/api/3/project/${p.id}`,
      id: p.id,
      key: p.key,
      name: p.name,
      projectTypeKey: 'software',
      simplified: false,
      avatarUrls: this.avatarUrls('project', p.id),
    };
  }

  /** The `ProjectComponent` schema. */
  component(c: ComponentRec): Json {
    const lead = c.leadAccountId ? this.store.users.get(c.leadAccountId) : undefined;
    const project = this.store.projectById(c.projectId);
    const projectLead = this.store.users.get(project.leadAccountId);
    const realAssigneeType =
      c.assigneeType === 'COMPONENT_LEAD' && lead
        ? 'COMPONENT_LEAD'
        : c.assigneeType === 'UNASSIGNED'
          ? 'UNASSIGNED'
          : 'PROJECT_LEAD';
    const realAssignee = realAssigneeType === 'COMPONENT_LEAD' ? lead : projectLead;
    return {
      self: `${this.base}/rest/api/3/component/${c.id}`,
      id: c.id,
      name: c.name,
      ...(c.description !== undefined ? { description: c.description } : {}),
      ...(lead ? { lead: this.user(lead), leadAccountId: lead.accountId } : {}),
      assigneeType: c.assigneeType,
      ...(realAssigneeType !== 'UNASSIGNED' && realAssignee ? { realAssignee: this.user(realAssignee) } : {}),
      realAssigneeType,
      isAssigneeTypeValid: true,
      project: project.key,
      projectId: Number(project.id),
    };
  }

  sprint(s: SprintRec): Json {
    return {
      id: s.id,
      self: `${this.base}/rest/agile/1.0/sprint/${s.id}`,
      state: s.state,
      name: s.name,
      ...(s.startDate ? { startDate: s.startDate } : {}),
      ...(s.endDate ? { endDate: s.endDate } : {}),
      ...(s.completeDate ? { completeDate: s.completeDate } : {}),
      createdDate: s.createdDate,
      originBoardId: s.originBoardId,
      ...(s.goal !== undefined ? { goal: s.goal } : {}),
    };
  }

  /** The `Attachment` schema (upload answers and the issue's `attachment` field). */
  attachment(a: AttachmentRec): Json {
    return {
      self: `${this.base}/rest/api/3/attachment/${a.id}`,
      id: a.id,
      filename: a.filename,
      author: this.userDetails(a.authorId),
      created: jiraDateTime(a.created),
      size: a.size,
      mimeType: a.mimeType,
      content: `${this.base}/rest/api/3/attachment/content/${a.id}`,
      ...(a.mimeType.startsWith('image/')
        ? { thumbnail: `${this.base}/rest/api/3/attachment/thumbnail/${a.id}` }
        : {}),
    };
  }

  /** The `AttachmentMetadata` schema (GET /attachment/{id}): a numeric id and a full `User` author. */
  attachmentMetadata(a: AttachmentRec): Json {
    const author = this.store.users.get(a.authorId);
    return {
      id: Number(a.id),
      self: `${this.base}/rest/api/3/attachment/${a.id}`,
      filename: a.filename,
      ...(author ? { author: this.user(author) } : {}),
      created: jiraDateTime(a.created),
      size: a.size,
      mimeType: a.mimeType,
      properties: {},
      content: `${this.base}/rest/api/3/attachment/content/${a.id}`,
      ...(a.mimeType.startsWith('image/')
        ? { thumbnail: `${this.base}/rest/api/3/attachment/thumbnail/${a.id}` }
        : {}),
    };
  }

  /** `{author, updateAuthor}` for a known person; nothing for a comment or worklog an import left without one. */
  private authors(accountId: string): Json {
    const author = this.userDetails(accountId);
    return author ? { author, updateAuthor: author } : {};
  }

  comment(issue: IssueRec, c: CommentRec): Json {
    const { author, updateAuthor } = this.authors(c.authorId);
    return {
      self: `${this.base}/rest/api/3/issue/${issue.id}/comment/${c.id}`,
      id: c.id,
      ...(author ? { author } : {}),
      body: c.body,
      ...(updateAuthor ? { updateAuthor } : {}),
      created: jiraDateTime(c.created),
      updated: jiraDateTime(c.updated),
      jsdPublic: true,
      ...(c.visibility ? { visibility: c.visibility } : {}),
    };
  }

  worklog(issue: IssueRec, w: WorklogRec): Json {
    return {
      self: `${this.base}/rest/api/3/issue/${issue.id}/worklog/${w.id}`,
      ...this.authors(w.authorId),
      ...(w.comment !== undefined ? { comment: w.comment } : {}),
      created: jiraDateTime(w.created),
      updated: jiraDateTime(w.updated),
      started: jiraDateTime(w.started),
      timeSpent: formatJiraDuration(w.timeSpentSeconds),
      timeSpentSeconds: w.timeSpentSeconds,
      id: w.id,
      issueId: String(issue.id),
    };
  }

  /** The `Changelog` schema: one entry of an issue's history, its items with null for an absent value, as Jira answers them. */
  changelog(c: ChangelogRec): Json {
    const author = c.authorId === null ? null : this.userDetails(c.authorId);
    return {
      id: c.id,
      ...(author ? { author } : {}),
      created: jiraDateTime(c.created),
      items: c.items.map((i) => ({
        field: i.field,
        fieldtype: i.fieldtype,
        ...(i.fieldId ? { fieldId: i.fieldId } : {}),
        from: i.from,
        fromString: i.fromString,
        to: i.to,
        toString: i.toString,
      })),
    };
  }

  linkType(id: string): Json {
    const t = LINK_TYPES.find((x) => x.id === id) ?? LINK_TYPES[0];
    return { ...t, self: `${this.base}/rest/api/3/issueLinkType/${t?.id}` };
  }

  /** An issue as other issues refer to it (links, parent, subtasks): the `LinkedIssue` schema. */
  linkedIssue(issue: IssueRec): Json {
    return {
      id: String(issue.id),
      key: issue.key,
      self: `${this.base}/rest/api/3/issue/${issue.id}`,
      fields: {
        summary: issue.summary,
        status: this.status(this.store.statusOf(issue)),
        priority: this.priority(issue.priorityId),
        issuetype: this.issueType(this.store.issueTypeOf(issue)),
      },
    };
  }

  issueLinks(issue: IssueRec): Json[] {
    const out: Json[] = [];
    // An index copy carries the links of its time; a live issue reads the store's.
    for (const link of issue.indexedLinks ?? this.store.linksOf(issue.id)) {
      const self = {
        id: link.id,
        self: `${this.base}/rest/api/3/issueLink/${link.id}`,
        type: this.linkType(link.typeId),
      };
      // On the inward issue of `{inwardIssue: A, outwardIssue: B}` the other end is the outward one, and back.
      if (link.inwardId === issue.id) {
        const other = this.store.issues.get(link.outwardId);
        if (other) out.push({ ...self, outwardIssue: this.linkedIssue(other) });
      } else {
        const other = this.store.issues.get(link.inwardId);
        if (other) out.push({ ...self, inwardIssue: this.linkedIssue(other) });
      }
    }
    return out;
  }

  timetracking(issue: IssueRec): Json {
    const t = issue.timetracking;
    const out: Json = {};
    if (t.originalSeconds !== undefined) {
      out.originalEstimate = formatJiraDuration(t.originalSeconds);
      out.originalEstimateSeconds = t.originalSeconds;
    }
    if (t.remainingSeconds !== undefined) {
      out.remainingEstimate = formatJiraDuration(t.remainingSeconds);
      out.remainingEstimateSeconds = t.remainingSeconds;
    }
    if (t.spentSeconds > 0) {
      out.timeSpent = formatJiraDuration(t.spentSeconds);
      out.timeSpentSeconds = t.spentSeconds;
    }
    return out;
  }

  private fieldValue(issue: IssueRec, id: string): unknown {
    const s = this.store;
    switch (id) {
      case 'summary':
        return issue.summary;
      case 'description':
        return issue.description ?? null;
      case 'issuetype':
        return this.issueType(s.issueTypeOf(issue));
      case 'project':
        return this.projectDetails(s.projectById(issue.projectId));
      case 'status':
        return this.status(s.statusOf(issue));
      case 'statuscategorychangedate':
        return jiraDateTime(issue.statusCategoryChanged);
      case 'priority':
        return this.priority(issue.priorityId);
      case 'resolution':
        return this.resolution(issue.resolutionId);
      case 'resolutiondate':
        return issue.resolutionDate === null ? null : jiraDateTime(issue.resolutionDate);
      case 'labels':
        return [...issue.labels];
      case 'assignee':
        return this.userDetails(issue.assigneeId);
      case 'reporter':
        return this.userDetails(issue.reporterId);
      case 'creator':
        return this.userDetails(issue.creatorId);
      case 'created':
        return jiraDateTime(issue.created);
      case 'updated':
        return jiraDateTime(issue.updated);
      case 'duedate':
        return issue.duedate;
      case 'components':
        return issue.componentIds.flatMap((cid) => {
          const c = s.components.get(cid);
          if (!c) return [];
          return [
            {
              self: `${this.base}/rest/api/3/component/${c.id}`,
              id: c.id,
              name: c.name,
              ...(c.description !== undefined ? { description: c.description } : {}),
            },
          ];
        });
      case 'parent': {
        const parent = issue.parentId === null ? undefined : s.issues.get(issue.parentId);
        return parent ? this.linkedIssue(parent) : undefined;
      }
      case 'subtasks':
        return s
          .childrenOf(issue.id)
          .filter((i) => s.issueTypeOf(i).hierarchyLevel === -1)
          .map((i) => this.linkedIssue(i));
      case 'issuelinks':
        return this.issueLinks(issue);
      case 'attachment':
        return issue.attachmentIds.flatMap((aid) => {
          const a = s.attachments.get(aid);
          return a ? [this.attachment(a)] : [];
        });
      case 'comment':
        return {
          comments: issue.comments.map((c) => this.comment(issue, c)),
          self: `${this.base}/rest/api/3/issue/${issue.id}/comment`,
          maxResults: issue.comments.length,
          total: issue.comments.length,
          startAt: 0,
        };
      case 'worklog': {
        // Jira embeds at most 20 worklogs in the issue; the rest are read from the worklog resource.
        const worklogs = issue.worklogs.slice(0, 20).map((w) => this.worklog(issue, w));
        return { startAt: 0, maxResults: 20, total: issue.worklogs.length, worklogs };
      }
      case 'timetracking':
        return this.timetracking(issue);
      case 'timeoriginalestimate':
        return issue.timetracking.originalSeconds ?? null;
      case 'timeestimate':
        return issue.timetracking.remainingSeconds ?? null;
      case 'timespent':
        return issue.timetracking.spentSeconds > 0 ? issue.timetracking.spentSeconds : null;
      case CUSTOM.sprint: {
        const sprints = issue.sprintIds.flatMap((sid) => {
          const sp = s.sprints.get(sid);
          if (!sp) return [];
          return [
            {
              id: sp.id,
              name: sp.name,
              state: sp.state,
              boardId: sp.originBoardId,
              goal: sp.goal ?? '',
              ...(sp.startDate ? { startDate: sp.startDate } : {}),
              ...(sp.endDate ? { endDate: sp.endDate } : {}),
              ...(sp.completeDate ? { completeDate: sp.completeDate } : {}),
            },
          ];
        });
        return sprints.length > 0 ? sprints : null;
      }
      default:
        return issue.custom[id] ?? null;
    }
  }

  issueFields(issue: IssueRec, fieldIds: Iterable<string>): Json {
    const fields: Json = {};
    for (const id of fieldIds) {
      const value = this.fieldValue(issue, id);
      if (value !== undefined) fields[id] = value;
    }
    return fields;
  }

  /** The `IssueBean` schema; `selection` 'id-only' gives `{id}` as the search API does by default. */
  issue(issue: IssueRec, selection: FieldSelection): Json {
    if (selection === 'id-only') return { id: String(issue.id) };
    return {
      expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
      id: String(issue.id),
      self: `${this.base}/rest/api/3/issue/${issue.id}`,
      key: issue.key,
      fields: this.issueFields(issue, selection),
    };
  }
}

export type FieldSelection = 'id-only' | string[];

const ALL_FIELD_IDS = FIELDS.map((f) => f.id);
const NAVIGABLE_FIELD_IDS = FIELDS.filter((f) => f.navigable).map((f) => f.id);

/**
 * Reads a `fields` parameter (comma-separated, possibly repeated): `*all`, `*navigable`, names, `-name`
 * exclusions. Without any, `fallback` applies: all fields for GET issue, ids only for search.
 */
export function selectFields(param: unknown, fallback: 'all' | 'id-only'): FieldSelection {
  const raw = Array.isArray(param) ? param : param === undefined ? [] : [param];
  const tokens = raw
    .flatMap((v) => String(v).split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  if (tokens.length === 0) return fallback === 'all' ? [...ALL_FIELD_IDS] : 'id-only';
  const known = new Set(ALL_FIELD_IDS);
  const picked = new Set<string>();
  const exclusions = tokens.filter((t) => t.startsWith('-')).map((t) => t.slice(1));
  const positives = tokens.filter((t) => !t.startsWith('-'));
  if (positives.includes('*all')) for (const id of ALL_FIELD_IDS) picked.add(id);
  if (positives.includes('*navigable') || (positives.length === 0 && exclusions.length > 0)) {
    for (const id of NAVIGABLE_FIELD_IDS) picked.add(id);
  }
  for (const t of positives) if (known.has(t)) picked.add(t);
  for (const t of exclusions) picked.delete(t);
  if (picked.size === 0 && positives.every((t) => t === 'id')) return 'id-only';
  return [...picked];
}
