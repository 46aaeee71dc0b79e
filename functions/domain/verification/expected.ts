/**
 * What Jira should show for one source item: the engine's own mapping rules applied to it (buildIssueFields,
 * the state and type maps, planIssueLinks, customFieldWrites, componentNameForArea), never a second reading of
 * the rules. What the mapping leaves out on purpose (a person without a Jira account, a priority the scheme
 * lacks) is expected absent and said in `notes`; a type or a state mapped elsewhere is expected as mapped.
 */
import type { AdfDoc } from '#domain/adf/index.ts';
import {
  buildIssueFields,
  type CustomFieldMapping,
  componentNameForArea,
  customFieldWrites,
  type IssueTypeRef,
  type LinkPlanOptions,
  parentIdFrom,
  planIssueLinks,
  type SourceRelation,
  type StateMapping,
  workItemIdFromUrl,
} from '#domain/mapping/index.ts';

export interface FileFacts {
  name: string;
  size: number;
}

/** One source item and what the engine makes of it beyond its fields (the documents it writes, its files). */
export interface VerificationSource {
  id: number;
  fields: Readonly<Record<string, unknown>>;
  relations?: readonly SourceRelation[];
  /** The description as the engine writes it last (references resolved), or undefined when it writes none. */
  description?: AdfDoc;
  /** The comments the engine posts, in order: the ADO comment id and the document posted. */
  comments: readonly { id: number; doc: AdfDoc }[];
  /** Inline images the engine uploads for the description. */
  inlineImages?: readonly FileFacts[];
}

export interface VerificationContext {
  projectName: string;
  typeMap: Readonly<Record<string, IssueTypeRef>>;
  /** mapStates' map, the run's overrides included: a state overridden is expected where the override sends it. */
  states: StateMapping['map'];
  priorityNames: readonly string[];
  storyPointsFieldId?: string;
  sprintFieldId?: string;
  /** E-mail (lower-case) -> Jira accountId; undefined for a person without an account. */
  users: (email: string) => string | undefined;
  /** The Jira key of a migrated source item. */
  keyOf: (sourceId: number) => string | undefined;
  /** Whether Jira holds `parentId` as the `parent` of `childId` (one level up); if not, a Relates link does. */
  holdsParent: (parentId: number, childId: number) => boolean;
  /** The sprint an iteration path puts an item in, by name; undefined for none. */
  sprintOf: (iterationPath: string) => string | undefined;
  customFields: readonly CustomFieldMapping[];
  links: LinkPlanOptions;
  /** Files the engine adds of its own (history, a description's or comment's full HTML): neither expected nor extra. */
  isEngineFile: (name: string) => boolean;
}

/** One comment as its file carried it: the document Jira makes of its text, its author and date. */
export interface ImportedComment {
  body: AdfDoc;
  /** Undefined: a person without a Jira account, named in the text; the author is not checked. */
  author?: string;
  created: string;
}

/** One change of a field, as a changelog item shows it: the field's name and its values as text. */
export interface ChangeFact {
  field: string;
  fromString: string | null;
  toString: string | null;
}

/** One history entry as its file carried it: who changed what, and when. */
export interface ImportedChange {
  /** Undefined: a person without a Jira account (the file names no author); the author is not checked. */
  author?: string;
  created: string;
  items: ChangeFact[];
}

/** What only an imported issue is expected to hold: Jira's dates as the file set them, comments as carried. */
export interface ImportedFacts {
  created?: string;
  /** Jira's `updated` is this or later: the REST phases' writes after the import move it on. */
  updated?: string;
  /** Undefined: Jira shows none. */
  resolutionDate?: string;
  comments: ImportedComment[];
  /** Its change history (`history[]`), in the file's order: Jira's changelog holds each entry. */
  history: ImportedChange[];
}

export interface ExpectedIssue {
  sourceId: number;
  key: string;
  type: IssueTypeRef;
  /** Undefined when no rule moves the state: the issue keeps its workflow's initial status, by design. */
  status?: string;
  summary: string;
  labels: string[];
  components: string[];
  /** Undefined when the scheme lacks the mapped priority (Jira's default applies). */
  priority?: string;
  /** Null: unassigned; undefined: not checked (the person has no Jira account). */
  assignee?: string | null;
  /** Undefined: not checked (nobody mapped, so Jira's default reporter). */
  reporter?: string;
  parentKey: string | null;
  /** `Blocks → KEY-2`, `Blocks ← KEY-3`, `Relates ↔ KEY-4`, sorted. */
  links: string[];
  attachments: FileFacts[];
  comments: readonly { id: number; doc: AdfDoc }[];
  sprint: string | null;
  /** Undefined when the site has no Story Points field. */
  storyPoints?: number | null;
  originalEstimateSeconds?: number;
  remainingEstimateSeconds?: number;
  customFields: Record<string, unknown>;
  description?: AdfDoc;
  /**
   * Set for an item delivered by Jira's importer (imported.ts): Jira's dates and the comments as its file carried
   * them, compared in place of the REST mode's comments (each with its header line).
   */
  imported?: ImportedFacts;
  notes: string[];
}

