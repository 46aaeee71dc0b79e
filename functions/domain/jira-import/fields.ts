/**
 * The mapped fields of one set of ADO fields (the item, or one of its revisions), as Jira names and shows them:
 * what the issue carries at the end, and what history items compare revision by revision. Only these fields
 * are tracked, so ADO's bookkeeping fields (System.Rev, System.Watermark, System.AuthorizedDate ...; the
 * history page's NOISE_FIELDS) and anything unmapped never reach the history.
 *
 * | ADO field                                   | Jira (fieldType, field)          | value (`to`) / text (`toString`)     |
 * |---------------------------------------------|----------------------------------|--------------------------------------|
 * | System.WorkItemType                         | jira `issuetype`                 | issue type id / name                 |
 * | System.Title                                | jira `summary`                   | - / summary (summaryFromTitle)       |
 * | System.State (by the run's state map)       | jira `status`, `resolution`      | status id / name; - / resolution     |
 * | Microsoft.VSTS.Common.Priority              | jira `priority`                  | - / the site's priority name         |
 * | System.AssignedTo                           | jira `assignee`                  | account id (none without one) / name |
 * | System.AreaPath (preflight's components)    | jira `Component`                 | - / component name                   |
 * | System.IterationPath (preflight's sprints)  | custom, the Sprint field's name  | sprint id when known / sprint name   |
 * | System.Tags                                 | jira `labels`                    | - / labels, space separated          |
 * | Microsoft.VSTS.Scheduling.OriginalEstimate  | jira `timeoriginalestimate`      | seconds / seconds                    |
 * | Microsoft.VSTS.Scheduling.RemainingWork     | jira `timeestimate`              | seconds / seconds                    |
 * | StoryPoints / Effort / Size (SIZE_FIELDS)   | custom, the Story Points field   | - / the number                       |
 * | each confirmed custom field mapping         | custom, the field's name         | - / the value as text                |
 */
import { htmlToAdf } from '../adf/index.ts';
import { customFieldValue, type FieldShape } from '../mapping/custom-fields.ts';
import { storyPointsFrom } from '../mapping/estimates.ts';
import { labelsFromTags } from '../mapping/labels.ts';
import { priorityName, sitePriorityFor } from '../mapping/priority.ts';
import type { StateTarget } from '../mapping/states.ts';
import { summaryFromTitle } from '../mapping/summary.ts';
import { FIELD_TYPE_CUSTOM, FIELD_TYPE_JIRA } from './format.ts';
import type { ImportMapping } from './mapping.ts';
import type { People } from './people.ts';
import { hoursToSeconds } from './values.ts';
import { adfToWiki } from './wiki.ts';

export interface TrackedValue {
  fieldType: typeof FIELD_TYPE_JIRA | typeof FIELD_TYPE_CUSTOM;
  field: string;
  /** Jira's id for the value, when Jira has one and the run knows it (a status id, an account id). */
  id: string | null;
  /** What Jira shows; null when the field is empty. */
  text: string | null;
}

const lower = (s: string) => s.trim().toLowerCase();

/** The state's Jira status and resolution (a done status without one gets `doneResolution`). */
export function stateTargetOf(
  fields: Readonly<Record<string, unknown>>,
  mapping: ImportMapping,
): { target?: StateTarget; resolution?: string; done: boolean } {
  const type = String(fields['System.WorkItemType'] ?? '');
  const target = mapping.states[type]?.[String(fields['System.State'] ?? '')];
  if (!target) return { done: false };
  const issueType = mapping.typeMap[type]?.name ?? '';
  const done = (mapping.doneStatuses[lower(issueType)] ?? []).some(
    (s) => lower(s) === lower(target.status.name),
  );
  const resolution = target.resolution ?? (done ? mapping.doneResolution : undefined);
  return { target, done, ...(resolution ? { resolution } : {}) };
}

/** The component an area path maps to (preflight's table, paths compared ignoring case). */
export function componentOf(areaPath: unknown, mapping: ImportMapping): string | undefined {
  if (typeof areaPath !== 'string') return undefined;
  return mapping.components?.find((c) => c.areaPaths.some((p) => lower(p) === lower(areaPath)))?.name;
}

