/**
 * Jira's JSON importer (Jira settings > System > External System Import > JSON), which Jira Cloud offers in its
 * UI only, with no REST endpoint: the sandbox's stand-in is an upload route for a Jira administrator
 * (Atlassian, "Import data from JSON", support.atlassian.com/jira-cloud-administration/docs/import-data-from-json/;
 * the file's format: functions/domain/jira-import/format.ts). docs/sandboxes.md, "The JSON importer".
 *
 *   POST /_sandbox/jira/import/json        the file (its JSON, `application/json` or `text/plain`), Basic auth as a
 *                                          site admin account: 202 {id, status, total, self}, or 400 with every
 *                                          problem found and nothing created; 401 / 403 for others
 *   GET  /_sandbox/jira/import/json/{id}   the job: status (running, finished), the issues created so far with the
 *                                          key each externalId got, errors and warnings (same auth)
 *   GET|PUT /_sandbox/jira/importer        {msPerIssue}: the pace (0 with the `off` profile; 2,400 with
 *                                          `realistic`: Atlassian's estimate, 1,500 issues in about an hour)
 *
 * The file is checked whole before anything is created: the format (the schema), then what the site must have
 * (projects, issue types, statuses in the type's workflow, priorities, resolutions, link types, users, text
 * within Jira's limit, sub-tasks with their parent). Then a job creates the issues one by one in the file's order
 * (keys follow it) with their dates, people, comments, history (the changelog), worklogs and attachments (each
 * `uri` fetched, from the local service only, and attached with its attacher and date before the text is
 * converted, so `!name!` shows the file),
 * creating the components and versions the project lacks, and links them at the end (`sub-task-link` sets
 * the parent). Importing a file twice creates its issues twice, as Jira's importer does.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  type ImportFile,
  ImportFileSchema,
  type ImportIssue,
  SUB_TASK_LINK,
} from '../../../functions/domain/jira-import/format.ts';
import type { SandboxProfile } from '../common/limits/install.ts';
import { basicCredentials } from '../common/sandbox-app.ts';
import { TEXT_LIMIT } from './adf.ts';
import { FIELDS, LINK_TYPES, RESOLUTIONS } from './catalog.ts';
import { sendError } from './errors.ts';
import { baseUrl } from './render.ts';
import {
  type Account,
  type ChangelogRec,
  type ComponentRec,
  type ImportJobRec,
  type IssueRec,
  type JiraStore,
  type ProjectInfo,
  stableUuid,
  type VersionRec,
} from './store.ts';
import { jiraDateTime, parseJiraStarted } from './time.ts';
import { type WikiContext, wikiToAdf } from './wiki.ts';

/** Atlassian's estimate: about an hour for the recommended 1,500 issues a file. */
export const REALISTIC_MS_PER_ISSUE = 2400;

const SettingsSchema = z.strictObject({ msPerIssue: z.number().int().min(0).max(60_000) });
type Settings = z.infer<typeof SettingsSchema>;

const UNAUTHENTICATED = 'Client must be authenticated to access this resource.';
export const NOT_A_JIRA_ADMIN =
  'You must be a Jira administrator to import data: External System Import is for the Administer Jira global permission only.';

/** The local service's addresses, the only place the sandbox's importer fetches an attachment from. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const nextTick = () => new Promise<void>((r) => setImmediate(r));
const lower = (s: string) => s.toLowerCase();

/** An importer date (`2012-08-31T17:59:02.161+0100`) as epoch ms; the schema has already checked the form. */
const dateOf = (value: string | undefined): number | undefined =>
  value === undefined ? undefined : parseJiraStarted(value);

// Jira's default time tracking: a working day of 8 hours, a week of 5 days.
const PERIOD_UNITS: Record<string, number> = { W: 5 * 8 * 3600, D: 8 * 3600, H: 3600, M: 60, S: 1 };

/** An ISO-8601 period (`PT1H30M`) in seconds, days and weeks counted as Jira's working ones. */
export function periodSeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let seconds = 0;
  for (const m of value.matchAll(/(\d+)([WDHMS])/g))
    seconds += Number(m[1]) * (PERIOD_UNITS[m[2] ?? ''] ?? 0);
  return seconds;
}

