/**
 * The Jira Cloud (target) client: REST v3 and Agile 1.0, over the resilient HTTP layer.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { JiraTransition } from '#domain/mapping/transitions.ts';
import { basicAuth, type HttpOptions, TrackerHttp, TrackerHttpError } from '../http.ts';
import { JIRA_PER_ISSUE_WINDOWS } from '../pacing.ts';

export type { JiraTransition };

export const BULK_CREATE_MAX = 50;
export const SPRINT_ASSIGN_MAX = 50;
const SEARCH_PAGE = 100;
/** Labels per JQL query: keeps the query well under Jira's length limits. */
const LABEL_CHUNK = 100;

export interface JiraConnection {
  baseUrl: string;
  email: string;
  /** An API token (Basic with the e-mail), or an OAuth access token with `tokenKind: 'bearer'`. */
  token: string;
  tokenKind?: 'basic' | 'bearer';
}

export interface JiraProject {
  id: string;
  key: string;
  name: string;
  issueTypes?: { id: string; name: string; subtask?: boolean; hierarchyLevel?: number }[];
}

export interface JiraUser {
  accountId: string;
  emailAddress?: string;
  displayName?: string;
  active?: boolean;
}

export interface BulkCreateResult {
  issues: { id: string; key: string; self?: string }[];
  errors: {
    status?: number;
    failedElementNumber: number;
    elementErrors?: { errorMessages?: string[]; errors?: Record<string, string> };
  }[];
}

export interface JiraIssue {
  id: string;
  key: string;
  fields?: Record<string, unknown>;
}

export interface JiraSprint {
  id: number;
  name: string;
  state: 'future' | 'active' | 'closed';
  startDate?: string;
  endDate?: string;
}

/** An issue comment (the `Comment` schema, as far as the migration reads it); `body` is ADF. */
export interface JiraComment {
  id: string;
  body?: unknown;
  created?: string;
  /** When it was last edited (as `created` for a comment never edited). */
  updated?: string;
  author?: JiraUser;
}

/** An issue's worklog (the `Worklog` schema, as far as a rollback reads it); `comment` is ADF. */
export interface JiraWorklog {
  id: string;
  comment?: unknown;
  updated?: string;
}

/** One entry of an issue's change history (`Changelog`): when, and which fields it changed. */
export interface JiraChangelog {
  id?: string;
  created?: string;
  author?: { accountId?: string };
  /** Each change: its field and values (`fromString`, `toString` ...), parsed where they are compared. */
  items?: { field?: string; fieldId?: string }[];
}

/** A remote link of an issue (`RemoteIssueLink`). */
export interface JiraRemoteLink {
  id: number;
  globalId?: string;
  object?: { url?: string; title?: string };
}

/** A resolution of the site (`ResolutionJsonBean`). */
export interface JiraResolution {
  id: string;
  name: string;
  description?: string;
  isDefault?: boolean;
}

/** An issue priority (`Priority`). */
export interface JiraPriority {
  id: string;
  name: string;
  isDefault?: boolean;
}

/** Comments read a page at a time (the spec's default page). */
const COMMENT_PAGE = 100;
/** Jira's largest worklog page. */
const WORKLOG_PAGE = 5000;
/** The changelog's page (the platform spec's default). */
const CHANGELOG_PAGE = 100;
/** Priorities read a page at a time (the spec's default page). */
const PRIORITY_PAGE = 50;
/** Jira's window for assignable users: it never looks past the 1,000th user. */
const ASSIGNABLE_WINDOW = 1000;
/** Resolutions read a page at a time (the spec's default page). */
const RESOLUTION_PAGE = 50;

export class JiraClient {
  readonly http: TrackerHttp;

