/**
 * The Agile process as Azure DevOps ships it (types, states with their categories, reasons, fields), plus the
 * sandbox organisation's custom fields. The sandbox serves this as metadata and the generator draws from it.
 */

export type AdoTypeName =
  | 'Epic'
  | 'Feature'
  | 'User Story'
  | 'Task'
  | 'Bug'
  | 'Issue'
  | 'Test Case'
  | 'Shared Steps';

export type StateCategory = 'Proposed' | 'InProgress' | 'Resolved' | 'Completed' | 'Removed';

export interface StateDef {
  name: string;
  category: StateCategory;
  color: string;
  /** Reasons for entering the state; the first is the default. */
  reasons: string[];
}

export interface TypeDef {
  name: string;
  referenceName: string;
  description: string;
  color: string;
  icon: string;
  states: StateDef[];
  /** Reference names of the fields on the type's form, beyond the common ones. */
  fields: string[];
  /** Types the process has but the generator never creates items of (a real project lists them too). */
  noItems?: boolean;
}

const s = (name: string, category: StateCategory, color: string, ...reasons: string[]): StateDef => ({
  name,
  category,
  color,
  reasons,
});

const PORTFOLIO_STATES = [
  s('New', 'Proposed', 'b2b2b2', 'New'),
  s('Active', 'InProgress', '007acc', 'Implementation started'),
  s('Resolved', 'Resolved', 'ff9d00', 'Stories complete'),
  s('Closed', 'Completed', '339933', 'Acceptance tests pass', 'Abandoned'),
  s('Removed', 'Removed', 'ffffff', 'Removed from the backlog'),
];

const PLANNING = [
  'Microsoft.VSTS.Common.Priority',
  'Microsoft.VSTS.Common.ValueArea',
  'Microsoft.VSTS.Common.Risk',
  'Microsoft.VSTS.Common.BusinessValue',
  'Microsoft.VSTS.Common.TimeCriticality',
  'Microsoft.VSTS.Scheduling.Effort',
  'Microsoft.VSTS.Scheduling.StartDate',
  'Microsoft.VSTS.Scheduling.TargetDate',
  'System.BoardColumn',
  'System.BoardColumnDone',
];
const WORK = [
  'Microsoft.VSTS.Scheduling.OriginalEstimate',
  'Microsoft.VSTS.Scheduling.RemainingWork',
  'Microsoft.VSTS.Scheduling.CompletedWork',
];
const STEPS = ['Microsoft.VSTS.TCM.Steps', 'Microsoft.VSTS.TCM.Parameters'];

