import { describe, expect, it } from 'vitest';
import {
  type IssueTypeStatuses,
  mapStates,
  mapTypes,
  type SourceState,
  type TargetStatus,
} from '../../functions/domain/mapping/index.ts';
import { AGILE_TYPES } from '../../local/sandbox/generator/process.ts';
import {
  DEFAULT_STATUSES,
  defaultWorkflow,
  ISSUE_TYPES,
  RESOLUTIONS,
} from '../../local/sandbox/jira/catalog.ts';

/** What Jira's project statuses answer holds for the sandbox site (each type's workflow, in order). */
const projectStatuses: IssueTypeStatuses[] = ISSUE_TYPES.map((t) => ({
  id: t.id,
  name: t.name,
  statuses: defaultWorkflow(t.name).statuses.map((id) => {
    const s = DEFAULT_STATUSES.find((x) => x.id === id)!;
    return { id: s.id, name: s.name, statusCategory: { key: s.category } };
  }),
}));

/** What ADO's states endpoint returns for each Agile type. */
const agileStates: Record<string, SourceState[]> = Object.fromEntries(
  AGILE_TYPES.map((t) => [t.name, t.states.map((s) => ({ name: s.name, category: s.category }))]),
);

const typeMap = mapTypes(
  AGILE_TYPES.map((t) => t.name),
  ISSUE_TYPES.map((t) => ({ id: t.id, name: t.name, hierarchyLevel: t.hierarchyLevel })),
).map;

const TO_DO = { status: { id: '10000', name: 'To Do' } };
const IN_PROGRESS = { status: { id: '3', name: 'In Progress' } };
const IN_REVIEW = { status: { id: '10001', name: 'In Review' } };
const IN_TESTING = { status: { id: '10004', name: 'In Testing' } };
const DONE = { status: { id: '10002', name: 'Done' } };
const WONT_DO = { status: { id: '10003', name: "Won't Do" }, resolution: "Won't Do" };
const PORTFOLIO = { New: TO_DO, Active: IN_PROGRESS, Resolved: IN_REVIEW, Closed: DONE, Removed: WONT_DO };

const status = (id: string, name: string, key: string): TargetStatus => ({
  id,
  name,
  statusCategory: { key },
});
const oneType = (statuses: TargetStatus[]): IssueTypeStatuses[] => [{ id: '10002', name: 'Task', statuses }];
const taskMap = { Task: { id: '10002', name: 'Task' } };

describe('mapStates on the default Jira workflow', () => {
  it('maps every Agile state by its category', () => {
    expect(
      mapStates(agileStates, projectStatuses, typeMap, { resolutions: RESOLUTIONS.map((r) => r.name) }),
    ).toEqual({
      map: {
        Epic: PORTFOLIO,
        Feature: PORTFOLIO,
        'User Story': PORTFOLIO,
        Task: { New: TO_DO, Active: IN_PROGRESS, Closed: DONE, Removed: WONT_DO },
        Bug: { New: TO_DO, Active: IN_PROGRESS, Resolved: IN_REVIEW, Closed: DONE },
        Issue: { Active: IN_PROGRESS, Closed: DONE },
        'Test Case': { Design: TO_DO, Ready: IN_PROGRESS, Closed: DONE },
      },
      warnings: [],
    });
  });

  it("assumes Jira Cloud's default resolutions when none are given", () => {
    const result = mapStates({ Task: agileStates.Task! }, projectStatuses, typeMap);
    expect(result.map.Task!.Removed).toEqual(WONT_DO);
    expect(result.warnings).toEqual([]);
  });
});