  constructor(
    readonly connection: JiraConnection,
    httpOptions: Partial<HttpOptions> = {},
  ) {
    this.http = new TrackerHttp({
      tracker: 'target',
      name: 'jira',
      baseUrl: connection.baseUrl.replace(/\/+$/, ''),
      authorization:
        connection.tokenKind === 'bearer'
          ? `Bearer ${connection.token}`
          : basicAuth(connection.email, connection.token),
      // Writes to one issue stay under Jira's per-issue limit instead of running into its 429s.
      perIssueWindows: JIRA_PER_ISSUE_WINDOWS,
      ...httpOptions,
    });
  }

  get siteHost(): string {
    return new URL(this.connection.baseUrl).host;
  }

  async myself(): Promise<JiraUser> {
    return (await this.http.request<JiraUser>('GET', '/rest/api/3/myself')).body;
  }

  async project(key: string): Promise<JiraProject> {
    return (await this.http.request<JiraProject>('GET', `/rest/api/3/project/${encodeURIComponent(key)}`))
      .body;
  }

  /** Whether the caller holds each permission on the project (no side effects). */
  async myPermissions(projectKey: string, permissions: string[]): Promise<Record<string, boolean>> {
    const res = await this.http.request<{ permissions: Record<string, { havePermission: boolean }> }>(
      'GET',
      '/rest/api/3/mypermissions',
      {
        query: { projectKey, permissions: permissions.join(',') },
      },
    );
    return Object.fromEntries(
      permissions.map((p) => [p, res.body.permissions?.[p]?.havePermission === true]),
    );
  }

  async fields(): Promise<
    { id: string; name: string; custom?: boolean; schema?: Record<string, unknown> }[]
  > {
    return (await this.http.request<{ id: string; name: string }[]>('GET', '/rest/api/3/field')).body;
  }

  async projectStatuses(
    key: string,
  ): Promise<
    { id: string; name: string; statuses: { id: string; name: string; statusCategory?: { key: string } }[] }[]
  > {
    return (await this.http.request<[]>('GET', `/rest/api/3/project/${encodeURIComponent(key)}/statuses`))
      .body;
  }

  async linkTypes(): Promise<{ id: string; name: string; inward: string; outward: string }[]> {
    const res = await this.http.request<{
      issueLinkTypes: { id: string; name: string; inward: string; outward: string }[];
    }>('GET', '/rest/api/3/issueLinkType');
    return res.body.issueLinkTypes ?? [];
  }

  async findUsersByEmail(email: string): Promise<JiraUser[]> {
    return (
      await this.http.request<JiraUser[]>('GET', '/rest/api/3/user/search', { query: { query: email } })
    ).body;
  }

  /**
   * The account whose e-mail is exactly `email` (case aside): the user search matches on names and parts of
   * addresses too, so its first hit is not enough. Undefined when none is.
   */
  async accountIdByEmail(email: string): Promise<string | undefined> {
    const wanted = email.toLowerCase();
    return (await this.findUsersByEmail(email)).find((u) => u.emailAddress?.toLowerCase() === wanted)
      ?.accountId;
  }

  /**
   * The users who can be assigned issues of the project. Jira filters only the first 1,000 users of the site
   * (startAt + maxResults), so one request of 1,000 reads every answer it will ever give
   * (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-user-search/#api-rest-api-3-user-assignable-search-get).
   */
  async assignableUsers(projectKey: string): Promise<JiraUser[]> {
    const res = await this.http.request<JiraUser[]>('GET', '/rest/api/3/user/assignable/search', {
      query: { project: projectKey, startAt: 0, maxResults: ASSIGNABLE_WINDOW },
    });
    return Array.isArray(res.body) ? res.body : [];
  }

  /** Whether Jira knows this accountId (GET /user answers 404 for an unknown one). */
  async accountExists(accountId: string): Promise<boolean> {
    const res = await this.http.request('GET', '/rest/api/3/user', { query: { accountId }, accept: [404] });
    return res.status === 200;
  }

