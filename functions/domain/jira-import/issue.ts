/**
 * One Azure DevOps work item (its latest fields, its revisions, its comments) as one importer issue, mapped as
 * the REST mode maps it (mapping/issue-fields.ts), with what only the importer can set: the original dates,
 * reporter, comment authors and the change history.
 *
 * - `externalId`: the ADO id (links name issues by it); labels: the tags, the caller's extra labels (a batch
 *   label) and `src-id-{N}`.
 * - `status`: the final state through the run's state map; `resolution` the mapping's (Removed: "Won't Do"),
 *   else `doneResolution` for a done status; `resolutionDate` then from Microsoft.VSTS.Common.ClosedDate, else
 *   ResolvedDate, else StateChangeDate (when the final state was entered), else System.ChangedDate.
 * - `created` System.CreatedDate, `updated` System.ChangedDate; `reporter` System.CreatedBy, `assignee`
 *   System.AssignedTo, as account ids. A person without one is left out of the field, named in an italic line
 *   at the end of the description ("Created in Azure DevOps by ...", "Assigned in Azure DevOps to ...") and
 *   reported.
 * - Comments oldest first (by date, then id) with their author's account and date; a comment whose author has
 *   no account starts with "Originally posted by NAME (Azure DevOps comment ID)", as the REST mode's header.
 * - Descriptions and comments come from the BodyHook (text.ts), cut at Jira's 32,767 characters with a note
 *   (a warning says so). A comment cut so is carried whole as the REST mode carries it when the caller can
 *   (`options.fullComment`): its whole text attached as `comment-<id>.html`, with the comment's author as the
 *   attacher and its date, and the cut comment's note naming that file; `fullComments` lists the comments whose
 *   copy the caller stores (`tms-copy:comment-<id>`).
 * - Estimates as periods (`PT2H30M`), story points and the confirmed custom fields as `customFieldValues`.
 * - Attachments as the caller copied them (`options.attachments`): each by its copy, with its attacher's account.
 * Sprints, parents other than a sub-task's and worklogs are not set here (batches.ts, the REST
 * phases and the caller say what becomes of them).
 */

import { JIRA_TEXT_LIMIT } from '../adf/index.ts';
import { storyPointsFrom } from '../mapping/estimates.ts';
import type { IssueTypeRef } from '../mapping/issue-types.ts';
import { labelsFromTags, sourceIdLabel, toLabels } from '../mapping/labels.ts';
import { parentIdFrom, type SourceRelation } from '../mapping/links.ts';
import { sitePriorityFor } from '../mapping/priority.ts';
import { summaryFromTitle } from '../mapping/summary.ts';
import type { SourceAttachment } from './attachments.ts';
import { componentOf, importFieldValue, stateTargetOf } from './fields.ts';
import {
  type ImportAttachment,
  type ImportComment,
  type ImportCustomFieldValue,
  type ImportIssue,
  STORED_COPY,
} from './format.ts';
import { historyOf, type SourceRevision } from './history.ts';
import type { ImportMapping } from './mapping.ts';
import { People } from './people.ts';
import {
  attribution,
  type BodyHook,
  defaultBody,
  fitText,
  fullCommentCopy,
  fullCommentName,
  fullCommentNote,
  type SourceComment,
  type SourceItem,
} from './text.ts';
import { hoursToPeriod, importerDate } from './values.ts';

export interface IssueOptions {
  /** Where descriptions and comments come from; defaultBody when not given. */
  body?: BodyHook;
  /** More labels (the batch label); sanitised as tags are. */
  labels?: readonly string[];
  /** The item's files the run copied (attachments.ts): `attachments[]`, each by its copy, attacher and date. */
  attachments?: readonly SourceAttachment[];
  /**
   * Whether an over-long comment's whole text can go with the file (the caller stores its copy, within the
   * site's upload limit); without it, the comment is cut with a note and a warning only.
   */
  fullComment?: (comment: SourceComment) => boolean;
}

/** An issue for the file, with what the batches and the run's report need about it. */
export interface BuiltIssue {
  sourceId: number;
  issue: ImportIssue;
  /** Its issue type's Jira hierarchy level (Epic 1, standard 0, sub-task -1; 0 when the level is unknown). */
  level: number;
  /** Its ADO parent, if any (Hierarchy-Reverse, else System.Parent). */
  parentId?: number;
  relations: readonly SourceRelation[];
  /** The Jira accounts it names (reporter, assignee, comment and history authors, assignees in history). */
  accountIds: string[];
  /** The people it names who have no Jira account (e-mail, else display name). */
  unmappedPeople: string[];
  /**
   * The comments over Jira's limit whose whole text the issue attaches (`comment-<id>.html`): the caller stores
   * each one's copy (`fullCommentCopy(id)`) before the file is downloaded.
   */
  fullComments?: number[];
  warnings: string[];
}

