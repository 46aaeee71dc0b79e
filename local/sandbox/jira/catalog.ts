/**
 * The Jira site's fixed configuration: issue types, statuses, priorities, resolutions, link types, fields,
 * permissions and the default workflows. Ids follow Jira Cloud's conventions (numeric strings, custom fields
 * `customfield_100xx`) so a client cannot tell them from a real company-managed software project.
 */

export type StatusCategoryKey = 'new' | 'indeterminate' | 'done';

export interface StatusDef {
  id: string;
  name: string;
  category: StatusCategoryKey;
}

export interface IssueTypeDef {
  id: string;
  name: string;
  description: string;
  /** Jira's hierarchy: Epic 1, standard issues 0, subtasks -1. */
  hierarchyLevel: 1 | 0 | -1;
  avatarId: number;
}

export interface TransitionDef {
  id: string;
  name: string;
  /** Status ids the transition starts from; 'any' makes it a global transition. */
  from: string[] | 'any';
  to: string;
}

export interface WorkflowDef {
  initial: string;
  statuses: string[];
  transitions: TransitionDef[];
}

export const STATUS_CATEGORIES: Record<StatusCategoryKey, { id: number; name: string; colorName: string }> = {
  new: { id: 2, name: 'To Do', colorName: 'blue-gray' },
  indeterminate: { id: 4, name: 'In Progress', colorName: 'yellow' },
  done: { id: 3, name: 'Done', colorName: 'green' },
};

export const DEFAULT_STATUSES: StatusDef[] = [
  { id: '10000', name: 'To Do', category: 'new' },
  { id: '3', name: 'In Progress', category: 'indeterminate' },
  { id: '10001', name: 'In Review', category: 'indeterminate' },
  { id: '10002', name: 'Done', category: 'done' },
  { id: '10003', name: "Won't Do", category: 'done' },
  { id: '10004', name: 'In Testing', category: 'indeterminate' },
];

export const ISSUE_TYPES: IssueTypeDef[] = [
  {
    id: '10000',
    name: 'Epic',
    description: 'A big user story that needs to be broken down.',
    hierarchyLevel: 1,
    avatarId: 10307,
  },
  {
    id: '10001',
    name: 'Story',
    description: 'Stories track functionality or features expressed as user goals.',
    hierarchyLevel: 0,
    avatarId: 10315,
  },
  {
    id: '10002',
    name: 'Task',
    description: 'A small, distinct piece of work.',
    hierarchyLevel: 0,
    avatarId: 10318,
  },
  {
    id: '10003',
    name: 'Bug',
    description: 'Bugs track problems or errors.',
    hierarchyLevel: 0,
    avatarId: 10303,
  },
  {
    id: '10004',
    name: 'Sub-task',
    description: 'Subtasks track small pieces of work that are part of a larger task.',
    hierarchyLevel: -1,
    avatarId: 10316,
  },
  {
    id: '10005',
    name: 'Test',
    description: 'A test case.',
    hierarchyLevel: 0,
    avatarId: 10311,
  },
];

export const PRIORITIES = [
  { id: '1', name: 'Highest', statusColor: '#d04437', description: 'This problem will block progress.' },
  {
    id: '2',
    name: 'High',
    statusColor: '#f15C75',
    description: 'Serious problem that could block progress.',
  },
  { id: '3', name: 'Medium', statusColor: '#f79232', description: 'Has the potential to affect progress.' },
  { id: '4', name: 'Low', statusColor: '#707070', description: 'Minor problem or easily worked around.' },
  {
    id: '5',
    name: 'Lowest',
    statusColor: '#999999',
    description: 'Trivial problem with little or no impact.',
  },
];
export const DEFAULT_PRIORITY_ID = '3';

export type PriorityDef = (typeof PRIORITIES)[number];

export const RESOLUTIONS = [
  { id: '10000', name: 'Done', description: 'Work has been completed on this issue.' },
  { id: '10001', name: "Won't Do", description: 'This issue will not be actioned.' },
  { id: '10002', name: 'Duplicate', description: 'The problem is a duplicate of an existing issue.' },
  { id: '10003', name: 'Cannot Reproduce', description: 'The problem could not be reproduced.' },
];

/** Blocks, Cloners, Duplicate and Relates are Jira's defaults; Tests is the one test-management apps add. */
export const LINK_TYPES = [
  { id: '10000', name: 'Blocks', inward: 'is blocked by', outward: 'blocks' },
  { id: '10001', name: 'Cloners', inward: 'is cloned by', outward: 'clones' },
  { id: '10002', name: 'Duplicate', inward: 'is duplicated by', outward: 'duplicates' },
  { id: '10003', name: 'Relates', inward: 'relates to', outward: 'relates to' },
  { id: '10004', name: 'Tests', inward: 'is tested by', outward: 'tests' },
];