/** A system field's id as Jira's changelog names it beside the field's name (`Component` -> `components`). */
const CHANGELOG_FIELD_IDS: Record<string, string> = {
  component: 'components',
  'fix version': 'fixVersions',
  version: 'versions',
  link: 'issuelinks',
  parent: 'parent',
};

function changelogFieldId(field: string, fieldType: string): string | undefined {
  const name = lower(field);
  if (fieldType === 'custom') return FIELDS.find((f) => f.custom && lower(f.name) === name)?.id;
  return (
    CHANGELOG_FIELD_IDS[name] ??
    FIELDS.find((f) => !f.custom && (lower(f.id) === name || lower(f.name) === name))?.id
  );
}

/** Every person the file names, with where. */
function peopleOf(file: ImportFile): { path: string; accountId: string }[] {
  const out: { path: string; accountId: string }[] = [];
  const add = (path: string, accountId: string | undefined) => {
    if (accountId !== undefined) out.push({ path, accountId });
  };
  const each = <T>(
    list: readonly T[] | undefined,
    path: (i: number) => string,
    person: (x: T) => string | undefined,
  ) => {
    for (const [i, x] of (list ?? []).entries()) add(path(i), person(x));
  };
  each(
    file.users,
    (i) => `users.${i}.name`,
    (u) => u.name,
  );
  for (const [pi, p] of file.projects.entries())
    for (const [ii, issue] of p.issues.entries()) {
      const at = `projects.${pi}.issues.${ii}`;
      add(`${at}.reporter`, issue.reporter);
      add(`${at}.assignee`, issue.assignee);
      each(
        issue.watchers,
        (i) => `${at}.watchers.${i}`,
        (w) => w,
      );
      each(
        issue.voters,
        (i) => `${at}.voters.${i}`,
        (v) => v,
      );
      each(
        issue.comments,
        (i) => `${at}.comments.${i}.author`,
        (c) => c.author,
      );
      each(
        issue.history,
        (i) => `${at}.history.${i}.author`,
        (h) => h.author,
      );
      each(
        issue.worklogs,
        (i) => `${at}.worklogs.${i}.author`,
        (w) => w.author,
      );
      each(
        issue.attachments,
        (i) => `${at}.attachments.${i}.attacher`,
        (a) => a.attacher,
      );
    }
  return out;
}

/**
 * What the site refuses in a file the schema accepts, each with where it is: [] when the import can run.
 * Atlassian's page documents no error messages; these say what is wrong and where, in the file's terms.
 */
