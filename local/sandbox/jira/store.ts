/**
 * The Jira sandbox's state: one site with its software projects (the configured one first, then any others:
 * each with its key, its own issue numbering, components and Scrum board; the site's workflows, fields and
 * limits are shared, as on a real site), its users and accounts, issues with their comments, worklogs,
 * attachments and links, sprints on the boards, and the search index's view of the issues. `seed` rebuilds
 * the start state (reset and seed call it).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxPeople } from '../common/people.ts';
import {
  DEFAULT_PRIORITY_ID,
  DEFAULT_STATUSES,
  defaultWorkflow,
  ISSUE_TYPES,
  type IssueTypeDef,
  PRIORITIES,
  type PriorityDef,
  type StatusDef,
  type WorkflowDef,
} from './catalog.ts';

export interface JiraUser {
  accountId: string;
  displayName: string;
  email: string;
  active: boolean;
}

export interface Account {
  email: string;
  apiToken: string;
  accountId: string;
  projectAdmin: boolean;
  /**
   * A Jira administrator of the site (the "Administer Jira" global permission): the only accounts the JSON
   * importer's stand-in (importer.ts) lets in. The service account is not one.
   */
  siteAdmin: boolean;
}

export interface ComponentRec {
  id: string;
  /** Jira's components belong to one project. */
  projectId: string;
  name: string;
  description?: string;
  leadAccountId?: string;
  assigneeType: 'PROJECT_DEFAULT' | 'COMPONENT_LEAD' | 'PROJECT_LEAD' | 'UNASSIGNED';
}

export interface CommentRec {
  id: string;
  authorId: string;
  body: unknown;
  created: number;
  updated: number;
  visibility?: Record<string, unknown>;
}

export interface WorklogRec {
  id: string;
  authorId: string;
  comment?: unknown;
  started: number;
  timeSpentSeconds: number;
  created: number;
  updated: number;
}

/** One change item of a changelog entry, as Jira keeps it (values as strings; null for none). */
export interface ChangeItemRec {
  field: string;
  /** `jira` for a system field, `custom` for a custom field. */
  fieldtype: string;
  /** The field's id when the site knows it (`status`, `components`, `customfield_10016`). */
  fieldId?: string;
  from: string | null;
  fromString: string | null;
  to: string | null;
  toString: string | null;
}

/** One changelog entry (a history group): who changed what, when. */
export interface ChangelogRec {
  id: string;
  /** Absent for a change without a known author (Jira answers no `author` then). */
  authorId: string | null;
  created: number;
  items: ChangeItemRec[];
}

/** A project version (`affectedVersions` / `fixedVersions`), as the importer creates them. */
export interface VersionRec {
  id: string;
  projectId: string;
  name: string;
  released: boolean;
  releaseDate?: number;
}

/** One upload to the JSON importer's stand-in (importer.ts) and how far it got. */
export interface ImportJobRec {
  id: string;
  /** `running` while issues are being created; `finished` when every issue of the file is in. */
  status: 'running' | 'finished';
  /** The admin who uploaded the file. */
  accountId: string;
  total: number;
  /** Issues created so far, in the file's order, with the key each got. */
  issues: { externalId: string; id: string; key: string }[];
  /** What the import could not do while running (an attachment it could not download ...). */
  errors: string[];
  /** What it did differently from the file (a custom field the site does not have ...). */
  warnings: string[];
  /** What it created that the site did not have. */
  createdComponents: string[];
  createdVersions: string[];
  started: number;
  finished?: number;
}

export interface RemoteLinkRec {
  id: number;
  globalId?: string;
  application?: Record<string, unknown>;
  relationship?: string;
  object: Record<string, unknown>;
}

export interface AttachmentRec {
  id: string;
  issueId: number;
  filename: string;
  mimeType: string;
  size: number;
  created: number;
  authorId: string;
  /** Where the bytes are on disk (uploads are streamed there, never held in memory). */
  path: string;
  /** The Media Services file id an ADF `media` node refers to. */
  mediaId: string;
}