const RESOLUTION_DATES = [
  'Microsoft.VSTS.Common.ClosedDate',
  'Microsoft.VSTS.Common.ResolvedDate',
  'Microsoft.VSTS.Common.StateChangeDate',
  'System.ChangedDate',
] as const;

function issueTypeOf(item: SourceItem, mapping: ImportMapping): IssueTypeRef {
  const sourceType = String(item.fields['System.WorkItemType'] ?? '');
  const issueType = mapping.typeMap[sourceType];
  // mapTypes reported the type (or excluded it): reaching here is the caller's mistake, not the data's.
  if (!issueType) throw new Error(`work item ${item.id} is a "${sourceType}", which has no Jira issue type`);
  return issueType;
}

/** The comments as the file carries them, and the whole texts attached for those it cuts. */
interface CarriedComments {
  comments: ImportComment[];
  attachments: ImportAttachment[];
  full: number[];
}

function commentsOf(
  item: SourceItem,
  comments: readonly SourceComment[],
  people: People,
  options: { body: BodyHook; fullComment: ((c: SourceComment) => boolean) | undefined },
  fallbackDate: string | undefined,
  warnings: string[],
): CarriedComments {
  const { body } = options;
  const ordered = [...comments].sort(
    (a, b) => (Date.parse(a.createdDate ?? '') || 0) - (Date.parse(b.createdDate ?? '') || 0) || a.id - b.id,
  );
  const out: CarriedComments = { comments: [], attachments: [], full: [] };
  for (const c of ordered) {
    const author = people.of(c.createdBy);
    const text = body({ kind: 'comment', item, comment: c }).trim();
    const header = author?.accountId
      ? undefined
      : attribution(
          `Originally posted by ${author?.name || 'an unknown user'} (Azure DevOps comment ${c.id})`,
        );
    if (text === '' && !header) {
      warnings.push(`comment ${c.id} is empty: not imported`);
      continue;
    }
    const whole = header ? `${header}${text ? `\n\n${text}` : ''}` : text;
    const attach = whole.length > JIRA_TEXT_LIMIT && options.fullComment?.(c) === true;
    const fitted = attach ? fitText(whole, fullCommentNote(c.id)) : fitText(whole);
    if (attach)
      warnings.push(
        `comment ${c.id} is over 32,767 characters: cut, the full text attached as ${fullCommentName(c.id)}`,
      );
    else if (fitted.cut) warnings.push(`comment ${c.id} is over 32,767 characters: cut`);
    let created = importerDate(c.createdDate);
    if (!created) {
      warnings.push(`comment ${c.id} has no date: dated as the item's last change`);
      created = fallbackDate;
    }
    if (!created) continue;
    const by = author?.accountId ? { author: author.accountId } : {};
    out.comments.push({ body: fitted.text, ...by, created });
    if (!attach) continue;
    // The whole comment as the REST mode attaches it, by its author and on its date, as the comment itself.
    out.attachments.push({
      name: fullCommentName(c.id),
      ...(author?.accountId ? { attacher: author.accountId } : {}),
      created,
      uri: `${STORED_COPY}${fullCommentCopy(c.id)}`,
    });
    out.full.push(c.id);
  }
  return out;
}

function customValuesOf(
  fields: Readonly<Record<string, unknown>>,
  mapping: ImportMapping,
  warnings: string[],
): ImportCustomFieldValue[] {
  const out: ImportCustomFieldValue[] = [];
  const points = storyPointsFrom(fields);
  if (points !== undefined) {
    if (mapping.storyPoints)
      out.push({
        fieldName: mapping.storyPoints.name,
        fieldType: mapping.storyPoints.typeKey,
        value: String(points),
      });
    else warnings.push(`story points ${points} not migrated: the Jira site has no Story Points field`);
  }
  for (const m of mapping.customFields ?? []) {
    const { value, problem } = importFieldValue(fields[m.source], m.shape);
    if (problem) warnings.push(`${m.source} not migrated to "${m.name}": ${problem}`);
    else if (value !== undefined) out.push({ fieldName: m.name, fieldType: m.typeKey, value });
  }
  return out;
}