export function sprintOf(iterationPath: unknown, mapping: ImportMapping) {
  if (typeof iterationPath !== 'string') return undefined;
  return mapping.sprints?.find((s) => lower(s.iterationPath) === lower(iterationPath));
}

/**
 * A custom field's ADO value as the importer takes it (`value`) and as history shows it (`text`): scalars as
 * strings, several values as a list; multi-line text as wiki markup. Undefined when empty; `problem` when it
 * cannot be read as the field's type (customFieldValue's rules).
 */
export function importFieldValue(
  raw: unknown,
  shape: FieldShape,
): { value?: string | string[]; text?: string; problem?: string } {
  if (shape === 'adf') {
    if (typeof raw !== 'string' || raw.trim() === '') return {};
    const text = adfToWiki(htmlToAdf(raw));
    return text === '' ? {} : { value: text, text };
  }
  const { value, problem } = customFieldValue(raw, shape);
  if (problem) return { problem };
  if (value === undefined) return {};
  const plain = (v: unknown) =>
    typeof v === 'object' && v !== null && 'value' in v ? String((v as { value: unknown }).value) : String(v);
  if (Array.isArray(value)) {
    const list = value.map(plain);
    return list.length === 0 ? {} : { value: list, text: list.join(', ') };
  }
  return { value: plain(value), text: plain(value) };
}

const jira = (field: string, id: string | null, text: string | null | undefined): TrackedValue => ({
  fieldType: FIELD_TYPE_JIRA,
  field,
  id,
  text: text ?? null,
});
const custom = (field: string, id: string | null, text: string | null | undefined): TrackedValue => ({
  fieldType: FIELD_TYPE_CUSTOM,
  field,
  id,
  text: text ?? null,
});

/** Every tracked field, in a fixed order, with its value in these fields (null for none). */
export function trackedValues(
  fields: Readonly<Record<string, unknown>>,
  mapping: ImportMapping,
  people: People,
): TrackedValue[] {
  const type = String(fields['System.WorkItemType'] ?? '');
  const issueType = mapping.typeMap[type];
  const state = stateTargetOf(fields, mapping);
  const stateName = typeof fields['System.State'] === 'string' ? fields['System.State'] : null;
  const assignee = people.of(fields['System.AssignedTo']);
  const sprint = sprintOf(fields['System.IterationPath'], mapping);
  const tags = labelsFromTags(typeof fields['System.Tags'] === 'string' ? fields['System.Tags'] : undefined);
  const points = storyPointsFrom(fields);
  const original = hoursToSeconds(fields['Microsoft.VSTS.Scheduling.OriginalEstimate']) ?? null;
  const remaining = hoursToSeconds(fields['Microsoft.VSTS.Scheduling.RemainingWork']) ?? null;
  const priority = fields['Microsoft.VSTS.Common.Priority'];
  const out: TrackedValue[] = [
    jira('issuetype', issueType?.id ?? null, issueType?.name ?? (type || null)),
    jira('summary', null, summaryFromTitle(fields['System.Title']).summary),
    // A state without a Jira status is shown by its ADO name: history is text, and the change happened.
    jira('status', state.target?.status.id ?? null, state.target?.status.name ?? stateName),
    jira('resolution', null, state.resolution),
    jira(
      'priority',
      null,
      priority === undefined || priority === null
        ? null
        : (sitePriorityFor(priority, mapping.priorityNames) ?? priorityName(priority)),
    ),
    jira('assignee', assignee?.accountId ?? null, assignee?.name),
    jira('Component', null, componentOf(fields['System.AreaPath'], mapping)),
    jira('labels', null, tags.length > 0 ? tags.join(' ') : null),
    jira('timeoriginalestimate', original, original),
    jira('timeestimate', remaining, remaining),
  ];
  if (mapping.sprintField)
    out.push(
      custom(
        mapping.sprintField.name,
        sprint?.id === undefined || sprint.id === null ? null : String(sprint.id),
        sprint?.name,
      ),
    );
  if (mapping.storyPoints)
    out.push(custom(mapping.storyPoints.name, null, points === undefined ? null : String(points)));
  for (const m of mapping.customFields ?? [])
    out.push(custom(m.name, null, importFieldValue(fields[m.source], m.shape).text));
  return out;
}