export const AGILE_TYPES: TypeDef[] = [
  {
    name: 'Epic',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.Epic',
    description: 'Epics help teams effectively manage and groom their product backlog',
    color: 'FF7B00',
    icon: 'icon_crown',
    states: PORTFOLIO_STATES.map((st) => (st.name === 'New' ? { ...st, reasons: ['New epic'] } : st)),
    fields: [...PLANNING, 'Custom.ContractValue', 'Custom.GoLiveDate', 'Custom.CustomerTier'],
  },
  {
    name: 'Feature',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.Feature',
    description: 'Tracks a feature that will be released with the product',
    color: '773B93',
    icon: 'icon_trophy',
    states: PORTFOLIO_STATES.map((st) => (st.name === 'New' ? { ...st, reasons: ['New feature'] } : st)),
    fields: [...PLANNING, 'Custom.ContractValue', 'Custom.GoLiveDate', 'Custom.CustomerTier'],
  },
  {
    name: 'User Story',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.UserStory',
    description: 'Tracks an activity the user will be able to perform with the product',
    color: '009CCC',
    icon: 'icon_book',
    states: [
      s('New', 'Proposed', 'b2b2b2', 'New'),
      s('Active', 'InProgress', '007acc', 'Implementation started'),
      s('Resolved', 'Resolved', 'ff9d00', 'Code complete and unit tests pass'),
      s('Closed', 'Completed', '339933', 'Acceptance tests pass', 'Abandoned'),
      s('Removed', 'Removed', 'ffffff', 'Removed from the backlog'),
    ],
    fields: [
      'Microsoft.VSTS.Common.AcceptanceCriteria',
      'Microsoft.VSTS.Scheduling.StoryPoints',
      'Microsoft.VSTS.Common.Priority',
      'Microsoft.VSTS.Common.ValueArea',
      'Microsoft.VSTS.Common.Risk',
      'System.BoardColumn',
      'System.BoardColumnDone',
      'Custom.CustomerTier',
      'Custom.Complexity',
      'Custom.ReleaseNotes',
      'Custom.ReviewedBy',
    ],
  },
  {
    name: 'Task',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.Task',
    description: 'Tracks work that needs to be done.',
    color: 'F2CB1D',
    icon: 'icon_clipboard',
    states: [
      s('New', 'Proposed', 'b2b2b2', 'New'),
      s('Active', 'InProgress', '007acc', 'Work started'),
      s('Closed', 'Completed', '339933', 'Completed', 'Cut', 'Deferred', 'Obsolete'),
      s('Removed', 'Removed', 'ffffff', 'Removed from the backlog'),
    ],
    fields: [
      'Microsoft.VSTS.Common.Priority',
      'Microsoft.VSTS.Common.Activity',
      ...WORK,
      'Custom.Complexity',
    ],
  },
  {
    // The Agile bug has no Removed state (it is closed as Obsolete/Duplicate instead), as in the real process.
    name: 'Bug',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.Bug',
    description:
      'Describes a divergence between required and actual behavior, and tracks the work done to correct the defect and verify the correction.',
    color: 'CC293D',
    icon: 'icon_insect',
    states: [
      s('New', 'Proposed', 'b2b2b2', 'New defect reported', 'Build failure'),
      s('Active', 'InProgress', '007acc', 'Approved', 'Investigate', 'Reactivated'),
      s(
        'Resolved',
        'Resolved',
        'ff9d00',
        'Fixed',
        'As Designed',
        'Cannot Reproduce',
        'Duplicate',
        'Obsolete',
      ),
      s('Closed', 'Completed', '339933', 'Verified', 'Duplicate', 'Obsolete'),
    ],
    fields: [
      'Microsoft.VSTS.TCM.ReproSteps',
      'Microsoft.VSTS.TCM.SystemInfo',
      'Microsoft.VSTS.Common.Severity',
      'Microsoft.VSTS.Common.Priority',
      'Microsoft.VSTS.Scheduling.StoryPoints',
      ...WORK,
      'System.BoardColumn',
      'System.BoardColumnDone',
      'Custom.CustomerTier',
      'Custom.SlaBreached',
      'Custom.ExternalTicketId',
      'Custom.ReleaseNotes',
      'Custom.ReviewedBy',
    ],
  },
  {
    name: 'Issue',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.Issue',
    description: 'Tracks an obstacle to progress.',
    color: 'B4009E',
    icon: 'icon_traffic_cone',
    states: [s('Active', 'InProgress', '007acc', 'New'), s('Closed', 'Completed', '339933', 'Resolved')],
    fields: [
      'Microsoft.VSTS.Common.Priority',
      'Microsoft.VSTS.Scheduling.DueDate',
      'Custom.ExternalTicketId',
    ],
  },
  {
    name: 'Test Case',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.TestCase',
    description: 'Server-side data for a set of steps to be tested.',
    color: '004B50',
    icon: 'icon_test_case',
    states: [
      s('Design', 'Proposed', 'b2b2b2', 'New'),
      s('Ready', 'InProgress', '007acc', 'Completed design'),
      s('Closed', 'Completed', '339933', 'Obsolete', 'Duplicate'),
    ],
    fields: [
      ...STEPS,
      'Microsoft.VSTS.TCM.LocalDataSource',
      'Microsoft.VSTS.TCM.AutomationStatus',
      'Microsoft.VSTS.Common.Priority',
    ],
  },
  {
    name: 'Shared Steps',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.SharedStep',
    description: 'Server-side data for reusable set of test steps.',
    color: '004B50',
    icon: 'icon_test_step',
    states: [s('Active', 'InProgress', '007acc', 'New'), s('Closed', 'Completed', '339933', 'Obsolete')],
    fields: [...STEPS],
  },
  {
    name: 'Test Plan',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.TestPlan',
    description: 'Tracks test activities for a specific milestone or release.',
    color: '004B50',
    icon: 'icon_test_plan',
    states: [s('Active', 'InProgress', '007acc', 'New'), s('Inactive', 'Completed', 'b2b2b2', 'Completed')],
    fields: ['Microsoft.VSTS.Scheduling.StartDate', 'Microsoft.VSTS.Scheduling.FinishDate'],
    noItems: true,
  },
  {
    name: 'Test Suite',
    referenceName: 'Microsoft.VSTS.WorkItemTypes.TestSuite',
    description: 'Tracks test activites for a specific feature, requirement, or user story.',
    color: '004B50',
    icon: 'icon_test_suite',
    states: [
      s('In Planning', 'Proposed', 'b2b2b2', 'New'),
      s('In Progress', 'InProgress', '007acc', 'In Progress'),
      s('Completed', 'Completed', '339933', 'Completed'),
    ],
    fields: [],
    noItems: true,
  },
];