export function siteProblems(store: JiraStore, file: ImportFile): string[] {
  const problems: string[] = [];
  const byExternalId = new Map<string, { issue: ImportIssue; project: ProjectInfo | undefined }>();
  file.projects.forEach((p, pi) => {
    const project = store.projectOf(p.key);
    if (!project || project.key !== p.key)
      problems.push(
        `projects.${pi}.key: project ${p.key} does not exist on this site (the sandbox imports into existing projects only)`,
      );
    p.issues.forEach((issue, ii) => {
      const at = `projects.${pi}.issues.${ii} (externalId ${issue.externalId})`;
      byExternalId.set(issue.externalId, { issue, project });
      const type = store.issueType({ name: issue.issueType });
      if (!type) {
        problems.push(`${at}.issueType: there is no issue type "${issue.issueType}" in project ${p.key}`);
      } else if (issue.status !== undefined) {
        const workflow = store.workflows.get(type.id);
        const names = (workflow?.statuses ?? []).map((id) => store.statuses.get(id)?.name ?? id);
        if (!names.some((n) => lower(n) === lower(issue.status ?? '')))
          problems.push(
            `${at}.status: "${issue.status}" is not a status of the ${type.name} workflow (${names.join(', ')})`,
          );
      }
      if (
        issue.priority !== undefined &&
        !store.priorities.some((x) => lower(x.name) === lower(issue.priority ?? ''))
      )
        problems.push(
          `${at}.priority: there is no priority "${issue.priority}" (${store.priorities.map((x) => x.name).join(', ')})`,
        );
      if (
        issue.resolution !== undefined &&
        !RESOLUTIONS.some((r) => lower(r.name) === lower(issue.resolution ?? ''))
      )
        problems.push(
          `${at}.resolution: there is no resolution "${issue.resolution}" (${RESOLUTIONS.map((r) => r.name).join(', ')})`,
        );
      const texts: [string, string | undefined][] = [
        ['description', issue.description],
        ['environment', issue.environment],
        ...(issue.comments ?? []).map((c, i): [string, string] => [`comments.${i}.body`, c.body]),
      ];
      for (const [where, value] of texts)
        if (value !== undefined && value.length > TEXT_LIMIT)
          problems.push(`${at}.${where}: ${value.length} characters, over Jira's limit of 32,767`);
    });
  });
  const parents = new Map<string, number>();
  file.links.forEach((link, li) => {
    const at = `links.${li} (${link.sourceId} -> ${link.destinationId})`;
    const source = byExternalId.get(link.sourceId);
    const destination = byExternalId.get(link.destinationId);
    if (link.name === SUB_TASK_LINK) {
      parents.set(link.sourceId, (parents.get(link.sourceId) ?? 0) + 1);
      const child = source && store.issueType({ name: source.issue.issueType });
      const parent = destination && store.issueType({ name: destination.issue.issueType });
      if (child && child.hierarchyLevel !== -1)
        problems.push(`${at}: a sub-task-link goes from a sub-task, and ${child.name} is not one`);
      if (parent && parent.hierarchyLevel !== 0)
        problems.push(`${at}: a sub-task's parent is a standard issue type, and ${parent.name} is not one`);
      if (source && destination && source.project !== destination.project)
        problems.push(`${at}: a sub-task and its parent are in one project`);
    } else if (!LINK_TYPES.some((t) => lower(t.name) === lower(link.name))) {
      problems.push(
        `${at}.name: there is no issue link type "${link.name}" (${LINK_TYPES.map((t) => t.name).join(', ')}, or ${SUB_TASK_LINK})`,
      );
    }
  });
  for (const [externalId, { issue }] of byExternalId) {
    const type = store.issueType({ name: issue.issueType });
    if (type?.hierarchyLevel === -1 && !parents.has(externalId))
      problems.push(`externalId ${externalId}: a ${type.name} needs its parent, a sub-task-link from it`);
    if ((parents.get(externalId) ?? 0) > 1)
      problems.push(`externalId ${externalId}: a sub-task has one parent, and it has several sub-task-links`);
  }
  const unknown = peopleOf(file).filter((p) => !store.users.has(p.accountId));
  for (const p of unknown) problems.push(`${p.path}: no user with account id ${p.accountId} on this site`);
  return problems;
}

