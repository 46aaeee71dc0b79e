/**
 * Validation of issue `fields` / `update` on create and edit, with Jira's messages: every field is checked and
 * all problems are reported together in `errors` (field id -> message), as Jira does.
 */
import { isValidAdf, TEXT_LIMIT, TEXT_TOO_LONG } from './adf.ts';
import { FIELDS, type IssueTypeDef, SETTABLE_SYSTEM_FIELDS } from './catalog.ts';
import { commentBodyProblem } from './comments.ts';
import { errorBody, JiraHttpError } from './errors.ts';
import type { IssueRec, JiraStore, ProjectInfo } from './store.ts';
import { isJiraDate, parseJiraDuration } from './time.ts';

type Json = Record<string, unknown>;

export const ADF_REQUIRED =
  'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
const CANNOT_SET = (id: string) =>
  `Field '${id}' cannot be set. It is not on the appropriate screen, or unknown.`;
export const WRONG_HIERARCHY = 'Given parent work item does not belong to appropriate hierarchy.';
/** Jira's limit on a text field and its 400 message: see adf.ts (comments share them). */
export { TEXT_LIMIT, TEXT_TOO_LONG } from './adf.ts';

/** The validated changes to write to an issue. */
export interface IssueChanges {
  /** The project a create names (an edit cannot move an issue). */
  project?: ProjectInfo;
  issueType?: IssueTypeDef;
  summary?: string;
  description?: unknown;
  priorityId?: string;
  labels?: string[];
  assigneeId?: string | null;
  reporterId?: string | null;
  duedate?: string | null;
  componentIds?: string[];
  parentId?: number | null;
  originalSeconds?: number;
  remainingSeconds?: number;
  /** The open (future or active) sprint to be in, or null for the backlog. */
  sprintId?: number | null;
  /** Comments an edit adds (`update.comment` with `add`), in order. */
  comments?: { body: unknown; visibility?: Json }[];
  custom: Record<string, unknown>;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `{id}`, `{key}` or `{name}` references the way Jira accepts them. */
const refOf = (v: unknown): { id?: string; key?: string; name?: string } | undefined => {
  if (!isObject(v)) return undefined;
  const out: { id?: string; key?: string; name?: string } = {};
  if (typeof v.id === 'string' || typeof v.id === 'number') out.id = String(v.id);
  if (typeof v.key === 'string') out.key = v.key;
  if (typeof v.name === 'string') out.name = v.name;
  return out;
};

export class FieldParser {
  readonly errors: Record<string, string> = {};
  readonly changes: IssueChanges = { custom: {} };

  constructor(
    private readonly store: JiraStore,
    private readonly mode: 'create' | 'edit',
    private readonly issue?: IssueRec,
  ) {}

  /** Parses a request's `fields` and `update`; throws a 400 with all problems if any. */
  parse(body: unknown): IssueChanges {
    if (!isObject(body)) throw new JiraHttpError(400, errorBody(['Request body must be a JSON object.']));
    const fields = body.fields === undefined ? {} : body.fields;
    if (!isObject(fields)) throw new JiraHttpError(400, errorBody(["'fields' must be an object."]));
    const update = body.update === undefined ? {} : body.update;
    if (!isObject(update)) throw new JiraHttpError(400, errorBody(["'update' must be an object."]));

    const merged: Json = { ...fields };
    for (const [id, ops] of Object.entries(update)) {
      if (id === 'comment' && this.mode === 'edit') this.commentOps(ops);
      else this.applyUpdateOps(id, ops, merged);
    }

    // The issue type decides what the parent may be, so it is read first.
    if (this.mode === 'create') {
      this.project(merged.project);
      this.issueType(merged.issuetype);
      if (merged.summary === undefined) this.errors.summary = 'You must specify a summary of the issue.';
    } else if (merged.issuetype !== undefined) {
      this.issueType(merged.issuetype);
    }
    for (const [id, value] of Object.entries(merged)) {
      if (id === 'project' || id === 'issuetype') {
        if (id === 'project' && this.mode === 'edit') this.errors.project = CANNOT_SET('project');
        continue;
      }
      this.field(id, value);
    }
    if (
      this.mode === 'create' &&
      this.changes.issueType?.hierarchyLevel === -1 &&
      merged.parent === undefined
    ) {
      this.errors.parent = 'Parent issue is required for a sub-task.';
    }
    if (Object.keys(this.errors).length > 0) throw new JiraHttpError(400, errorBody([], this.errors));
    return this.changes;
  }