/** `1h 30m` (hoursToJiraDuration) -> 5400. */
export function durationSeconds(duration: unknown): number | undefined {
  if (typeof duration !== 'string') return undefined;
  const m = /^(?:(\d+)h)?\s*(?:(\d+)m)?$/.exec(duration.trim());
  if (!m || (m[1] === undefined && m[2] === undefined)) return undefined;
  return (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60;
}

/** A link as its own issue shows it: the type, which way, and the issue at the other end. */
export function linkLabel(type: string, direction: 'outward' | 'inward', otherKey: string): string {
  if (type.toLowerCase() === 'relates') return `Relates ↔ ${otherKey}`;
  return `${type} ${direction === 'outward' ? '→' : '←'} ${otherKey}`;
}

function expectedLinks(source: VerificationSource, key: string, ctx: VerificationContext): string[] {
  const out: string[] = [];
  for (const link of planIssueLinks([source], ctx.links).links) {
    const outward = link.from === source.id;
    const otherKey = ctx.keyOf(outward ? link.to : link.from);
    if (otherKey !== undefined && otherKey !== key)
      out.push(linkLabel(link.type, outward ? 'outward' : 'inward', otherKey));
  }
  // A parent or child Jira cannot hold as `parent` is a Relates link between the two (phase 3).
  for (const r of source.relations ?? []) {
    const rel = r.rel.toLowerCase();
    if (rel !== 'system.linktypes.hierarchy-reverse' && rel !== 'system.linktypes.hierarchy-forward')
      continue;
    const other = workItemIdFromUrl(r.url);
    const otherKey = other === undefined ? undefined : ctx.keyOf(other);
    if (other === undefined || otherKey === undefined) continue;
    const [parent, child] = rel.endsWith('reverse') ? [other, source.id] : [source.id, other];
    if (!ctx.holdsParent(parent, child)) out.push(linkLabel('Relates', 'outward', otherKey));
  }
  return [...new Set(out)].sort();
}

function expectedFiles(source: VerificationSource, ctx: VerificationContext): FileFacts[] {
  const files: FileFacts[] = [];
  for (const r of source.relations ?? []) {
    if (r.rel !== 'AttachedFile') continue;
    const name = String(r.attributes?.name ?? '');
    if (name === '' || ctx.isEngineFile(name)) continue;
    files.push({ name, size: Number(r.attributes?.resourceSize ?? -1) });
  }
  return [...files, ...(source.inlineImages ?? [])];
}

/** Jira's issue for `source` as the engine's rules make it; `key` is the issue the id map names. */
export function expectedIssue(
  source: VerificationSource,
  key: string,
  ctx: VerificationContext,
): ExpectedIssue {
  const f = source.fields;
  const sourceType = String(f['System.WorkItemType'] ?? '');
  const type = ctx.typeMap[sourceType];
  if (!type) throw new Error(`work item ${source.id} is a "${sourceType}", which has no Jira issue type`);
  const mapped = buildIssueFields(source, {
    projectKey: '',
    typeMap: ctx.typeMap,
    priorityNames: ctx.priorityNames,
    users: ctx.users,
    ...(ctx.storyPointsFieldId ? { storyPointsFieldId: ctx.storyPointsFieldId } : {}),
  });
  const built = mapped.fields as Record<string, unknown> & {
    summary: string;
    labels: string[];
    priority?: { name: string };
    assignee?: { accountId: string };
    reporter?: { accountId: string };
    timetracking?: { originalEstimate?: string; remainingEstimate?: string };
  };
  const custom = customFieldWrites(f, ctx.customFields);
  const state = String(f['System.State'] ?? '');
  const parentId = parentIdFrom(source);
  const parentKey =
    parentId !== undefined && ctx.holdsParent(parentId, source.id) ? (ctx.keyOf(parentId) ?? null) : null;
  const component = componentNameForArea(String(f['System.AreaPath'] ?? ''), ctx.projectName);
  const original = durationSeconds(built.timetracking?.originalEstimate);
  const remaining = durationSeconds(built.timetracking?.remainingEstimate);
  const assigned = f['System.AssignedTo'];
  const status = ctx.states[sourceType]?.[state]?.status.name;
  return {
    sourceId: source.id,
    key,
    type,
    ...(status !== undefined ? { status } : {}),
    summary: built.summary,
    labels: built.labels,
    components: component === undefined ? [] : [component],
    ...(built.priority ? { priority: built.priority.name } : {}),
    ...(built.assignee
      ? { assignee: built.assignee.accountId }
      : assigned === undefined || assigned === null || assigned === ''
        ? { assignee: null }
        : {}),
    ...(built.reporter ? { reporter: built.reporter.accountId } : {}),
    parentKey,
    links: expectedLinks(source, key, ctx),
    attachments: expectedFiles(source, ctx),
    comments: source.comments,
    sprint: ctx.sprintOf(String(f['System.IterationPath'] ?? '')) ?? null,
    ...(ctx.storyPointsFieldId
      ? { storyPoints: (built[ctx.storyPointsFieldId] as number | undefined) ?? null }
      : {}),
    ...(original !== undefined ? { originalEstimateSeconds: original } : {}),
    ...(remaining !== undefined ? { remainingEstimateSeconds: remaining } : {}),
    customFields: custom.fields,
    ...(source.description ? { description: source.description } : {}),
    notes: [...mapped.warnings, ...custom.warnings],
  };
}