/** The file's JSON, parsed and checked against the format: the file, or its problems. */
export function readImportFile(body: unknown): { file: ImportFile } | { problems: string[] } {
  let json = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      json = JSON.parse(String(body));
    } catch (err) {
      return { problems: [`the file is not JSON: ${(err as Error).message}`] };
    }
  }
  const parsed = ImportFileSchema.safeParse(json);
  if (!parsed.success)
    return { problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`) };
  return { file: parsed.data };
}

class ImportRun {
  private readonly epoch: number;
  private readonly issues = new Map<string, IssueRec>();

  constructor(
    private readonly store: JiraStore,
    private readonly job: ImportJobRec,
    private readonly file: ImportFile,
    private readonly admin: Account,
    private readonly msPerIssue: number,
  ) {
    this.epoch = store.importEpoch;
  }

  /** False once the sandbox was reset: the run stops where it is. */
  private get live(): boolean {
    return this.store.importEpoch === this.epoch;
  }

  async run(): Promise<void> {
    try {
      for (const p of this.file.projects) {
        const project = this.store.projectOf(p.key) as ProjectInfo;
        for (const name of p.components ?? []) this.component(project, name);
        for (const v of p.versions ?? [])
          this.version(project, v.name, {
            released: v.released ?? false,
            releaseDate: dateOf(v.releaseDate),
          });
        for (const issue of p.issues) {
          // Time in proportion to the file's size: the pace applies before each issue.
          await (this.msPerIssue > 0 ? sleep(this.msPerIssue) : nextTick());
          if (!this.live) return;
          const rec = await this.create(project, issue);
          if (!this.live) return;
          this.issues.set(issue.externalId, rec);
          this.job.issues.push({ externalId: issue.externalId, id: String(rec.id), key: rec.key });
        }
      }
      this.link();
      if (this.file.projects.some((p) => p.issues.some((i) => i.watchers?.length || i.voters?.length)))
        this.job.warnings.push('watchers and voters are not kept: the sandbox has neither');
    } catch (err) {
      this.job.errors.push(`the import stopped: ${(err as Error).message}`);
    }
    if (!this.live) return;
    this.job.status = 'finished';
    this.job.finished = this.store.now();
  }

  private component(project: ProjectInfo, name: string): ComponentRec {
    const existing = this.store.componentsOf(project.id).find((c) => lower(c.name) === lower(name));
    if (existing) return existing;
    const component: ComponentRec = {
      id: String(this.store.nextId('component')),
      projectId: project.id,
      name,
      assigneeType: 'PROJECT_DEFAULT',
    };
    this.store.components.set(component.id, component);
    this.job.createdComponents.push(`${project.key}: ${name}`);
    return component;
  }

  private version(
    project: ProjectInfo,
    name: string,
    opts: { released?: boolean; releaseDate?: number } = {},
  ) {
    const existing = [...this.store.versions.values()].find(
      (v) => v.projectId === project.id && lower(v.name) === lower(name),
    );
    if (existing) return existing;
    const version: VersionRec = {
      id: String(this.store.nextId('version')),
      projectId: project.id,
      name,
      released: opts.released ?? false,
      ...(opts.releaseDate !== undefined ? { releaseDate: opts.releaseDate } : {}),
    };
    this.store.versions.set(version.id, version);
    this.job.createdVersions.push(`${project.key}: ${name}`);
    return version;
  }

  private where(issue: ImportIssue, key: string) {
    return `${key} (externalId ${issue.externalId})`;
  }

  private async create(project: ProjectInfo, issue: ImportIssue): Promise<IssueRec> {
    const store = this.store;
    const type = store.issueType({ name: issue.issueType });
    if (!type) throw new Error(`issue type ${issue.issueType} vanished`);
    const workflow = store.workflows.get(type.id);
    const statusId =
      (issue.status &&
        workflow?.statuses.find(
          (id) => lower(store.statuses.get(id)?.name ?? '') === lower(issue.status ?? ''),
        )) ||
      workflow?.initial ||
      '10000';
    const now = store.now();
    const created = dateOf(issue.created) ?? now;
    const updated = Math.max(dateOf(issue.updated) ?? created, created);
    const resolutionDate = dateOf(issue.resolutionDate) ?? null;
    const history = [...(issue.history ?? [])]
      .map((h, i) => ({ h, i, at: dateOf(h.created) ?? created }))
      .sort((a, b) => a.at - b.at || a.i - b.i);
    const lastStatusChange = history
      .filter((x) => x.h.items.some((i) => lower(i.field) === 'status'))
      .at(-1)?.at;
    const { id, key } = store.allocateIssueKey(project);
    const where = this.where(issue, key);
    const worklogs = (issue.worklogs ?? []).map((w) => {
      const started = dateOf(w.startDate) ?? created;
      return {
        id: String(store.nextId('worklog')),
        authorId: w.author ?? '',
        started,
        timeSpentSeconds: periodSeconds(w.timeSpent) ?? 0,
        created: started,
        updated: started,
        ...(w.comment ? { comment: wikiToAdf(w.comment) } : {}),
      };
    });
    const logged = worklogs.reduce((sum, w) => sum + w.timeSpentSeconds, 0);
    const original = periodSeconds(issue.originalEstimate);
    const remaining = periodSeconds(issue.estimate);
    const versions = (names: string[] | undefined) => (names ?? []).map((n) => this.version(project, n).id);
    const rec: IssueRec = {
      id,
      key,
      projectId: project.id,
      issueTypeId: type.id,
      summary: issue.summary,
      // Set once the issue's attachments are in: Jira resolves `!name!` against them as it converts the text.
      description: null,
      statusId,
      resolutionId: issue.resolution
        ? (RESOLUTIONS.find((r) => lower(r.name) === lower(issue.resolution ?? ''))?.id ?? null)
        : null,
      resolutionDate,
      statusCategoryChanged: lastStatusChange ?? created,
      priorityId:
        store.priorities.find((p) => lower(p.name) === lower(issue.priority ?? ''))?.id ??
        store.defaultPriorityId,
      labels: [...new Set(issue.labels ?? [])],
      assigneeId: issue.assignee ?? null,
      reporterId: issue.reporter ?? null,
      // Who created it in the source system, as far as the file says; the importing admin otherwise.
      creatorId: issue.reporter ?? this.admin.accountId,
      created,
      updated,
      duedate: issue.duedate ? issue.duedate.slice(0, 10) : null,
      componentIds: [...new Set((issue.components ?? []).map((n) => this.component(project, n).id))],
      parentId: null,
      sprintIds: [],
      custom: { customfield_10019: `0|i${id.toString(36).padStart(5, '0')}:` },
      timetracking: {
        ...(original !== undefined ? { originalSeconds: original } : {}),
        ...(remaining !== undefined ? { remainingSeconds: remaining } : {}),
        spentSeconds: worklogs.length > 0 ? logged : (periodSeconds(issue.timeSpent) ?? 0),
      },
      attachmentIds: [],
      comments: (issue.comments ?? []).map((c) => {
        const at = dateOf(c.created) ?? created;
        return {
          id: String(store.nextId('comment')),
          authorId: c.author ?? '',
          body: { type: 'doc', version: 1, content: [] },
          created: at,
          updated: at,
        };
      }),
      worklogs,
      remoteLinks: [],
      changelog: history.map(
        ({ h, at }): ChangelogRec => ({
          id: String(store.nextId('changelog')),
          authorId: h.author ?? null,
          created: at,
          items: h.items.map((i) => {
            const fieldId = changelogFieldId(i.field, i.fieldType);
            return {
              field: i.field,
              fieldtype: i.fieldType,
              ...(fieldId ? { fieldId } : {}),
              from: i.from,
              fromString: i.fromString,
              to: i.to,
              toString: i.toString,
            };
          }),
        }),
      ),
      index: [],
    };
    if (issue.affectedVersions?.length || issue.fixedVersions?.length)
      rec.versionIds = { affected: versions(issue.affectedVersions), fixed: versions(issue.fixedVersions) };
    if (issue.environment)
      this.job.warnings.push(`${where}: environment not kept: the sandbox has no Environment field`);
    this.customValues(rec, issue, where);
    for (const a of issue.attachments ?? []) await this.attach(rec, a, where);
    // The text as Jira converts it on import: its images the issue's attachments of that name, as it holds them
    // now (an attachment added later, by REST, does not change a converted text), its mentions the accounts.
    const text = this.wikiContext(rec);
    if (issue.description) rec.description = wikiToAdf(issue.description, text);
    (issue.comments ?? []).forEach((c, i) => {
      const comment = rec.comments[i];
      if (comment) comment.body = wikiToAdf(c.body, text);
    });
    // A reset while the files were downloading: the site this issue was for is gone.
    if (this.live) store.addIssue(rec);
    return rec;
  }

  /** What Jira's conversion of the issue's wiki markup knows: its attachments by name, the site's people. */
  private wikiContext(rec: IssueRec): WikiContext {
    const store = this.store;
    return {
      attachment: (name) =>
        rec.attachmentIds.map((id) => store.attachments.get(id)).find((a) => a?.filename === name)?.mediaId,
      displayName: (accountId) => store.users.get(accountId)?.displayName,
    };
  }

  private customValues(rec: IssueRec, issue: ImportIssue, where: string): void {
    for (const value of issue.customFieldValues ?? []) {
      const field = FIELDS.find((f) => f.custom && lower(f.name) === lower(value.fieldName));
      const scalar = Array.isArray(value.value)
        ? value.value[0]
        : typeof value.value === 'string'
          ? value.value
          : undefined;
      if (!field) {
        this.job.warnings.push(
          `${where}: custom field "${value.fieldName}" is not on the site: its value is not kept (Jira's importer would create the field; the sandbox does not)`,
        );
        continue;
      }
      if (field.kind === 'sprint') {
        const names = Array.isArray(value.value) ? value.value : [String(scalar ?? '')];
        for (const name of names) {
          const sprint = [...this.store.sprints.values()].find(
            (s) => s.name === name || String(s.id) === name,
          );
          if (sprint) rec.sprintIds.push(sprint.id);
          else this.job.warnings.push(`${where}: no sprint "${name}": not set`);
        }
        continue;
      }
      if (scalar === undefined || field.kind === 'rank') {
        this.job.warnings.push(`${where}: "${value.fieldName}" takes no such value: not kept`);
        continue;
      }
      if (field.kind === 'number') {
        const n = Number(scalar);
        if (Number.isFinite(n)) rec.custom[field.id] = n;
        else this.job.warnings.push(`${where}: "${value.fieldName}" is a number, not "${scalar}": not kept`);
      } else if (field.kind === 'adf') rec.custom[field.id] = wikiToAdf(scalar);
      else if (field.kind === 'date') rec.custom[field.id] = scalar.slice(0, 10);
      else rec.custom[field.id] = scalar;
    }
  }

  /** Downloads an attachment from its `uri`; one that cannot be fetched is an error of the job, not of the issue. */
  private async attach(
    rec: IssueRec,
    a: NonNullable<ImportIssue['attachments']>[number],
    where: string,
  ): Promise<void> {
    const store = this.store;
    try {
      // Jira fetches each `uri` as the file gives it. The sandbox is a test double on this machine: it fetches
      // only from the local service (loopback), never anything else a file names.
      const uri = new URL(a.uri);
      if (!/^https?:$/.test(uri.protocol) || !LOOPBACK.test(uri.hostname))
        throw new Error('the sandbox fetches attachments from the local service (loopback) only');
      const res = await fetch(uri, { signal: AbortSignal.timeout(30_000), redirect: 'error' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (!this.live) return;
      if (bytes.length > store.limits.attachmentMaxBytes)
        throw new Error(`${bytes.length} bytes, over the site's limit of ${store.limits.attachmentMaxBytes}`);
      const id = String(store.nextId('attachment'));
      const path = join(store.attachmentDir(), `import-${id}`);
      writeFileSync(path, bytes);
      store.addAttachment({
        id,
        issueId: rec.id,
        filename: a.name,
        mimeType: res.headers.get('content-type')?.split(';')[0]?.trim() || 'application/octet-stream',
        size: bytes.length,
        created: dateOf(a.created) ?? rec.created,
        authorId: a.attacher ?? this.admin.accountId,
        path,
        mediaId: stableUuid(`media:${store.seedValue}:${id}`),
      });
      rec.attachmentIds.push(id);
    } catch (err) {
      this.job.errors.push(`${where}: attachment "${a.name}" not imported: ${(err as Error).message}`);
    }
  }

  /** The file's links, once every issue is in: parents of sub-tasks, then issue links. */
  private link(): void {
    const touched = new Set<IssueRec>();
    for (const l of this.file.links) {
      const source = this.issues.get(l.sourceId);
      const destination = this.issues.get(l.destinationId);
      if (!source || !destination) continue;
      if (l.name === SUB_TASK_LINK) {
        this.store.setParent(source, destination.id);
      } else {
        const type = LINK_TYPES.find((t) => lower(t.name) === lower(l.name));
        if (!type) continue;
        // `{inwardIssue: A, outwardIssue: B}` reads "A <outward> B" (store.ts): the source is the subject.
        this.store.addLink({
          id: String(this.store.nextId('link')),
          typeId: type.id,
          inwardId: source.id,
          outwardId: destination.id,
        });
      }
      touched.add(source);
      touched.add(destination);
    }
    for (const issue of touched) this.store.refreshIndex(issue);
  }
}

/** The job as GET answers it. */
function jobView(job: ImportJobRec, base: string) {
  return {
    id: job.id,
    self: `${base}/_sandbox/jira/import/json/${job.id}`,
    status: job.status,
    total: job.total,
    done: job.issues.length,
    issues: job.issues,
    errors: job.errors,
    warnings: job.warnings,
    createdComponents: job.createdComponents,
    createdVersions: job.createdVersions,
    started: jiraDateTime(job.started),
    ...(job.finished !== undefined ? { finished: jiraDateTime(job.finished) } : {}),
  };
}

export function registerImporterRoutes(
  app: FastifyInstance,
  store: JiraStore,
  opts: { profile: SandboxProfile },
): void {
  const start = (): Settings => ({ msPerIssue: opts.profile === 'realistic' ? REALISTIC_MS_PER_ISSUE : 0 });
  let settings = start();
  app.addHook('onRequest', async (req) => {
    if (req.method === 'POST' && req.url === '/_sandbox/reset') settings = start();
  });

  /** The account, when it is a Jira administrator's; otherwise the 401 or 403 is sent and undefined returned. */
  const admin = (req: FastifyRequest, reply: FastifyReply): Account | undefined => {
    const creds = basicCredentials(req.headers.authorization);
    const account = creds ? store.accounts.get(creds.user.toLowerCase()) : undefined;
    if (!creds || !account || account.apiToken !== creds.password) {
      sendError(reply, 401, [UNAUTHENTICATED]);
      return undefined;
    }
    if (!account.siteAdmin) {
      sendError(reply, 403, [NOT_A_JIRA_ADMIN]);
      return undefined;
    }
    return account;
  };

  // The upload's body is read here, as text: a file that is not JSON gets the importer's answer, not the framework's.
  app.register(async (scoped) => {
    scoped.removeContentTypeParser('application/json');
    scoped.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    );
    registerUpload(scoped, store, admin, () => settings);
  });

  app.get<{ Params: { id: string } }>('/_sandbox/jira/import/json/:id', async (req, reply) => {
    if (!admin(req, reply)) return reply;
    const job = store.importJobs.get(req.params.id);
    if (!job) return sendError(reply, 404, [`No import ${req.params.id}.`]);
    return jobView(job, baseUrl(req));
  });

  app.get('/_sandbox/jira/importer', async () => settings);
  app.put('/_sandbox/jira/importer', async (req, reply) => {
    const parsed = SettingsSchema.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply
        .code(400)
        .send({ message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    settings = parsed.data;
    return settings;
  });
}

function registerUpload(
  app: FastifyInstance,
  store: JiraStore,
  admin: (req: FastifyRequest, reply: FastifyReply) => Account | undefined,
  settings: () => Settings,
): void {
  app.post('/_sandbox/jira/import/json', async (req, reply) => {
    const account = admin(req, reply);
    if (!account) return reply;
    const read = readImportFile(req.body);
    const problems = 'problems' in read ? read.problems : siteProblems(store, read.file);
    if (problems.length > 0 || !('file' in read))
      return sendError(reply, 400, [
        `The file was not imported: ${problems.length} problem${problems.length === 1 ? '' : 's'}.`,
        ...problems,
      ]);
    const file = read.file;
    const job: ImportJobRec = {
      id: randomUUID(),
      status: 'running',
      accountId: account.accountId,
      total: file.projects.reduce((n, p) => n + p.issues.length, 0),
      issues: [],
      errors: [],
      warnings: [],
      createdComponents: [],
      createdVersions: [],
      started: store.now(),
    };
    store.importJobs.set(job.id, job);
    void new ImportRun(store, job, file, account, settings().msPerIssue).run();
    return reply.code(202).send(jobView(job, baseUrl(req)));
  });
}