  private applyUpdateOps(id: string, ops: unknown, merged: Json): void {
    if (!Array.isArray(ops)) {
      this.errors[id] = `Operations for '${id}' must be an array.`;
      return;
    }
    const listField = id === 'labels' || id === 'components';
    let current: unknown[] | undefined;
    if (listField) {
      const existing =
        merged[id] ??
        (id === 'labels'
          ? (this.issue?.labels ?? [])
          : (this.issue?.componentIds.map((cid) => ({ id: cid })) ?? []));
      current = Array.isArray(existing) ? [...existing] : [];
    }
    for (const op of ops) {
      if (!isObject(op)) {
        this.errors[id] = `Invalid operation for '${id}'.`;
        return;
      }
      const [verb, value] = Object.entries(op)[0] ?? [];
      if (verb === 'set') {
        if (listField) current = Array.isArray(value) ? [...value] : [];
        else merged[id] = value;
      } else if (listField && current && (verb === 'add' || verb === 'remove')) {
        const same = (a: unknown) =>
          id === 'labels' ? a === value : JSON.stringify(refOf(a)) === JSON.stringify(refOf(value));
        current = current.filter((a) => !same(a));
        if (verb === 'add') current.push(value);
      } else {
        this.errors[id] = `Operation '${verb}' is not supported for field '${id}'.`;
        return;
      }
    }
    if (listField) merged[id] = current;
  }

  /** An edit's `update.comment`: each `{add: {body, visibility?}}` adds a comment, as Jira's edit does. */
  private commentOps(ops: unknown): void {
    if (!Array.isArray(ops)) {
      this.errors.comment = "Operations for 'comment' must be an array.";
      return;
    }
    const added: NonNullable<IssueChanges['comments']> = [];
    for (const op of ops) {
      const [verb, value] = isObject(op) ? (Object.entries(op)[0] ?? []) : [];
      if (verb !== 'add' || !isObject(value)) {
        this.errors.comment = `Operation '${verb ?? ''}' is not supported for field 'comment'.`;
        return;
      }
      const problem = commentBodyProblem(value.body);
      if (problem) {
        this.errors.comment = problem;
        return;
      }
      added.push({
        body: value.body,
        ...(isObject(value.visibility) ? { visibility: value.visibility } : {}),
      });
    }
    this.changes.comments = added;
  }

  private project(value: unknown): void {
    const ref = refOf(value) ?? (typeof value === 'string' ? { key: value } : undefined);
    const idOrKey = ref?.id ?? ref?.key;
    const project = idOrKey ? this.store.projectOf(idOrKey) : undefined;
    if (project) this.changes.project = project;
    else this.errors.project = 'Specify a valid project ID or key';
  }

  private issueType(value: unknown): void {
    const ref = refOf(value);
    const type = ref ? this.store.issueType(ref) : undefined;
    if (!type) {
      this.errors.issuetype = value === undefined ? 'Specify an issue type' : 'Specify a valid issue type';
      return;
    }
    if (this.issue) {
      const currentLevel = this.store.issueTypeOf(this.issue).hierarchyLevel;
      if (type.hierarchyLevel !== currentLevel) {
        this.errors.issuetype = 'The issue type can only be changed to one of the same hierarchy level.';
        return;
      }
    }
    this.changes.issueType = type;
  }

  private user(id: 'assignee' | 'reporter', value: unknown): void {
    if (value === null) {
      if (id === 'assignee') this.changes.assigneeId = null;
      else this.changes.reporterId = null;
      return;
    }
    const accountId = isObject(value) && typeof value.accountId === 'string' ? value.accountId : undefined;
    if (!accountId || !this.store.users.has(accountId)) {
      this.errors[id] = 'Specified user does not exist or you do not have required permissions';
      return;
    }
    if (id === 'assignee') this.changes.assigneeId = accountId;
    else this.changes.reporterId = accountId;
  }