export interface IssueLinkRec {
  id: string;
  typeId: string;
  /** Jira's naming: the link `{inwardIssue: A, outwardIssue: B}` reads "A <outward> B" (A blocks B). */
  inwardId: number;
  outwardId: number;
}

export interface SprintRec {
  id: number;
  name: string;
  state: 'future' | 'active' | 'closed';
  startDate?: string;
  endDate?: string;
  completeDate?: string;
  createdDate: string;
  originBoardId: number;
  goal?: string;
}

export interface BoardRec {
  id: number;
  name: string;
  type: 'scrum';
  /** The project the board's filter selects (its `location`). */
  projectId: string;
}

export interface TimeTracking {
  originalSeconds?: number;
  remainingSeconds?: number;
  spentSeconds: number;
}

export interface IssueRec {
  id: number;
  key: string;
  projectId: string;
  issueTypeId: string;
  summary: string;
  description: unknown;
  statusId: string;
  resolutionId: string | null;
  resolutionDate: number | null;
  statusCategoryChanged: number;
  priorityId: string;
  labels: string[];
  assigneeId: string | null;
  reporterId: string | null;
  creatorId: string;
  created: number;
  updated: number;
  duedate: string | null;
  componentIds: string[];
  parentId: number | null;
  /** Every sprint the issue has been in, oldest first (closed ones stay, as in Jira's Sprint field). */
  sprintIds: number[];
  custom: Record<string, unknown>;
  timetracking: TimeTracking;
  attachmentIds: string[];
  comments: CommentRec[];
  worklogs: WorklogRec[];
  remoteLinks: RemoteLinkRec[];
  /** The issue's change history, oldest first: what the JSON importer brought (REST writes add none). */
  changelog: ChangelogRec[];
  /** Affected and fix version ids (set by an import only: the REST API's version fields are not emulated). */
  versionIds?: { affected: string[]; fixed: string[] };
  /** The search index's copies of the issue, one per write, oldest first (see `indexedEntry`). */
  index: IndexEntry[];
  /** Set on an index copy only: the issue links as that write left them (a live issue reads the store's). */
  indexedLinks?: IssueLinkRec[];
}

/** One write as the search index receives it: visible to JQL from `dueAt` on. */
export interface IndexEntry {
  at: number;
  dueAt: number;
  doc: IndexDoc;
  /** The issue as this write left it: what a search answers for it until a later write is due. */
  issue: IssueRec;
}

/** What JQL can see of an issue: the values at the time of one write. */
export interface IndexDoc {
  id: number;
  key: string;
  projectKey: string;
  issueType: string;
  status: string;
  labels: string[];
  parentKey: string | null;
  sprintIds: number[];
  summary: string;
  assigneeId: string | null;
  reporterId: string | null;
  created: number;
  updated: number;
}

export interface Limits {
  /**
   * Largest single attachment, in bytes: Jira Cloud's default, 1 GB a file (2 GB at most; Atlassian, "Configure
   * file attachments", docs/sandboxes.md). Tests that need a refusal set a small one (PUT /_sandbox/jira/limits).
   */
  attachmentMaxBytes: number;
  /**
   * Most files in one upload request: 60, as the platform spec's 413 of `POST
   * /rest/api/3/issue/{issueIdOrKey}/attachments` says ("more than 60 files are requested to be uploaded",
   * ../shared/specs/jira/jira-platform-v3.swagger-v3.v3.json); tests set fewer to see the refusal.
   */
  maxFilesPerUpload: number;
}

export const DEFAULT_LIMITS: Limits = { attachmentMaxBytes: 1024 ** 3, maxFilesPerUpload: 60 };