export function issueOf(
  item: SourceItem,
  revisions: readonly SourceRevision[],
  comments: readonly SourceComment[],
  mapping: ImportMapping,
  options: IssueOptions = {},
): BuiltIssue {
  const f = item.fields;
  const body = options.body ?? defaultBody;
  const people = new People(mapping.users);
  const warnings: string[] = [];
  const issueType = issueTypeOf(item, mapping);
  const title = summaryFromTitle(f['System.Title']);

  const state = stateTargetOf(f, mapping);
  if (!state.target)
    warnings.push(
      `"${String(f['System.WorkItemType'])}" state "${String(f['System.State'] ?? '')}" has no Jira status`,
    );
  const resolutionDate = state.resolution
    ? RESOLUTION_DATES.map((ref) => importerDate(f[ref])).find((d) => d !== undefined)
    : undefined;

  const wanted = f['Microsoft.VSTS.Common.Priority'];
  const priority = sitePriorityFor(wanted, mapping.priorityNames);
  if (priority === undefined)
    warnings.push(`priority ${String(wanted ?? '(none)')} is not in the Jira priority scheme`);

  const reporter = people.of(f['System.CreatedBy']);
  const assignee = people.of(f['System.AssignedTo']);
  const created = importerDate(f['System.CreatedDate']);
  const updated = importerDate(f['System.ChangedDate']) ?? created;

  const lines: string[] = [];
  if (title.truncated) lines.push(attribution(`Azure DevOps title: ${String(f['System.Title'])}`));
  const text = body({ kind: 'description', item }).trim();
  if (text) lines.push(text);
  if (reporter && !reporter.accountId) lines.push(attribution(`Created in Azure DevOps by ${reporter.name}`));
  if (assignee && !assignee.accountId)
    lines.push(attribution(`Assigned in Azure DevOps to ${assignee.name}`));
  const description = fitText(lines.join('\n\n'));
  if (description.cut) warnings.push('description is over 32,767 characters: cut');

  const component = componentOf(f['System.AreaPath'], mapping);
  const custom = customValuesOf(f, mapping, warnings);
  const original = hoursToPeriod(f['Microsoft.VSTS.Scheduling.OriginalEstimate']);
  const remaining = hoursToPeriod(f['Microsoft.VSTS.Scheduling.RemainingWork']);
  const carried = commentsOf(
    item,
    comments,
    people,
    { body, fullComment: options.fullComment },
    updated,
    warnings,
  );
  const issueComments = carried.comments;
  const history = historyOf(revisions, mapping, people);
  warnings.push(...history.warnings);
  const files = (options.attachments ?? []).map((a) => {
    const attacher = people.of(a.by)?.accountId;
    return {
      name: a.name,
      ...(attacher ? { attacher } : {}),
      // The schema wants a date: the item's own when ADO gave the file none.
      created: importerDate(a.created) ?? created ?? '1970-01-01T00:00:00.000+0000',
      uri: `${STORED_COPY}${a.copy}`,
    };
  });
  const attachments = [...files, ...carried.attachments];

  const tags = typeof f['System.Tags'] === 'string' ? f['System.Tags'] : undefined;
  const issue: ImportIssue = {
    externalId: String(item.id),
    issueType: issueType.name,
    summary: title.summary,
    ...(state.target ? { status: state.target.status.name } : {}),
    ...(state.resolution ? { resolution: state.resolution } : {}),
    ...(priority ? { priority } : {}),
    ...(description.text ? { description: description.text } : {}),
    ...(reporter?.accountId ? { reporter: reporter.accountId } : {}),
    ...(assignee?.accountId ? { assignee: assignee.accountId } : {}),
    ...(created ? { created } : {}),
    ...(updated ? { updated } : {}),
    ...(resolutionDate ? { resolutionDate } : {}),
    labels: toLabels([...labelsFromTags(tags), ...(options.labels ?? []), sourceIdLabel(item.id)]),
    ...(component ? { components: [component] } : {}),
    ...(original ? { originalEstimate: original } : {}),
    ...(remaining ? { estimate: remaining } : {}),
    ...(custom.length > 0 ? { customFieldValues: custom } : {}),
    ...(issueComments.length > 0 ? { comments: issueComments } : {}),
    ...(history.history.length > 0 ? { history: history.history } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  };
  const parentId = parentIdFrom(item);
  return {
    sourceId: item.id,
    issue,
    level: mapping.typeLevels[issueType.name] ?? 0,
    ...(parentId !== undefined ? { parentId } : {}),
    relations: item.relations ?? [],
    accountIds: people.accountIds(),
    unmappedPeople: people.unmappedPeople(),
    ...(carried.full.length > 0 ? { fullComments: carried.full } : {}),
    warnings,
  };
}