  /** Creates at most 50 issues; failures come back per element, the rest are created. */
  async bulkCreate(
    issueUpdates: { fields: Record<string, unknown>; update?: Record<string, unknown> }[],
  ): Promise<BulkCreateResult> {
    if (issueUpdates.length > BULK_CREATE_MAX)
      throw new RangeError(`bulk create takes at most ${BULK_CREATE_MAX} issues`);
    const res = await this.http.request<BulkCreateResult>('POST', '/rest/api/3/issue/bulk', {
      body: { issueUpdates },
      accept: [400],
      notIdempotent: true,
    });
    return { issues: res.body.issues ?? [], errors: res.body.errors ?? [] };
  }

  async getIssue(key: string, fields: string[] = ['*all']): Promise<JiraIssue> {
    return (
      await this.http.request<JiraIssue>('GET', `/rest/api/3/issue/${encodeURIComponent(key)}`, {
        query: { fields: fields.join(',') },
      })
    ).body;
  }

  /**
   * Deletes the issue, never its sub-tasks (Jira refuses with a 400 while it has any: a rollback deletes each of
   * them on its own, or keeps the parent). `gone`: there was no such issue (deleted already).
   */
  async deleteIssue(key: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', `/rest/api/3/issue/${encodeURIComponent(key)}`, {
      query: { deleteSubtasks: 'false' },
      accept: [404],
    });
    return res.status === 404 ? 'gone' : 'deleted';
  }

  async editIssue(
    key: string,
    body: { fields?: Record<string, unknown>; update?: Record<string, unknown> },
  ): Promise<void> {
    await this.http.request('PUT', `/rest/api/3/issue/${encodeURIComponent(key)}`, { body });
  }

  /**
   * Every issue matching the JQL, page by page. `reconcileIssues` (issue ids) asks for read-after-write
   * consistency for those issues, which the search index may not show yet.
   */
  async search(
    jql: string,
    opts: { fields?: string[]; reconcileIssues?: number[] } = {},
  ): Promise<JiraIssue[]> {
    const issues: JiraIssue[] = [];
    let nextPageToken: string | undefined;
    do {
      const res = await this.http.request<{ issues?: JiraIssue[]; nextPageToken?: string }>(
        'POST',
        '/rest/api/3/search/jql',
        {
          body: {
            jql,
            maxResults: SEARCH_PAGE,
            fields: opts.fields ?? ['labels'],
            ...(nextPageToken ? { nextPageToken } : {}),
            ...(opts.reconcileIssues?.length ? { reconcileIssues: opts.reconcileIssues } : {}),
          },
        },
      );
      issues.push(...(res.body.issues ?? []));
      nextPageToken = res.body.nextPageToken ?? undefined;
    } while (nextPageToken);
    return issues;
  }

  /**
   * The issues carrying any of these `src-id-N` labels, in chunks the JQL length limit allows. Pass the ids
   * of issues just written as `reconcileIssues`: the search index lags behind writes.
   */
  async findByLabels(
    projectKey: string,
    labels: string[],
    reconcileIssues: number[] = [],
  ): Promise<JiraIssue[]> {
    const found: JiraIssue[] = [];
    for (let i = 0; i < labels.length; i += LABEL_CHUNK) {
      const chunk = labels.slice(i, i + LABEL_CHUNK).map((l) => `"${l.replaceAll('"', '')}"`);
      const jql = `project = "${projectKey.replaceAll('"', '')}" AND labels IN (${chunk.join(', ')})`;
      found.push(
        ...(await this.search(jql, { fields: ['labels', 'summary', 'issuetype'], reconcileIssues })),
      );
    }
    return found;
  }

  /** How many issues the project holds. */
  async countIssues(projectKey: string): Promise<number> {
    return (await this.search(`project = "${projectKey.replaceAll('"', '')}"`, { fields: ['id'] })).length;
  }

  async transitions(key: string): Promise<JiraTransition[]> {
    const res = await this.http.request<{ transitions: JiraTransition[] }>(
      'GET',
      `/rest/api/3/issue/${encodeURIComponent(key)}/transitions`,
    );
    return res.body.transitions ?? [];
  }

  async transition(key: string, transitionId: string, fields?: Record<string, unknown>): Promise<void> {
    await this.http.request('POST', `/rest/api/3/issue/${encodeURIComponent(key)}/transitions`, {
      body: { transition: { id: transitionId }, ...(fields ? { fields } : {}) },
    });
  }

  async link(type: string, outwardKey: string, inwardKey: string): Promise<void> {
    await this.http.request('POST', '/rest/api/3/issueLink', {
      body: { type: { name: type }, outwardIssue: { key: outwardKey }, inwardIssue: { key: inwardKey } },
      notIdempotent: true,
    });
  }

  /**
   * Creates the remote link, or updates the issue's link with the same `globalId`: Jira answers 201 for a new
   * link, 200 for an update (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-remote-links/#api-rest-api-3-issue-issueidorkey-remotelink-post),
   * so the answer says whether it was there already. Safe to retry for the same reason.
   */
  async addRemoteLink(
    key: string,
    link: { url: string; title: string; globalId?: string },
  ): Promise<'created' | 'updated'> {
    const res = await this.http.request('POST', `/rest/api/3/issue/${encodeURIComponent(key)}/remotelink`, {
      body: {
        ...(link.globalId ? { globalId: link.globalId } : {}),
        object: { url: link.url, title: link.title },
      },
    });
    return res.status === 200 ? 'updated' : 'created';
  }

  /**
   * Uploads one file as multipart field `file`, streamed: `open` is called once per attempt, so a retried
   * upload reads the source again instead of holding the file in memory.
   */
  async attach(
    key: string,
    fileName: string,
    open: () => Promise<{ stream: ReadableStream<Uint8Array> | Readable; contentType?: string }>,
  ): Promise<{ id: string; filename: string; size: number }[]> {
    const [attachment] = await this.attachFiles(key, [{ fileName, open }]);
    return attachment ? [attachment] : [];
  }

  /**
   * Uploads several files to one issue in one request (Jira "Adds one or more attachments to an issue", each in
   * a multipart part named `file`; at most `MAX_FILES_PER_UPLOAD`: platform spec, `POST
   * /rest/api/3/issue/{issueIdOrKey}/attachments`). Streamed: each file is opened when the body reaches it
   * (the first before the request goes), and again on a retried attempt; a file whose `open` answers undefined
   * is left out. Answers each file's attachment in the files' order (undefined for one left out); no request
   * when every file is left out.
   */
  async attachFiles(
    key: string,
    files: UploadFile[],
  ): Promise<({ id: string; filename: string; size: number } | undefined)[]> {
    if (files.length > MAX_FILES_PER_UPLOAD)
      throw new Error(`at most ${MAX_FILES_PER_UPLOAD} files in one upload (${files.length} given)`);
    let sent: number[] = [];
    let answers: { id: string; filename: string; size: number }[];
    try {
      const res = await this.http.request<{ id: string; filename: string; size: number }[]>(
        'POST',
        `/rest/api/3/issue/${encodeURIComponent(key)}/attachments`,
        {
          headers: { 'X-Atlassian-Token': 'no-check' },
          notIdempotent: true,
          rawBody: async () => {
            sent = [];
            return multipartFiles(files, (index) => sent.push(index));
          },
        },
      );
      answers = [...res.body];
    } catch (err) {
      if (err instanceof NothingToUpload) return files.map(() => undefined);
      throw err;
    }
    // Jira answers the attachments in the parts' order; matched by name first, should it ever not.
    return files.map((file, index) => {
      if (!sent.includes(index)) return undefined;
      const at = answers.findIndex((a) => a.filename === file.fileName);
      return answers.splice(at >= 0 ? at : 0, 1)[0];
    });
  }

  /**
   * Deletes an attachment (DELETE /attachment/{id}, 204); needs Delete own (or all) attachments. `gone`: there was
   * no such file (deleted already).
   */
  async deleteAttachment(attachmentId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request(
      'DELETE',
      `/rest/api/3/attachment/${encodeURIComponent(attachmentId)}`,
      { accept: [404] },
    );
    return res.status === 404 ? 'gone' : 'deleted';
  }

  /** Whether the site takes attachments, and its upload limit in bytes (GET /attachment/meta). */
  async attachmentSettings(): Promise<{ enabled: boolean; uploadLimit: number }> {
    return (
      await this.http.request<{ enabled: boolean; uploadLimit: number }>('GET', '/rest/api/3/attachment/meta')
    ).body;
  }

  /**
   * The Media Services file id of an attachment, which ADF `media` nodes need and no attachment answer carries:
   * Jira's content endpoint redirects (303) to `.../file/<uuid>/binary?...`, and the uuid is read off that path.
   */
  async attachmentMediaId(attachmentId: string): Promise<string> {
    const res = await this.http.request(
      'GET',
      `/rest/api/3/attachment/content/${encodeURIComponent(attachmentId)}`,
      {
        manualRedirect: true,
        headers: { Accept: '*/*' },
      },
    );
    const location = res.headers.get('location') ?? '';
    const match = /\/file\/([0-9a-f-]{36})\//i.exec(location);
    if (!match?.[1]) throw new Error(`attachment ${attachmentId}: no media file id in the content redirect`);
    return match[1];
  }

  /** `urgent`: a step of a long thread the phase waits on, sent ahead of other comments (RequestKey.urgent). */
  async addComment(key: string, body: unknown, opts: { urgent?: boolean } = {}): Promise<{ id: string }> {
    return (
      await this.http.request<{ id: string }>(
        'POST',
        `/rest/api/3/issue/${encodeURIComponent(key)}/comment`,
        { body: { body }, notIdempotent: true, ...(opts.urgent ? { urgent: true } : {}) },
      )
    ).body;
  }

  async addWorklog(
    key: string,
    worklog: { started: string; timeSpentSeconds: number; comment?: unknown },
  ): Promise<{ id: string }> {
    return (
      await this.http.request<{ id: string }>(
        'POST',
        `/rest/api/3/issue/${encodeURIComponent(key)}/worklog`,
        { body: worklog, notIdempotent: true },
      )
    ).body;
  }

  /**
   * Jira's offset paging (`startAt` + `maxResults`), one page at a time. A `values` page says whether it is the
   * last (`isLast`); an older list (`comments`) gives its `total` instead. An empty page always ends it.
   */
  private async *offsetPages<T>(
    path: string,
    list: 'values' | 'comments',
    query: Record<string, string | number>,
  ): AsyncGenerator<T> {
    for (let startAt = 0; ; ) {
      const res = await this.http.request<{ values?: T[]; comments?: T[]; isLast?: boolean; total?: number }>(
        'GET',
        path,
        { query: { startAt, ...query } },
      );
      const page = res.body[list] ?? [];
      yield* page;
      startAt += page.length;
      const last = list === 'values' ? res.body.isLast !== false : startAt >= (res.body.total ?? 0);
      if (last || page.length === 0) return;
    }
  }

  /** Every comment of an issue, oldest first, a page at a time: a long thread never sits in memory whole. */
  async *comments(key: string): AsyncGenerator<JiraComment> {
    yield* this.offsetPages<JiraComment>(`/rest/api/3/issue/${encodeURIComponent(key)}/comment`, 'comments', {
      maxResults: COMMENT_PAGE,
      orderBy: 'created',
    });
  }

  /** Deletes a comment of the issue (204); `gone`: no such comment, or no such issue. */
  async deleteComment(key: string, commentId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request(
      'DELETE',
      `/rest/api/3/issue/${encodeURIComponent(key)}/comment/${encodeURIComponent(commentId)}`,
      { accept: [404] },
    );
    return res.status === 404 ? 'gone' : 'deleted';
  }

  /** Every worklog of an issue, a page at a time. */
  async *worklogs(key: string): AsyncGenerator<JiraWorklog> {
    for (let startAt = 0; ; ) {
      const res = await this.http.request<{ worklogs?: JiraWorklog[]; total?: number }>(
        'GET',
        `/rest/api/3/issue/${encodeURIComponent(key)}/worklog`,
        { query: { startAt, maxResults: WORKLOG_PAGE } },
      );
      const page = res.body.worklogs ?? [];
      yield* page;
      startAt += page.length;
      if (page.length === 0 || startAt >= (res.body.total ?? 0)) return;
    }
  }

  /**
   * Deletes a worklog of the issue leaving the remaining estimate alone (`adjustEstimate=leave`, as the plugins
   * posted it); `gone`: no such worklog, or no such issue.
   */
  async deleteWorklog(key: string, worklogId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request(
      'DELETE',
      `/rest/api/3/issue/${encodeURIComponent(key)}/worklog/${encodeURIComponent(worklogId)}`,
      { query: { adjustEstimate: 'leave' }, accept: [404] },
    );
    return res.status === 404 ? 'gone' : 'deleted';
  }

  /** Deletes an issue link by its id (DELETE /issueLink/{linkId}); `gone`: no such link. */
  async deleteIssueLink(linkId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', `/rest/api/3/issueLink/${encodeURIComponent(linkId)}`, {
      accept: [404],
    });
    return res.status === 404 ? 'gone' : 'deleted';
  }

  /** Deletes the issue's remote link with this `globalId` (DELETE .../remotelink?globalId=); `gone`: none. */
  async deleteRemoteLink(key: string, globalId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', `/rest/api/3/issue/${encodeURIComponent(key)}/remotelink`, {
      query: { globalId },
      accept: [404],
    });
    return res.status === 404 ? 'gone' : 'deleted';
  }

  /** The issue's change history, oldest first, a page at a time. */
  async *changelog(key: string): AsyncGenerator<JiraChangelog> {
    yield* this.offsetPages<JiraChangelog>(
      `/rest/api/3/issue/${encodeURIComponent(key)}/changelog`,
      'values',
      {
        maxResults: CHANGELOG_PAGE,
      },
    );
  }

  /** An issue's remote links; Jira answers them all at once (it does not page them). */
  async remoteLinks(key: string): Promise<JiraRemoteLink[]> {
    const res = await this.http.request<JiraRemoteLink[]>(
      'GET',
      `/rest/api/3/issue/${encodeURIComponent(key)}/remotelink`,
    );
    return Array.isArray(res.body) ? res.body : [];
  }

  /**
   * The priorities issues of the project can take (its priority scheme), page by page
   * (`GET /priority/search?projectId=`). A site that does not serve the search (404) answers the site's whole
   * list from the older `GET /priority`.
   */
  async priorities(projectId?: string): Promise<JiraPriority[]> {
    try {
      return await collect(
        this.offsetPages<JiraPriority>('/rest/api/3/priority/search', 'values', {
          maxResults: PRIORITY_PAGE,
          ...(projectId ? { projectId } : {}),
        }),
      );
    } catch (err) {
      if (!(err instanceof TrackerHttpError) || err.status !== 404) throw err;
      const res = await this.http.request<JiraPriority[]>('GET', '/rest/api/3/priority');
      return Array.isArray(res.body) ? res.body : [];
    }
  }

  /** The site's resolutions, page by page (GET /resolution, unpaged, is deprecated). */
  async resolutions(): Promise<JiraResolution[]> {
    return collect(
      this.offsetPages<JiraResolution>('/rest/api/3/resolution/search', 'values', {
        maxResults: RESOLUTION_PAGE,
      }),
    );
  }

  /**
   * Links two issues, "`inwardKey` <the type's outward phrase> `outwardKey`" (`{inwardKey: A, outwardKey: B}`
   * reads "A blocks B"), with an optional ADF comment in the same request: the link and its comment land
   * together or not at all, so a retried write never adds the comment twice.
   */
  async createIssueLink(link: {
    type: string;
    inwardKey: string;
    outwardKey: string;
    comment?: unknown;
  }): Promise<void> {
    await this.http.request('POST', '/rest/api/3/issueLink', {
      body: {
        type: { name: link.type },
        inwardIssue: { key: link.inwardKey },
        outwardIssue: { key: link.outwardKey },
        ...(link.comment !== undefined ? { comment: { body: link.comment } } : {}),
      },
      notIdempotent: true,
    });
  }

  async components(projectKey: string): Promise<{ id: string; name: string }[]> {
    return (
      await this.http.request<{ id: string; name: string }[]>(
        'GET',
        `/rest/api/3/project/${encodeURIComponent(projectKey)}/components`,
      )
    ).body;
  }

  async createComponent(
    projectKey: string,
    name: string,
    description?: string,
  ): Promise<{ id: string; name: string }> {
    return (
      await this.http.request<{ id: string; name: string }>('POST', '/rest/api/3/component', {
        body: { project: projectKey, name, description },
      })
    ).body;
  }

  /** How many issues hold the component; undefined: no such component (deleted). */
  async componentIssueCount(id: string): Promise<number | undefined> {
    const res = await this.http.request<{ issueCount?: number }>(
      'GET',
      `/rest/api/3/component/${encodeURIComponent(id)}/relatedIssueCounts`,
      { accept: [404] },
    );
    return res.status === 404 ? undefined : (res.body.issueCount ?? 0);
  }

  /** Deletes a component (its issues lose it); 'gone': it was not there (deleted before). */
  async deleteComponent(id: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', `/rest/api/3/component/${encodeURIComponent(id)}`, {
      accept: [404],
    });
    return res.status === 404 ? 'gone' : 'deleted';
  }

  async boards(projectKey: string): Promise<{ id: number; name: string; type: string }[]> {
    const res = await this.http.request<{ values: { id: number; name: string; type: string }[] }>(
      'GET',
      '/rest/agile/1.0/board',
      {
        query: { projectKeyOrId: projectKey },
      },
    );
    return res.body.values ?? [];
  }

  async sprints(boardId: number): Promise<JiraSprint[]> {
    return collect(
      this.offsetPages<JiraSprint>(`/rest/agile/1.0/board/${boardId}/sprint`, 'values', { maxResults: 50 }),
    );
  }

  async createSprint(sprint: {
    name: string;
    originBoardId: number;
    startDate?: string;
    endDate?: string;
    goal?: string;
  }): Promise<JiraSprint> {
    // Jira allows two sprints of one name: a blind retry after a lost answer could make a second one.
    return (
      await this.http.request<JiraSprint>('POST', '/rest/agile/1.0/sprint', {
        body: sprint,
        notIdempotent: true,
      })
    ).body;
  }

  /** The keys of the sprint's issues, a page at a time; undefined: no such sprint (deleted). */
  async sprintIssueKeys(id: number): Promise<string[] | undefined> {
    const keys: string[] = [];
    for (let startAt = 0; ; ) {
      const res = await this.http.request<{ issues?: { key: string }[]; total?: number }>(
        'GET',
        `/rest/agile/1.0/sprint/${id}/issue`,
        { query: { startAt, maxResults: 50, fields: 'summary' }, accept: [404] },
      );
      if (res.status === 404) return undefined;
      const page = res.body.issues ?? [];
      keys.push(...page.map((i) => i.key));
      startAt += page.length;
      if (page.length === 0 || startAt >= (res.body.total ?? 0)) return keys;
    }
  }

  /** Deletes a sprint (Jira moves its open issues to the backlog); 'gone': it was not there (deleted before). */
  async deleteSprint(id: number): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', `/rest/agile/1.0/sprint/${id}`, { accept: [404] });
    return res.status === 404 ? 'gone' : 'deleted';
  }

  async sprint(id: number): Promise<JiraSprint> {
    return (await this.http.request<JiraSprint>('GET', `/rest/agile/1.0/sprint/${id}`)).body;
  }

  async updateSprint(
    id: number,
    patch: Partial<Pick<JiraSprint, 'state' | 'startDate' | 'endDate' | 'name'>>,
  ): Promise<JiraSprint> {
    return (await this.http.request<JiraSprint>('POST', `/rest/agile/1.0/sprint/${id}`, { body: patch }))
      .body;
  }

  /** Moves at most 50 issues into an open or active sprint. */
  async moveToSprint(sprintId: number, issueKeys: string[]): Promise<void> {
    if (issueKeys.length > SPRINT_ASSIGN_MAX)
      throw new RangeError(`a sprint takes at most ${SPRINT_ASSIGN_MAX} issues a call`);
    await this.http.request('POST', `/rest/agile/1.0/sprint/${sprintId}/issue`, {
      body: { issues: issueKeys },
    });
  }

  async moveToEpic(epicKey: string, issueKeys: string[]): Promise<void> {
    await this.http.request('POST', `/rest/agile/1.0/epic/${encodeURIComponent(epicKey)}/issue`, {
      body: { issues: issueKeys },
    });
  }
}