export const TYPE_BY_NAME = new Map(AGILE_TYPES.map((t) => [t.name.toLowerCase(), t]));

export function typeDef(name: string): TypeDef {
  const t = TYPE_BY_NAME.get(name.toLowerCase());
  if (!t) throw new Error(`Unknown work item type ${name}`);
  return t;
}

/**
 * Azure DevOps's limit for a `string` field (System.Title included): 255 characters (UTF-16 units, .NET
 * strings). A longer value is refused with TF401324 "Value for field '<ref>' is too long."
 */
export const ADO_STRING_MAX = 255;

export type FieldType =
  | 'string'
  | 'integer'
  | 'dateTime'
  | 'plainText'
  | 'html'
  | 'treePath'
  | 'history'
  | 'double'
  | 'boolean'
  | 'identity';

export interface FieldDef {
  referenceName: string;
  name: string;
  type: FieldType;
  readOnly?: boolean;
  isIdentity?: boolean;
  /** Picklist values (a picklist field is a `string`/`integer` field with isPicklist in the fields API). */
  picklist?: string[];
  description?: string;
}

const f = (
  referenceName: string,
  name: string,
  type: FieldType,
  extra: Partial<FieldDef> = {},
): FieldDef => ({
  referenceName,
  name,
  type,
  ...(type === 'identity' ? { isIdentity: true } : {}),
  ...extra,
});

/** Fields every type carries (system fields). */
export const SYSTEM_FIELDS: FieldDef[] = [
  f('System.Id', 'ID', 'integer', { readOnly: true }),
  f('System.Title', 'Title', 'string'),
  f('System.State', 'State', 'string'),
  f('System.Reason', 'Reason', 'string'),
  f('System.AreaPath', 'Area Path', 'treePath'),
  f('System.AreaId', 'Area ID', 'integer'),
  f('System.IterationPath', 'Iteration Path', 'treePath'),
  f('System.IterationId', 'Iteration ID', 'integer'),
  f('System.TeamProject', 'Team Project', 'string', { readOnly: true }),
  f('System.WorkItemType', 'Work Item Type', 'string'),
  f('System.AssignedTo', 'Assigned To', 'identity'),
  f('System.CreatedDate', 'Created Date', 'dateTime', { readOnly: true }),
  f('System.CreatedBy', 'Created By', 'identity', { readOnly: true }),
  f('System.ChangedDate', 'Changed Date', 'dateTime', { readOnly: true }),
  f('System.ChangedBy', 'Changed By', 'identity', { readOnly: true }),
  f('System.AuthorizedDate', 'Authorized Date', 'dateTime', { readOnly: true }),
  f('System.RevisedDate', 'Revised Date', 'dateTime', { readOnly: true }),
  f('System.Rev', 'Rev', 'integer', { readOnly: true }),
  f('System.Tags', 'Tags', 'plainText'),
  f('System.Description', 'Description', 'html'),
  f('System.History', 'History', 'history'),
  f('System.CommentCount', 'Comment Count', 'integer', { readOnly: true }),
  f('System.Parent', 'Parent', 'integer', { readOnly: true }),
  f('System.NodeName', 'Node Name', 'string', { readOnly: true }),
  f('System.BoardColumn', 'Board Column', 'string', { readOnly: true }),
  f('System.BoardColumnDone', 'Board Column Done', 'boolean', { readOnly: true }),
  f('Microsoft.VSTS.Common.StateChangeDate', 'State Change Date', 'dateTime', { readOnly: true }),
  f('Microsoft.VSTS.Common.ActivatedDate', 'Activated Date', 'dateTime', { readOnly: true }),
  f('Microsoft.VSTS.Common.ActivatedBy', 'Activated By', 'identity', { readOnly: true }),
  f('Microsoft.VSTS.Common.ResolvedDate', 'Resolved Date', 'dateTime', { readOnly: true }),
  f('Microsoft.VSTS.Common.ResolvedBy', 'Resolved By', 'identity', { readOnly: true }),
  f('Microsoft.VSTS.Common.ClosedDate', 'Closed Date', 'dateTime', { readOnly: true }),
  f('Microsoft.VSTS.Common.ClosedBy', 'Closed By', 'identity', { readOnly: true }),
];