  private field(id: string, value: unknown): void {
    switch (id) {
      case 'summary':
        if (typeof value !== 'string' || value.trim() === '') {
          this.errors.summary = 'You must specify a summary of the issue.';
        } else if (value.length > 255) {
          this.errors.summary = "Summary can't exceed 255 characters.";
        } else if (/[\r\n]/.test(value)) {
          this.errors.summary = 'The summary is invalid because it contains newline characters.';
        } else {
          this.changes.summary = value;
        }
        return;
      case 'description':
        if (value === null) this.changes.description = null;
        else if (!isValidAdf(value)) this.errors.description = ADF_REQUIRED;
        else if (JSON.stringify(value).length > TEXT_LIMIT) this.errors.description = TEXT_TOO_LONG;
        else this.changes.description = value;
        return;
      case 'priority': {
        const ref = refOf(value);
        const p =
          ref &&
          this.store.priorities.find((x) => x.id === ref.id || (ref.id === undefined && x.name === ref.name));
        if (p) this.changes.priorityId = p.id;
        else this.errors.priority = 'The priority selected is invalid.';
        return;
      }
      case 'labels':
        this.labels(value);
        return;
      case 'assignee':
      case 'reporter':
        this.user(id, value);
        return;
      case 'duedate':
        if (value === null) this.changes.duedate = null;
        else if (isJiraDate(value)) this.changes.duedate = value;
        else this.errors.duedate = `Error parsing date string: ${String(value)}`;
        return;
      case 'components':
        this.components(value);
        return;
      case 'parent':
        this.parent(value);
        return;
      case 'timetracking':
        this.timetracking(value);
        return;
    }
    const def = FIELDS.find((f) => f.id === id);
    if (!def || (!def.custom && !SETTABLE_SYSTEM_FIELDS.has(id)) || def.kind === 'rank') {
      this.errors[id] = CANNOT_SET(id);
      return;
    }
    this.customField(id, def.kind, value);
  }

  private labels(value: unknown): void {
    if (value === null) {
      this.changes.labels = [];
      return;
    }
    if (!Array.isArray(value) || value.some((l) => typeof l !== 'string')) {
      this.errors.labels = 'Labels must be an array of strings.';
      return;
    }
    const labels = value as string[];
    const spaced = labels.find((l) => /\s/.test(l));
    if (spaced !== undefined) {
      this.errors.labels = `The label '${spaced}' contains spaces which is invalid.`;
      return;
    }
    const long = labels.find((l) => l.length > 255);
    if (long !== undefined) {
      this.errors.labels = 'The label exceeds the maximum length for a single label of 255 characters.';
      return;
    }
    if (labels.some((l) => l === '')) {
      this.errors.labels = 'Labels cannot be empty.';
      return;
    }
    this.changes.labels = [...new Set(labels)];
  }

  private components(value: unknown): void {
    if (value === null) {
      this.changes.componentIds = [];
      return;
    }
    if (!Array.isArray(value)) {
      this.errors.components = 'Components must be an array.';
      return;
    }
    const ids: string[] = [];
    // A component belongs to one project: another project's is not one of the issue's to pick.
    const projectId = this.changes.project?.id ?? this.issue?.projectId;
    const own = this.store.componentsOf(projectId ?? '');
    for (const item of value) {
      const ref = refOf(item);
      const byId = ref?.id !== undefined ? own.find((c) => c.id === ref.id) : undefined;
      const byName =
        ref?.id === undefined && ref?.name !== undefined ? own.find((c) => c.name === ref.name) : undefined;
      const c = byId ?? byName;
      if (!c) {
        this.errors.components =
          ref?.id !== undefined
            ? `Component with id '${ref.id}' does not exist.`
            : `Component name '${ref?.name ?? ''}' is not valid`;
        return;
      }
      if (!ids.includes(c.id)) ids.push(c.id);
    }
    this.changes.componentIds = ids;
  }

  private parent(value: unknown): void {
    const type = this.changes.issueType ?? (this.issue ? this.store.issueTypeOf(this.issue) : undefined);
    if (value === null) {
      if (type?.hierarchyLevel === -1) this.errors.parent = 'Parent issue is required for a sub-task.';
      else this.changes.parentId = null;
      return;
    }
    const ref = refOf(value);
    const idOrKey = ref?.id ?? ref?.key;
    const parent = idOrKey ? this.store.issueByIdOrKey(idOrKey) : undefined;
    if (!parent) {
      this.errors.parent = 'Could not find issue by id or key.';
      return;
    }
    if (!type) return; // The issue type's own error is reported.
    const parentLevel = this.store.issueTypeOf(parent).hierarchyLevel;
    if (
      type.hierarchyLevel === 1 ||
      parentLevel !== type.hierarchyLevel + 1 ||
      parent.id === this.issue?.id
    ) {
      this.errors.parent = WRONG_HIERARCHY;
      return;
    }
    this.changes.parentId = parent.id;
  }