const stableHex = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/** A UUID-shaped id that is stable for the seed (Media Services ids are UUIDs). */
export function stableUuid(text: string): string {
  const h = stableHex(text, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface ProjectInfo {
  id: string;
  key: string;
  name: string;
  leadAccountId: string;
}

/** The site's projects: the configured project first (id 10000, board 1), then `otherProjectKeys` in order. */
export interface SiteProjectsConfig {
  projectKey: string;
  otherProjectKeys?: readonly string[];
}

export class JiraStore {
  readonly projectKey: string;
  seedValue = 0;
  /** The configured project (the first of `projects`). */
  project!: ProjectInfo;
  /** Every project of the site, by id. */
  projects = new Map<string, ProjectInfo>();
  users = new Map<string, JiraUser>();
  accounts = new Map<string, Account>();
  serviceAccountId = '';
  statuses = new Map<string, StatusDef>();
  workflows = new Map<string, WorkflowDef>();
  issues = new Map<number, IssueRec>();
  issuesByKey = new Map<string, IssueRec>();
  components = new Map<string, ComponentRec>();
  links = new Map<string, IssueLinkRec>();
  /** Project versions by id (created by imports). */
  versions = new Map<string, VersionRec>();
  /** The JSON importer's jobs by id (importer.ts); `importEpoch` changes on every reset, which stops running ones. */
  importJobs = new Map<string, ImportJobRec>();
  importEpoch = 0;
  /** Link ids by the issues at either end, and child issue ids by parent: issue fields read them per issue. */
  private linksByIssue = new Map<number, Set<string>>();
  private childrenByParent = new Map<number, Set<number>>();
  private attachmentsByMediaId = new Map<string, string>();
  attachments = new Map<string, AttachmentRec>();
  sprints = new Map<number, SprintRec>();
  boards = new Map<number, BoardRec>();
  limits: Limits = { ...DEFAULT_LIMITS };
  /**
   * The site's priorities (Jira's defaults unless PUT /_sandbox/jira/priorities set others) and the one new
   * issues get. Issues keep the id they have when the list changes.
   */
  priorities: PriorityDef[] = PRIORITIES.map((p) => ({ ...p }));
  defaultPriorityId = DEFAULT_PRIORITY_ID;
  /** Site-wide agile settings (PUT /_sandbox/jira/agile): parallel sprints are off by default, as in Jira. */
  agile = { parallelSprints: false };
  /** Test control: creates of issues carrying one of these labels are refused, as a create validator would. */
  createRefusals: { labels: Set<string>; message: string } = { labels: new Set(), message: '' };
  /** A per-seed secret that signs the media tokens in attachment redirects. */
  mediaSecret = '';
  /** The index lag applied to a write (the `searchLagMs` fault setting), read at write time. */
  searchLag: () => number = () => 0;
  private counters: Record<string, number> = {};
  /** Jira numbers issues per project: MIG-1 and ALPHA-1 are both first issues. */
  private nextIssueNumber = new Map<string, number>();
  private attachmentDirPath: string | undefined;

  constructor(
    private readonly config: { email: string; apiToken: string } & SiteProjectsConfig,
    readonly now: () => number = Date.now,
  ) {
    this.projectKey = config.projectKey;
  }

  seed(seed: number): void {
    this.seedValue = seed;
    this.users.clear();
    this.accounts.clear();
    this.issues.clear();
    this.issuesByKey.clear();
    this.components.clear();
    this.links.clear();
    this.versions.clear();
    this.importJobs.clear();
    this.importEpoch += 1;
    this.linksByIssue.clear();
    this.childrenByParent.clear();
    this.attachments.clear();
    this.attachmentsByMediaId.clear();
    this.sprints.clear();
    this.boards.clear();
    this.statuses.clear();
    this.workflows.clear();
    this.limits = { ...DEFAULT_LIMITS };
    this.priorities = PRIORITIES.map((p) => ({ ...p }));
    this.defaultPriorityId = DEFAULT_PRIORITY_ID;
    this.agile = { parallelSprints: false };
    this.createRefusals = { labels: new Set(), message: '' };
    this.counters = {};
    this.nextIssueNumber.clear();
    this.projects.clear();
    this.mediaSecret = stableHex(`media-secret:${seed}:${this.config.apiToken}`, 32);
    this.removeAttachmentFiles();

    for (const person of sandboxPeople(seed)) {
      if (person.on === 'ado') continue;
      this.users.set(person.jiraAccountId, {
        accountId: person.jiraAccountId,
        displayName: person.displayName,
        email: person.email,
        active: true,
      });
    }
    const service = this.upsertAccount({
      email: this.config.email,
      apiToken: this.config.apiToken,
      projectAdmin: true,
      siteAdmin: false,
      displayName: 'Migration Service',
    });
    this.serviceAccountId = service.accountId;
    const keys = [this.projectKey, ...(this.config.otherProjectKeys ?? [])];
    keys.forEach((key, i) => {
      const project = {
        id: String(10000 + i),
        key,
        name: `${key} Migration Target`,
        leadAccountId: service.accountId,
      };
      this.projects.set(project.id, project);
      this.boards.set(i + 1, { id: i + 1, name: `${key} board`, type: 'scrum', projectId: project.id });
    });
    this.project = this.projects.get('10000') as ProjectInfo;
    for (const s of DEFAULT_STATUSES) this.statuses.set(s.id, { ...s });
    for (const t of ISSUE_TYPES) this.workflows.set(t.id, defaultWorkflow(t.name));
  }

  /** Creates or updates an API account (and its Jira user); the accountId is stable for the e-mail. */
  upsertAccount(input: {
    email: string;
    apiToken: string;
    projectAdmin: boolean;
    siteAdmin?: boolean;
    displayName?: string;
  }): Account {
    const email = input.email.toLowerCase();
    const existingUser = [...this.users.values()].find((u) => u.email.toLowerCase() === email);
    const accountId =
      existingUser?.accountId ?? `5f${stableHex(`jira-account:${this.seedValue}:${email}`, 22)}`;
    if (!existingUser) {
      this.users.set(accountId, {
        accountId,
        displayName: input.displayName ?? input.email.split('@')[0] ?? input.email,
        email: input.email,
        active: true,
      });
    } else if (input.displayName) {
      existingUser.displayName = input.displayName;
    }
    const account = {
      email: input.email,
      apiToken: input.apiToken,
      accountId,
      projectAdmin: input.projectAdmin,
      siteAdmin: input.siteAdmin ?? false,
    };
    this.accounts.set(email, account);
    return account;
  }

  nextId(kind: string, start = 10000): number {
    const value = this.counters[kind] ?? start;
    this.counters[kind] = value + 1;
    return value;
  }

  /** A new issue's id (site-wide) and key (numbered within its project). */
  allocateIssueKey(project: ProjectInfo = this.project): { id: number; key: string } {
    const n = this.nextIssueNumber.get(project.id) ?? 1;
    this.nextIssueNumber.set(project.id, n + 1);
    return { id: this.nextId('issue'), key: `${project.key}-${n}` };
  }

  issueByIdOrKey(idOrKey: string): IssueRec | undefined {
    if (/^\d+$/.test(idOrKey)) return this.issues.get(Number(idOrKey));
    return this.issuesByKey.get(idOrKey.toUpperCase());
  }

  addIssue(issue: IssueRec): void {
    this.issues.set(issue.id, issue);
    this.issuesByKey.set(issue.key.toUpperCase(), issue);
    this.reindex(issue, false);
  }

  addLink(link: IssueLinkRec): void {
    this.links.set(link.id, link);
    for (const issueId of [link.inwardId, link.outwardId]) {
      const ids = this.linksByIssue.get(issueId) ?? new Set<string>();
      ids.add(link.id);
      this.linksByIssue.set(issueId, ids);
    }
  }

  /** Deletes one issue link (both its issues' `issuelinks` lose it). */
  removeLink(link: IssueLinkRec): void {
    this.links.delete(link.id);
    for (const issueId of [link.inwardId, link.outwardId]) this.linksByIssue.get(issueId)?.delete(link.id);
  }

  linksOf(issueId: number): IssueLinkRec[] {
    return [...(this.linksByIssue.get(issueId) ?? [])].flatMap((id) => this.links.get(id) ?? []);
  }

  setParent(issue: IssueRec, parentId: number | null): void {
    if (issue.parentId !== null) this.childrenByParent.get(issue.parentId)?.delete(issue.id);
    issue.parentId = parentId;
    if (parentId === null) return;
    const children = this.childrenByParent.get(parentId) ?? new Set<number>();
    children.add(issue.id);
    this.childrenByParent.set(parentId, children);
  }

  childrenOf(issueId: number): IssueRec[] {
    return [...(this.childrenByParent.get(issueId) ?? [])].flatMap((id) => this.issues.get(id) ?? []);
  }

  addAttachment(a: AttachmentRec): void {
    this.attachments.set(a.id, a);
    this.attachmentsByMediaId.set(a.mediaId, a.id);
  }

  /** Removes one attachment: from its issue, the lookups and the disk. */
  removeAttachment(a: AttachmentRec): void {
    this.attachments.delete(a.id);
    this.attachmentsByMediaId.delete(a.mediaId);
    const issue = this.issues.get(a.issueId);
    if (issue) issue.attachmentIds = issue.attachmentIds.filter((id) => id !== a.id);
    rmSync(a.path, { force: true });
  }

  attachmentByMediaId(mediaId: string): AttachmentRec | undefined {
    const id = this.attachmentsByMediaId.get(mediaId);
    return id === undefined ? undefined : this.attachments.get(id);
  }

  issueType(idOrName: { id?: unknown; name?: unknown }): IssueTypeDef | undefined {
    if (idOrName.id !== undefined) return ISSUE_TYPES.find((t) => t.id === String(idOrName.id));
    if (typeof idOrName.name === 'string') {
      const name = idOrName.name.toLowerCase();
      return ISSUE_TYPES.find((t) => t.name.toLowerCase() === name);
    }
    return undefined;
  }

  issueTypeOf(issue: IssueRec): IssueTypeDef {
    return ISSUE_TYPES.find((t) => t.id === issue.issueTypeId) ?? (ISSUE_TYPES[0] as IssueTypeDef);
  }

  statusOf(issue: IssueRec): StatusDef {
    return this.statuses.get(issue.statusId) ?? { id: issue.statusId, name: 'Unknown', category: 'new' };
  }

  workflowOf(issue: IssueRec): WorkflowDef {
    return this.workflows.get(issue.issueTypeId) ?? defaultWorkflow('Task');
  }

  /** The project with this id or key (keys in any case, as Jira reads them), if the site has it. */
  projectOf(idOrKey: string): ProjectInfo | undefined {
    const byId = this.projects.get(idOrKey);
    if (byId) return byId;
    const key = idOrKey.toUpperCase();
    return [...this.projects.values()].find((p) => p.key === key);
  }

  projectMatches(idOrKey: string): boolean {
    return this.projectOf(idOrKey) !== undefined;
  }

  /** The project an issue, component or board belongs to. */
  projectById(id: string): ProjectInfo {
    return this.projects.get(id) ?? this.project;
  }

  /** The project's components, in the order they were created. */
  componentsOf(projectId: string): ComponentRec[] {
    return [...this.components.values()].filter((c) => c.projectId === projectId);
  }

  /** Records a write: bumps `updated` and queues the new values for the search index. */
  touch(issue: IssueRec): void {
    issue.updated = Math.max(this.now(), issue.updated);
    this.reindex(issue, true);
  }

  /**
   * Queues the issue's current values for the search index without counting a write (`updated` stays): what an
   * import does after it linked the issues it created.
   */
  refreshIndex(issue: IssueRec): void {
    this.reindex(issue, true);
  }

  private reindex(issue: IssueRec, prune: boolean): void {
    const at = this.now();
    issue.index.push({
      at,
      dueAt: at + this.searchLag(),
      doc: this.indexDoc(issue),
      issue: this.indexCopy(issue),
    });
    if (prune) this.prune(issue, at);
  }

  /** The issue as it is now, its lists and nested values copied so that later writes do not show through. */
  private indexCopy(issue: IssueRec): IssueRec {
    return {
      ...issue,
      labels: [...issue.labels],
      componentIds: [...issue.componentIds],
      sprintIds: [...issue.sprintIds],
      custom: { ...issue.custom },
      timetracking: { ...issue.timetracking },
      attachmentIds: [...issue.attachmentIds],
      comments: [...issue.comments],
      worklogs: [...issue.worklogs],
      remoteLinks: [...issue.remoteLinks],
      changelog: [...issue.changelog],
      index: [],
      indexedLinks: this.linksOf(issue.id),
    };
  }

  /** Drops copies older than the newest one the index already shows: they can never be read again. */
  private prune(issue: IssueRec, now: number): void {
    for (let i = issue.index.length - 1; i > 0; i--) {
      if ((issue.index[i]?.dueAt ?? Number.POSITIVE_INFINITY) <= now) {
        issue.index.splice(0, i);
        return;
      }
    }
  }

  /**
   * The lag setting was changed: pending writes become due no later than the new lag allows (a lower lag
   * lets the index catch up); writes already visible stay visible when the lag is raised.
   */
  catchUp(lagMs: number): void {
    for (const issue of this.issues.values()) {
      for (const entry of issue.index) entry.dueAt = Math.min(entry.dueAt, entry.at + lagMs);
    }
  }

  indexDoc(issue: IssueRec): IndexDoc {
    return {
      id: issue.id,
      key: issue.key,
      projectKey: this.projectById(issue.projectId).key,
      issueType: this.issueTypeOf(issue).name,
      status: this.statusOf(issue).name,
      labels: [...issue.labels],
      parentKey: issue.parentId === null ? null : (this.issues.get(issue.parentId)?.key ?? null),
      sprintIds: [...issue.sprintIds],
      summary: issue.summary,
      assigneeId: issue.assigneeId,
      reporterId: issue.reporterId,
      created: issue.created,
      updated: issue.updated,
    };
  }

  /**
   * The index's view of an issue: its values as of the newest write that is due, or undefined when even the
   * creation has not reached the index yet.
   */
  indexedView(issue: IssueRec): IndexDoc | undefined {
    return this.indexedEntry(issue)?.doc;
  }

  /** The newest write of the issue the index shows (what JQL matches and what a search answers), if any. */
  indexedEntry(issue: IssueRec): IndexEntry | undefined {
    const now = this.now();
    for (let i = issue.index.length - 1; i >= 0; i--) {
      const entry = issue.index[i];
      if (entry && entry.dueAt <= now) return entry;
    }
    return undefined;
  }

  /**
   * Deletes one issue: gone from reads and search, with its links and attachments. Its children are the
   * caller's (sub-tasks deleted first, others left without a parent). Answers the issues at the other end of
   * its links, whose `issuelinks` changed.
   */
  removeIssue(issue: IssueRec): IssueRec[] {
    this.issues.delete(issue.id);
    this.issuesByKey.delete(issue.key.toUpperCase());
    const others = new Map<number, IssueRec>();
    for (const link of this.linksOf(issue.id)) {
      this.links.delete(link.id);
      const otherId = link.inwardId === issue.id ? link.outwardId : link.inwardId;
      this.linksByIssue.get(otherId)?.delete(link.id);
      const other = this.issues.get(otherId);
      if (other) others.set(other.id, other);
    }
    this.linksByIssue.delete(issue.id);
    if (issue.parentId !== null) this.childrenByParent.get(issue.parentId)?.delete(issue.id);
    this.childrenByParent.delete(issue.id);
    for (const id of issue.attachmentIds) {
      const a = this.attachments.get(id);
      if (!a) continue;
      this.attachments.delete(id);
      this.attachmentsByMediaId.delete(a.mediaId);
      rmSync(a.path, { force: true });
    }
    return [...others.values()];
  }

  attachmentDir(): string {
    this.attachmentDirPath ??= mkdtempSync(join(tmpdir(), 'jira-sandbox-attachments-'));
    return this.attachmentDirPath;
  }

  removeAttachmentFiles(): void {
    if (!this.attachmentDirPath) return;
    rmSync(this.attachmentDirPath, { recursive: true, force: true });
    this.attachmentDirPath = undefined;
  }
}