describe('mapStates overrides', () => {
  it('win per issue type; a status a workflow lacks warns and falls back to the rule', () => {
    const result = mapStates(
      { Bug: agileStates.Bug!, 'User Story': agileStates['User Story']! },
      projectStatuses,
      typeMap,
      { overrides: { resolved: 'in testing' } },
    );
    expect(result.map.Bug!.Resolved).toEqual(IN_TESTING);
    expect(result.map['User Story']!.Resolved).toEqual(IN_REVIEW);
    expect(result.warnings).toEqual([
      'options.state_overrides maps "Resolved" to "in testing", which the workflow of Jira issue type "Story" does not have: the default rule applies',
    ]);
  });

  it("keep the Won't Do resolution when a removed state is sent to another done status", () => {
    const result = mapStates({ Task: agileStates.Task! }, projectStatuses, typeMap, {
      overrides: { Removed: 'Done' },
    });
    expect(result.map.Task!.Removed).toEqual({ ...DONE, resolution: "Won't Do" });
  });

  it('warn about states no type has', () => {
    const result = mapStates({ Task: agileStates.Task! }, projectStatuses, typeMap, {
      overrides: { Verified: 'Done', Closed: 'Done' },
    });
    expect(result.warnings).toEqual([
      'options.state_overrides names states no work item type has: "Verified"',
    ]);
  });
});

