/**
 * Azure DevOps -> Jira mapping rules: pure functions the migration engine applies (types, states,
 * transitions, fields, links, the create payload).
 */

export { componentNameForArea, componentNamesForAreas } from './components.ts';
export {
  type CustomFieldMapping,
  customFieldValue,
  customFieldWrites,
  type FieldPlan,
  type FieldShape,
  type JiraFieldMeta,
  planFieldMappings,
  shapeOf,
} from './custom-fields.ts';
export { hoursToJiraDuration, nonNegativeNumber, SIZE_FIELDS, storyPointsFrom } from './estimates.ts';
export { type AdoPerson, type PeopleByTable, parseAdoIdentity, peopleByTable } from './identity.ts';
export {
  buildIssueFields,
  type IssueFields,
  type IssueFieldsContext,
  type SourceWorkItem,
} from './issue-fields.ts';
export {
  DEFAULT_TYPE_TARGETS,
  type IssueTypeRef,
  mapTypes,
  NOT_MIGRATED_TYPES,
  type TargetIssueType,
  type TypeMapping,
} from './issue-types.ts';
export {
  labelsFromTags,
  SOURCE_ID_LABEL_PREFIX,
  sourceIdFromLabel,
  sourceIdLabel,
  toLabel,
  toLabels,
} from './labels.ts';
export {
  type JiraLinkKind,
  LINK_TABLE,
  type LinkMapping,
  type LinkPlanOptions,
  linkTypeFor,
  type PlannedLink,
  parentIdFrom,
  planIssueLinks,
  type SourceItemRelations,
  type SourceRelation,
  workItemIdFromUrl,
} from './links.ts';
export { lookupName, mergeOverrides, type Override, type OverrideLayer, overrideFor } from './overrides.ts';
export { DEFAULT_PRIORITY, type JiraPriorityName, PRIORITY_BY_ADO, priorityName } from './priority.ts';
export {
  type IterationNode,
  type PlannedSprint,
  planSprints,
  type SprintInJira,
  type SprintPlan,
  type SprintState,
  type SprintStep,
  sprintStateOn,
  sprintSteps,
  type UnplannedReason,
} from './sprints.ts';
export {
  type AdoStateCategory,
  type IssueTypeStatuses,
  JIRA_DEFAULT_RESOLUTIONS,
  type JiraStatusCategory,
  mapStates,
  type SourceState,
  type StateMapping,
  type StateMappingOptions,
  type StateTarget,
  type StatusRef,
  type TargetStatus,
} from './states.ts';
export { EMPTY_TITLE_SUMMARY, summaryFromTitle } from './summary.ts';
export {
  edgesFromJiraTransitions,
  type PathOptions,
  shortestTransitionPath,
  type TransitionEdge,
  type TransitionStep,
} from './transitions.ts';