export const CUSTOM = {
  startDate: 'customfield_10015',
  storyPoints: 'customfield_10016',
  rank: 'customfield_10019',
  sprint: 'customfield_10020',
  acceptanceCriteria: 'customfield_10035',
  sourceUrl: 'customfield_10040',
  supportLevel: 'customfield_10050',
} as const;

export type FieldKind = 'string' | 'adf' | 'number' | 'date' | 'url' | 'sprint' | 'rank';

export interface FieldDef {
  id: string;
  name: string;
  custom: boolean;
  /** The JSON type as Jira's field schema reports it. */
  schema: { type: string; items?: string; system?: string; custom?: string; customId?: number };
  navigable: boolean;
  orderable: boolean;
  searchable: boolean;
  clauseNames: string[];
  /** How a custom field's value is validated on create and edit. */
  kind?: FieldKind;
}

const sys = (
  id: string,
  name: string,
  type: string,
  opts: { items?: string; navigable?: boolean; orderable?: boolean; clause?: string[] } = {},
): FieldDef => ({
  id,
  name,
  custom: false,
  schema: { type, system: id, ...(opts.items ? { items: opts.items } : {}) },
  navigable: opts.navigable ?? true,
  orderable: opts.orderable ?? true,
  searchable: true,
  clauseNames: opts.clause ?? [id],
});

const cf = (
  id: string,
  name: string,
  type: string,
  custom: string,
  kind: FieldKind,
  items?: string,
): FieldDef => {
  const customId = Number(id.slice('customfield_'.length));
  return {
    id,
    name,
    custom: true,
    schema: { type, custom, customId, ...(items ? { items } : {}) },
    navigable: true,
    orderable: true,
    searchable: true,
    clauseNames: [`cf[${customId}]`, name],
    kind,
  };
};

export const FIELDS: FieldDef[] = [
  sys('summary', 'Summary', 'string'),
  sys('description', 'Description', 'string'),
  sys('issuetype', 'Issue Type', 'issuetype', { clause: ['issuetype', 'type'] }),
  sys('project', 'Project', 'project'),
  sys('status', 'Status', 'status', { orderable: false }),
  sys('statuscategorychangedate', 'Status Category Changed', 'datetime', { orderable: false }),
  sys('priority', 'Priority', 'priority'),
  sys('resolution', 'Resolution', 'resolution'),
  sys('resolutiondate', 'Resolved', 'datetime', { orderable: false, clause: ['resolved', 'resolutiondate'] }),
  sys('labels', 'Labels', 'array', { items: 'string', clause: ['labels'] }),
  sys('assignee', 'Assignee', 'user'),
  sys('reporter', 'Reporter', 'user'),
  sys('creator', 'Creator', 'user', { orderable: false }),
  sys('created', 'Created', 'datetime', { orderable: false, clause: ['created', 'createdDate'] }),
  sys('updated', 'Updated', 'datetime', { orderable: false, clause: ['updated', 'updatedDate'] }),
  sys('duedate', 'Due date', 'date', { clause: ['due', 'duedate'] }),
  sys('components', 'Components', 'array', { items: 'component', clause: ['component'] }),
  sys('parent', 'Parent', 'issuelink', { clause: ['parent'] }),
  sys('subtasks', 'Sub-tasks', 'array', { items: 'issuelinks', orderable: false, clause: ['subtasks'] }),
  sys('issuelinks', 'Linked Issues', 'array', { items: 'issuelinks', clause: ['issueLink'] }),
  sys('attachment', 'Attachment', 'array', { items: 'attachment', clause: ['attachments'] }),
  sys('comment', 'Comment', 'comments-page', { navigable: false }),
  sys('worklog', 'Log Work', 'array', { items: 'worklog', navigable: false }),
  sys('timetracking', 'Time tracking', 'timetracking', { navigable: false }),
  sys('timeoriginalestimate', 'Original estimate', 'number', { orderable: false }),
  sys('timeestimate', 'Remaining Estimate', 'number', { orderable: false }),
  sys('timespent', 'Time Spent', 'number', { orderable: false }),
  cf(
    CUSTOM.startDate,
    'Start date',
    'date',
    'com.atlassian.jira.plugin.system.customfieldtypes:datepicker',
    'date',
  ),
  cf(
    CUSTOM.storyPoints,
    'Story Points',
    'number',
    'com.atlassian.jira.plugin.system.customfieldtypes:float',
    'number',
  ),
  cf(CUSTOM.rank, 'Rank', 'any', 'com.pyxis.greenhopper.jira:gh-lexo-rank', 'rank'),
  cf(CUSTOM.sprint, 'Sprint', 'array', 'com.pyxis.greenhopper.jira:gh-sprint', 'sprint', 'json'),
  cf(
    CUSTOM.acceptanceCriteria,
    'Acceptance Criteria',
    'string',
    'com.atlassian.jira.plugin.system.customfieldtypes:textarea',
    'adf',
  ),
  cf(
    CUSTOM.sourceUrl,
    'Source Link',
    'string',
    'com.atlassian.jira.plugin.system.customfieldtypes:url',
    'url',
  ),
  // A single-line text field, as sites add for their own data (the migration's confirmed field mappings).
  cf(
    CUSTOM.supportLevel,
    'Support Level',
    'string',
    'com.atlassian.jira.plugin.system.customfieldtypes:textfield',
    'string',
  ),
];