/** A multipart/form-data body with one file part, as a stream (the file is never buffered whole). */
/** The most files one upload takes: the platform spec's 413 "more than 60 files are requested to be uploaded". */
export const MAX_FILES_PER_UPLOAD = 60;

/** A file of a multipart upload: `open` answers its bytes when the body reaches it, or undefined to leave it out. */
export interface UploadFile {
  fileName: string;
  open: () => Promise<{ stream: ReadableStream<Uint8Array> | Readable; contentType?: string } | undefined>;
}

/** Every file of an upload was left out: no request goes. */
class NothingToUpload extends Error {}

/**
 * A multipart/form-data body of the files, each in a part named `file`, streamed: the first file to send is
 * opened now (none: NothingToUpload), each other one when the body reaches it; `onSent` is told each file put in.
 */
async function multipartFiles(
  files: UploadFile[],
  onSent: (index: number) => void,
): Promise<{ body: ReadableStream<Uint8Array>; headers: Record<string, string> }> {
  const boundary = `----tms${randomBytes(12).toString('hex')}`;
  const head = (fileName: string, contentType: string) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName.replace(/["\r\n\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(fileName)}\r\nContent-Type: ${contentType}\r\n\r\n`,
    );
  type Opened = NonNullable<Awaited<ReturnType<UploadFile['open']>>>;
  let next = 0;
  const openNext = async (): Promise<{ index: number; opened: Opened } | undefined> => {
    while (next < files.length) {
      const index = next++;
      const opened = await (files[index] as UploadFile).open();
      if (opened) return { index, opened };
    }
    return undefined;
  };
  const first = await openNext();
  if (!first) throw new NothingToUpload();
  async function* parts() {
    for (let part: typeof first = first; part; part = await openNext()) {
      const { index, opened } = part;
      onSent(index);
      yield head((files[index] as UploadFile).fileName, opened.contentType ?? 'application/octet-stream');
      const source =
        opened.stream instanceof Readable
          ? opened.stream
          : Readable.fromWeb(opened.stream as import('node:stream/web').ReadableStream<Uint8Array>);
      for await (const chunk of source) yield chunk as Uint8Array;
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return {
    body: Readable.toWeb(Readable.from(parts())) as unknown as ReadableStream<Uint8Array>,
    headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** Every item of an async sequence, in order (Array.fromAsync needs Node 22). */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