  private timetracking(value: unknown): void {
    if (!isObject(value)) {
      this.errors.timetracking = 'Time tracking must be an object.';
      return;
    }
    if (value.originalEstimate !== undefined) {
      const s = parseJiraDuration(value.originalEstimate);
      if (s === undefined) this.errors.timetracking = 'The original estimate specified is not valid.';
      else this.changes.originalSeconds = s;
    }
    if (value.remainingEstimate !== undefined) {
      const s = parseJiraDuration(value.remainingEstimate);
      if (s === undefined) this.errors.timetracking = 'The remaining estimate specified is not valid.';
      else this.changes.remainingSeconds = s;
    }
  }

  private customField(id: string, kind: string | undefined, value: unknown): void {
    if (value === null) {
      if (kind === 'sprint') this.changes.sprintId = null;
      else this.changes.custom[id] = null;
      return;
    }
    switch (kind) {
      case 'number':
        if (typeof value === 'number' && Number.isFinite(value)) this.changes.custom[id] = value;
        else this.errors[id] = 'Operation value must be a number';
        return;
      case 'date':
        if (isJiraDate(value)) this.changes.custom[id] = value;
        else this.errors[id] = `Error parsing date string: ${String(value)}`;
        return;
      case 'adf':
        if (isValidAdf(value)) this.changes.custom[id] = value;
        else this.errors[id] = ADF_REQUIRED;
        return;
      case 'string':
        // Jira's single-line text field: a string of at most 255 characters.
        if (typeof value !== 'string') this.errors[id] = 'Operation value must be a string';
        else if (value.length > 255)
          this.errors[id] = 'The entered text is too long. It exceeds the allowed limit of 255 characters.';
        else this.changes.custom[id] = value;
        return;
      case 'url':
        if (typeof value === 'string' && URL.canParse(value)) this.changes.custom[id] = value;
        else this.errors[id] = 'Not a valid URL';
        return;
      case 'sprint': {
        // Written as a bare sprint id, though read back as a list of sprints; anything else is refused with
        // Jira's words (a list of sprint objects included).
        if (typeof value !== 'number' || !Number.isInteger(value)) {
          this.errors[id] = 'Number value expected as the Sprint id.';
          return;
        }
        const sprint = this.store.sprints.get(value);
        if (!sprint) this.errors[id] = `Sprint with id ${String(value)} does not exist.`;
        else if (sprint.state === 'closed')
          this.errors[id] = 'Issue can be assigned only active or future sprints.';
        else this.changes.sprintId = sprint.id;
        return;
      }
      default:
        this.errors[id] = CANNOT_SET(id);
    }
  }
}

/** Writes validated changes onto an issue (the caller records the write with `store.touch`). */
export function applyChanges(store: JiraStore, issue: IssueRec, c: IssueChanges): void {
  if (c.issueType) {
    issue.issueTypeId = c.issueType.id;
    const wf = store.workflows.get(c.issueType.id);
    if (wf && !wf.statuses.includes(issue.statusId)) issue.statusId = wf.initial;
  }
  if (c.summary !== undefined) issue.summary = c.summary;
  if (c.description !== undefined) issue.description = c.description;
  if (c.priorityId !== undefined) issue.priorityId = c.priorityId;
  if (c.labels !== undefined) issue.labels = c.labels;
  if (c.assigneeId !== undefined) issue.assigneeId = c.assigneeId;
  if (c.reporterId !== undefined) issue.reporterId = c.reporterId;
  if (c.duedate !== undefined) issue.duedate = c.duedate;
  if (c.componentIds !== undefined) issue.componentIds = c.componentIds;
  if (c.parentId !== undefined) store.setParent(issue, c.parentId);
  if (c.originalSeconds !== undefined) {
    issue.timetracking.originalSeconds = c.originalSeconds;
    // Jira's legacy mode: an original estimate without a remaining one also sets the remaining estimate.
    if (c.remainingSeconds === undefined && issue.timetracking.remainingSeconds === undefined) {
      issue.timetracking.remainingSeconds = c.originalSeconds;
    }
  }
  if (c.remainingSeconds !== undefined) issue.timetracking.remainingSeconds = c.remainingSeconds;
  if (c.sprintId !== undefined) moveToSprint(store, issue, c.sprintId);
  for (const [id, value] of Object.entries(c.custom)) {
    if (value === null) delete issue.custom[id];
    else issue.custom[id] = value;
  }
}

/** Puts an issue in one open sprint (or the backlog); the closed sprints it was in stay in its history. */
export function moveToSprint(store: JiraStore, issue: IssueRec, sprintId: number | null): void {
  const closed = issue.sprintIds.filter((id) => store.sprints.get(id)?.state === 'closed');
  issue.sprintIds = sprintId === null ? closed : [...closed.filter((id) => id !== sprintId), sprintId];
}
