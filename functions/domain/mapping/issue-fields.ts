/**
 * One work item -> the `fields` of Jira's create-issue request. Only fields with a value are sent: Jira fills
 * its defaults for the rest, and an explicit null on a field the create screen lacks would fail the create.
 * Anything that cannot be carried over (a person without a Jira account, a priority the scheme lacks) is
 * left out with a warning instead of failing the item.
 */
import { hoursToJiraDuration, storyPointsFrom } from './estimates.ts';
import { parseAdoIdentity } from './identity.ts';
import type { IssueTypeRef } from './issue-types.ts';
import { labelsFromTags, sourceIdLabel, toLabels } from './labels.ts';
import { priorityName } from './priority.ts';
import { summaryFromTitle } from './summary.ts';
import { sameName } from './text.ts';

export interface SourceWorkItem {
  id: number;
  fields: Readonly<Record<string, unknown>>;
}

export interface IssueFieldsContext {
  projectKey: string;
  /** From mapTypes. */
  typeMap: Readonly<Record<string, IssueTypeRef>>;
  /** The site's priority names (Jira's `priority` list). */
  priorityNames: readonly string[];
  /** The Story Points custom field id (`customfield_10016` on most sites), when the site has one. */
  storyPointsFieldId?: string;
  /** E-mail (lower-case) -> Jira accountId, undefined when the person has no Jira account. */
  users: (email: string) => string | undefined;
  parentKey?: string;
  /** The description as an ADF document, built by the caller (it holds the whole title when truncated). */
  description?: unknown;
  componentIds?: readonly { id: string }[];
  /**
   * The open sprint to create the issue in, through the site's Sprint field (its id differs per site). Jira
   * takes a bare sprint id on write, though it reads the field back as a list of sprints.
   */
  sprint?: { fieldId: string; id: number };
  /** More labels (e.g. iteration or migration-run markers); sanitised like tags. */
  labelsExtra?: readonly string[];
}

export interface IssueFields {
  fields: Record<string, unknown>;
  warnings: string[];
}

type Role = 'assignee' | 'reporter';

/** `{accountId}` for an identity field's person, or a warning saying why there is none. */
function account(
  role: Role,
  value: unknown,
  users: IssueFieldsContext['users'],
): { accountId?: string; warning?: string } {
  const person = parseAdoIdentity(value);
  if (!person) return {};
  if (!person.email)
    return { warning: `${role} "${person.displayName}" has no e-mail address to match a Jira account` };
  const accountId = users(person.email);
  return accountId ? { accountId } : { warning: `${role} ${person.email} has no Jira account` };
}

export function buildIssueFields(item: SourceWorkItem, ctx: IssueFieldsContext): IssueFields {
  const f = item.fields;
  const sourceType = String(f['System.WorkItemType'] ?? '');
  const issueType = ctx.typeMap[sourceType];
  if (!issueType) {
    // mapTypes reported the type (or excluded it); reaching here is a caller bug, not a data problem.
    throw new Error(`work item ${item.id} is a "${sourceType}", which has no Jira issue type`);
  }
  const warnings: string[] = [];
  const fields: Record<string, unknown> = {
    project: { key: ctx.projectKey },
    issuetype: { id: issueType.id },
    summary: summaryFromTitle(f['System.Title']).summary,
  };
  if (ctx.description !== undefined && ctx.description !== null) fields.description = ctx.description;

  const tags = typeof f['System.Tags'] === 'string' ? f['System.Tags'] : undefined;
  fields.labels = toLabels([...labelsFromTags(tags), ...(ctx.labelsExtra ?? []), sourceIdLabel(item.id)]);

  const wanted = priorityName(f['Microsoft.VSTS.Common.Priority']);
  const priority = ctx.priorityNames.find((p) => sameName(p, wanted));
  if (priority !== undefined) fields.priority = { name: priority };
  else warnings.push(`priority "${wanted}" is not in the Jira priority scheme: Jira's default applies`);

  for (const [role, ref] of [
    ['assignee', 'System.AssignedTo'],
    ['reporter', 'System.CreatedBy'],
  ] as const) {
    const { accountId, warning } = account(role, f[ref], ctx.users);
    if (accountId) fields[role] = { accountId };
    if (warning) warnings.push(warning);
  }

  if (ctx.parentKey) fields.parent = { key: ctx.parentKey };

  const points = storyPointsFrom(f);
  if (points !== undefined) {
    if (ctx.storyPointsFieldId) fields[ctx.storyPointsFieldId] = points;
    else warnings.push(`story points ${points} not migrated: the Jira site has no Story Points field`);
  }

  const originalEstimate = hoursToJiraDuration(f['Microsoft.VSTS.Scheduling.OriginalEstimate']);
  const remainingEstimate = hoursToJiraDuration(f['Microsoft.VSTS.Scheduling.RemainingWork']);
  if (originalEstimate !== undefined || remainingEstimate !== undefined) {
    fields.timetracking = {
      ...(originalEstimate !== undefined ? { originalEstimate } : {}),
      ...(remainingEstimate !== undefined ? { remainingEstimate } : {}),
    };
  }

  if (ctx.componentIds && ctx.componentIds.length > 0) {
    fields.components = ctx.componentIds.map((c) => ({ id: c.id }));
  }
  if (ctx.sprint) fields[ctx.sprint.fieldId] = ctx.sprint.id;
  return { fields, warnings };
}