describe('mapStates on other workflows', () => {
  it('maps 1:1 onto a workflow that mirrors ADO (same names, suitable categories)', () => {
    const mirror = oneType([
      status('1', 'New', 'new'),
      status('2', 'Active', 'indeterminate'),
      status('3', 'Resolved', 'indeterminate'),
      status('4', 'Closed', 'done'),
      status('5', 'Removed', 'done'),
      status('6', 'To Do', 'new'),
      status('7', 'Done', 'done'),
    ]);
    const states = [...agileStates['User Story']!];
    expect(mapStates({ Task: states }, mirror, taskMap).map.Task).toEqual({
      New: { status: { id: '1', name: 'New' } },
      Active: { status: { id: '2', name: 'Active' } },
      Resolved: { status: { id: '3', name: 'Resolved' } },
      Closed: { status: { id: '4', name: 'Closed' } },
      Removed: { status: { id: '5', name: 'Removed' }, resolution: "Won't Do" },
    });
  });

  it('ignores a same-name status of an unsuitable category', () => {
    const odd = oneType([status('1', 'Active', 'new'), status('2', 'In Progress', 'indeterminate')]);
    const result = mapStates({ Task: [{ name: 'Active', category: 'InProgress' }] }, odd, taskMap);
    expect(result.map.Task).toEqual({ Active: { status: { id: '2', name: 'In Progress' } } });
  });

  it('maps the classic Jira workflow, resolving removed items as "Won\'t Fix"', () => {
    const classic = oneType([
      status('1', 'Open', 'new'),
      status('3', 'In Progress', 'indeterminate'),
      status('4', 'Reopened', 'new'),
      status('5', 'Resolved', 'done'),
      status('6', 'Closed', 'done'),
    ]);
    const result = mapStates({ Task: agileStates['User Story']! }, classic, taskMap, {
      resolutions: ['Fixed', "Won't Fix", 'Duplicate', 'Incomplete', 'Cannot Reproduce'],
    });
    expect(result).toEqual({
      map: {
        Task: {
          New: { status: { id: '1', name: 'Open' } },
          Active: { status: { id: '3', name: 'In Progress' } },
          Resolved: { status: { id: '5', name: 'Resolved' } },
          Closed: { status: { id: '6', name: 'Closed' } },
          Removed: { status: { id: '6', name: 'Closed' }, resolution: "Won't Fix" },
        },
      },
      warnings: [],
    });
  });

  it('resolves removed items as Done, with one warning, when the site has no "Won\'t Do"', () => {
    const result = mapStates({ Task: agileStates.Task!, Epic: agileStates.Epic! }, projectStatuses, typeMap, {
      resolutions: ['Done', 'Duplicate'],
    });
    expect(result.map.Task!.Removed).toEqual({ status: WONT_DO.status, resolution: 'Done' });
    expect(result.map.Epic!.Removed).toEqual({ status: WONT_DO.status, resolution: 'Done' });
    expect(result.warnings).toEqual([
      'Jira has no "Won\'t Do" resolution: removed items are resolved as "Done"',
    ]);
  });

  it('gives no resolution, with a warning, when the site has neither resolution', () => {
    const result = mapStates({ Task: agileStates.Task! }, projectStatuses, typeMap, {
      resolutions: ['Fixed'],
    });
    expect(result.map.Task!.Removed).toEqual({ status: WONT_DO.status });
    expect(result.warnings).toEqual([
      'Jira has neither a "Won\'t Do" nor a "Done" resolution: removed items get no resolution',
    ]);
  });

  it('on a two-status workflow sends Active to To Do with a warning and Resolved to Done quietly', () => {
    const simple = oneType([status('1', 'To Do', 'new'), status('2', 'Done', 'done')]);
    const result = mapStates({ Task: agileStates['User Story']! }, simple, taskMap);
    expect(result).toEqual({
      map: {
        Task: {
          New: { status: { id: '1', name: 'To Do' } },
          Active: { status: { id: '1', name: 'To Do' } },
          Resolved: { status: { id: '2', name: 'Done' } },
          Closed: { status: { id: '2', name: 'Done' } },
          Removed: { status: { id: '2', name: 'Done' }, resolution: "Won't Do" },
        },
      },
      warnings: [
        '"Task" state "Active" (InProgress) has no matching status in the workflow of Jira issue type "Task": using "To Do"',
      ],
    });
  });

  it('never sends completed work to an abandoned status, nor active work to a review one', () => {
    const awkward = oneType([
      status('1', 'Backlog', 'new'),
      status('2', 'Peer Review', 'indeterminate'),
      status('3', 'Building', 'indeterminate'),
      status('4', 'Cancelled', 'done'),
      status('5', 'Shipped', 'done'),
    ]);
    const result = mapStates({ Task: agileStates['User Story']! }, awkward, taskMap);
    expect(result.map.Task).toEqual({
      New: { status: { id: '1', name: 'Backlog' } },
      Active: { status: { id: '3', name: 'Building' } },
      Resolved: { status: { id: '2', name: 'Peer Review' } },
      Closed: { status: { id: '5', name: 'Shipped' } },
      Removed: { status: { id: '4', name: 'Cancelled' }, resolution: "Won't Do" },
    });
    expect(result.warnings).toEqual([]);
  });

  it('leaves out a state with no status at all, and a type whose workflow lists none', () => {
    const doneOnly = [
      { id: '10002', name: 'Task', statuses: [status('7', 'Done', 'done')] },
      { id: '10001', name: 'Story', statuses: [] },
    ];
    const result = mapStates(
      { Task: [{ name: 'New', category: 'Proposed' }], 'User Story': agileStates['User Story']! },
      doneOnly,
      { Task: { id: '10002', name: 'Task' }, 'User Story': { id: '10001', name: 'Story' } },
    );
    expect(result.map).toEqual({ Task: {} });
    expect(result.warnings).toEqual([
      '"Task" state "New" has no Jira status in the workflow of issue type "Task": its items keep their initial status',
      'Jira issue type "Story" lists no statuses: "User Story" items keep their initial status',
    ]);
  });

  it('skips types mapTypes did not map and finds a workflow by name when ids differ', () => {
    const byName = [{ id: 'other', name: 'task', statuses: [status('1', 'To Do', 'new')] }];
    const result = mapStates(
      { Task: [{ name: 'New', category: 'Proposed' }], 'Shared Steps': agileStates['Shared Steps']! },
      byName,
      taskMap,
    );
    expect(result).toEqual({ map: { Task: { New: { status: { id: '1', name: 'To Do' } } } }, warnings: [] });
  });

  it('maps a state of an unknown category only by its name', () => {
    const result = mapStates(
      {
        Task: [
          { name: 'Done', category: 'Custom' },
          { name: 'Parked', category: 'Custom' },
        ],
      },
      projectStatuses,
      taskMap,
    );
    expect(result.map.Task).toEqual({ Done: DONE });
    expect(result.warnings).toEqual([
      '"Task" state "Parked" has no Jira status in the workflow of issue type "Task": its items keep their initial status',
    ]);
  });
});