export const COMMON_FIELD_REFS = SYSTEM_FIELDS.map((x) => x.referenceName).filter(
  (r) => r !== 'System.BoardColumn' && r !== 'System.BoardColumnDone',
);

export const STANDARD_FIELDS: FieldDef[] = [
  f('Microsoft.VSTS.Common.Priority', 'Priority', 'integer', { picklist: ['1', '2', '3', '4'] }),
  f('Microsoft.VSTS.Common.Severity', 'Severity', 'string', {
    picklist: ['1 - Critical', '2 - High', '3 - Medium', '4 - Low'],
  }),
  f('Microsoft.VSTS.Common.ValueArea', 'Value Area', 'string', { picklist: ['Architectural', 'Business'] }),
  f('Microsoft.VSTS.Common.Risk', 'Risk', 'string', { picklist: ['1 - High', '2 - Medium', '3 - Low'] }),
  f('Microsoft.VSTS.Common.Activity', 'Activity', 'string', {
    picklist: ['Deployment', 'Design', 'Development', 'Documentation', 'Requirements', 'Testing'],
  }),
  f('Microsoft.VSTS.Common.BusinessValue', 'Business Value', 'integer'),
  f('Microsoft.VSTS.Common.TimeCriticality', 'Time Criticality', 'double'),
  f('Microsoft.VSTS.Common.AcceptanceCriteria', 'Acceptance Criteria', 'html'),
  f('Microsoft.VSTS.Scheduling.StoryPoints', 'Story Points', 'double'),
  f('Microsoft.VSTS.Scheduling.Effort', 'Effort', 'double'),
  f('Microsoft.VSTS.Scheduling.OriginalEstimate', 'Original Estimate', 'double'),
  f('Microsoft.VSTS.Scheduling.RemainingWork', 'Remaining Work', 'double'),
  f('Microsoft.VSTS.Scheduling.CompletedWork', 'Completed Work', 'double'),
  f('Microsoft.VSTS.Scheduling.StartDate', 'Start Date', 'dateTime'),
  f('Microsoft.VSTS.Scheduling.TargetDate', 'Target Date', 'dateTime'),
  f('Microsoft.VSTS.Scheduling.FinishDate', 'Finish Date', 'dateTime'),
  f('Microsoft.VSTS.Scheduling.DueDate', 'Due Date', 'dateTime'),
  f('Microsoft.VSTS.TCM.ReproSteps', 'Repro Steps', 'html'),
  f('Microsoft.VSTS.TCM.SystemInfo', 'System Info', 'html'),
  f('Microsoft.VSTS.TCM.Steps', 'Steps', 'html'),
  f('Microsoft.VSTS.TCM.Parameters', 'Parameters', 'html'),
  f('Microsoft.VSTS.TCM.LocalDataSource', 'Local Data Source', 'html'),
  f('Microsoft.VSTS.TCM.AutomationStatus', 'Automation status', 'string', {
    picklist: ['Not Automated', 'Planned', 'Automated'],
  }),
];