/** Fields a create or edit may set (the rest are computed by Jira). */
export const SETTABLE_SYSTEM_FIELDS = new Set([
  'summary',
  'description',
  'issuetype',
  'project',
  'priority',
  'labels',
  'assignee',
  'reporter',
  'duedate',
  'components',
  'parent',
  'timetracking',
]);

export const PROJECT_PERMISSIONS: {
  key: string;
  name: string;
  type: 'PROJECT' | 'GLOBAL';
  adminOnly: boolean;
}[] = [
  { key: 'ADMINISTER', name: 'Administer Jira', type: 'GLOBAL', adminOnly: true },
  { key: 'ADMINISTER_PROJECTS', name: 'Administer Projects', type: 'PROJECT', adminOnly: true },
  // The default software permission scheme grants Manage sprints to the Administrators role only.
  { key: 'MANAGE_SPRINTS_PERMISSION', name: 'Manage sprints', type: 'PROJECT', adminOnly: true },
  { key: 'BROWSE_PROJECTS', name: 'Browse Projects', type: 'PROJECT', adminOnly: false },
  { key: 'CREATE_ISSUES', name: 'Create Issues', type: 'PROJECT', adminOnly: false },
  { key: 'EDIT_ISSUES', name: 'Edit Issues', type: 'PROJECT', adminOnly: false },
  { key: 'TRANSITION_ISSUES', name: 'Transition Issues', type: 'PROJECT', adminOnly: false },
  { key: 'RESOLVE_ISSUES', name: 'Resolve Issues', type: 'PROJECT', adminOnly: false },
  { key: 'CLOSE_ISSUES', name: 'Close Issues', type: 'PROJECT', adminOnly: false },
  { key: 'ASSIGN_ISSUES', name: 'Assign Issues', type: 'PROJECT', adminOnly: false },
  { key: 'ASSIGNABLE_USER', name: 'Assignable User', type: 'PROJECT', adminOnly: false },
  { key: 'MODIFY_REPORTER', name: 'Modify Reporter', type: 'PROJECT', adminOnly: false },
  { key: 'SCHEDULE_ISSUES', name: 'Schedule Issues', type: 'PROJECT', adminOnly: false },
  { key: 'LINK_ISSUES', name: 'Link Issues', type: 'PROJECT', adminOnly: false },
  { key: 'CREATE_ATTACHMENTS', name: 'Create Attachments', type: 'PROJECT', adminOnly: false },
  { key: 'ADD_COMMENTS', name: 'Add Comments', type: 'PROJECT', adminOnly: false },
  { key: 'WORK_ON_ISSUES', name: 'Work On Issues', type: 'PROJECT', adminOnly: false },
  { key: 'DELETE_ISSUES', name: 'Delete Issues', type: 'PROJECT', adminOnly: true },
];

/**
 * The default workflow: a story needs three hops from To Do to Done (To Do -> In Progress -> In Review ->
 * Done); Won't Do is a global transition; a Bug passes through In Testing before Done. Transition ids are
 * Jira's usual multiples of ten.
 */
export function defaultWorkflow(issueTypeName: string): WorkflowDef {
  const [toDo, inProgress, inReview, done, wontDo, inTesting] = [
    '10000',
    '3',
    '10001',
    '10002',
    '10003',
    '10004',
  ];
  const common = [
    { id: '11', name: 'To Do', from: [inProgress], to: toDo },
    { id: '21', name: 'Start Progress', from: [toDo], to: inProgress },
    { id: '31', name: 'Submit for Review', from: [inProgress], to: inReview },
    { id: '41', name: 'Back to In Progress', from: [inReview], to: inProgress },
    { id: '61', name: "Won't Do", from: 'any' as const, to: wontDo },
    { id: '71', name: 'Reopen', from: [done, wontDo], to: toDo },
  ];
  if (issueTypeName === 'Bug') {
    return {
      initial: toDo,
      statuses: [toDo, inProgress, inReview, inTesting, done, wontDo],
      transitions: [
        ...common,
        { id: '81', name: 'Ready for Testing', from: [inReview], to: inTesting },
        { id: '91', name: 'Failed Testing', from: [inTesting], to: inProgress },
        { id: '51', name: 'Done', from: [inTesting], to: done },
      ],
    };
  }
  return {
    initial: toDo,
    statuses: [toDo, inProgress, inReview, done, wontDo],
    transitions: [...common, { id: '51', name: 'Done', from: [inReview], to: done }],
  };
}