/** The organisation's inherited-process custom fields: several types, each set on only some items. */
export const CUSTOM_FIELDS: FieldDef[] = [
  f('Custom.CustomerTier', 'Customer Tier', 'string', {
    picklist: ['Platinum', 'Gold', 'Silver', 'Bronze'],
    description: 'Support tier of the customer who asked for this',
  }),
  f('Custom.ContractValue', 'Contract Value', 'double', { description: 'Annual contract value in EUR' }),
  f('Custom.SlaBreached', 'SLA Breached', 'boolean'),
  f('Custom.GoLiveDate', 'Go-Live Date', 'dateTime'),
  f('Custom.ReleaseNotes', 'Release Notes', 'html'),
  f('Custom.ExternalTicketId', 'External Ticket ID', 'string', { description: 'Zendesk ticket number' }),
  f('Custom.ReviewedBy', 'Reviewed By', 'identity'),
  f('Custom.Complexity', 'Complexity', 'integer'),
];

export const ALL_FIELDS: FieldDef[] = [...SYSTEM_FIELDS, ...STANDARD_FIELDS, ...CUSTOM_FIELDS];
export const FIELD_BY_REF = new Map(ALL_FIELDS.map((x) => [x.referenceName.toLowerCase(), x]));
export const FIELD_BY_NAME = new Map(ALL_FIELDS.map((x) => [x.name.toLowerCase(), x]));

/** A field by reference name or friendly name, case-insensitively (as WIQL and the fields API resolve them). */
export function findField(nameOrRef: string): FieldDef | undefined {
  const key = nameOrRef.toLowerCase();
  return FIELD_BY_REF.get(key) ?? FIELD_BY_NAME.get(key);
}

/** Work item link types: reference name, friendly name, and the opposite end. */
export interface LinkTypeDef {
  referenceName: string;
  name: string;
  opposite: string;
  topology: 'tree' | 'dependency' | 'network';
}

export const LINK_TYPES: LinkTypeDef[] = [
  {
    referenceName: 'System.LinkTypes.Hierarchy-Forward',
    name: 'Child',
    opposite: 'System.LinkTypes.Hierarchy-Reverse',
    topology: 'tree',
  },
  {
    referenceName: 'System.LinkTypes.Hierarchy-Reverse',
    name: 'Parent',
    opposite: 'System.LinkTypes.Hierarchy-Forward',
    topology: 'tree',
  },
  {
    referenceName: 'System.LinkTypes.Related',
    name: 'Related',
    opposite: 'System.LinkTypes.Related',
    topology: 'network',
  },
  {
    referenceName: 'System.LinkTypes.Dependency-Forward',
    name: 'Successor',
    opposite: 'System.LinkTypes.Dependency-Reverse',
    topology: 'dependency',
  },
  {
    referenceName: 'System.LinkTypes.Dependency-Reverse',
    name: 'Predecessor',
    opposite: 'System.LinkTypes.Dependency-Forward',
    topology: 'dependency',
  },
  {
    referenceName: 'System.LinkTypes.Duplicate-Forward',
    name: 'Duplicate',
    opposite: 'System.LinkTypes.Duplicate-Reverse',
    topology: 'tree',
  },
  {
    referenceName: 'System.LinkTypes.Duplicate-Reverse',
    name: 'Duplicate Of',
    opposite: 'System.LinkTypes.Duplicate-Forward',
    topology: 'tree',
  },
  {
    referenceName: 'Microsoft.VSTS.Common.TestedBy-Forward',
    name: 'Tested By',
    opposite: 'Microsoft.VSTS.Common.TestedBy-Reverse',
    topology: 'dependency',
  },
  {
    referenceName: 'Microsoft.VSTS.Common.TestedBy-Reverse',
    name: 'Tests',
    opposite: 'Microsoft.VSTS.Common.TestedBy-Forward',
    topology: 'dependency',
  },
  {
    referenceName: 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Forward',
    name: 'Test Case',
    opposite: 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse',
    topology: 'dependency',
  },
  {
    referenceName: 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse',
    name: 'Shared Steps',
    opposite: 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Forward',
    topology: 'dependency',
  },
];

export const LINK_TYPE_BY_REF = new Map(LINK_TYPES.map((l) => [l.referenceName, l]));
