import { describe, expect, it } from 'vitest';
import { mapTypes, type TargetIssueType } from '../../functions/domain/mapping/index.ts';
import { AGILE_TYPES } from '../../local/sandbox/generator/process.ts';
import { ISSUE_TYPES } from '../../local/sandbox/jira/catalog.ts';

/** The sandbox site's issue types as Jira's project answer lists them. */
const jiraTypes: TargetIssueType[] = ISSUE_TYPES.map((t) => ({
  id: t.id,
  name: t.name,
  subtask: t.hierarchyLevel === -1,
  hierarchyLevel: t.hierarchyLevel,
}));
const AVAILABLE = '(issue types: Epic, Story, Task, Bug, Sub-task, Test)';

describe('mapTypes defaults', () => {
  it('maps every Agile process type onto the default Jira site', () => {
    expect(
      mapTypes(
        AGILE_TYPES.map((t) => t.name),
        jiraTypes,
      ),
    ).toEqual({
      map: {
        Epic: { id: '10000', name: 'Epic' },
        Feature: { id: '10000', name: 'Epic' },
        'User Story': { id: '10001', name: 'Story' },
        Task: { id: '10002', name: 'Task' },
        Bug: { id: '10003', name: 'Bug' },
        Issue: { id: '10002', name: 'Task' },
        'Test Case': { id: '10005', name: 'Test' },
      },
      notMigrated: ['Shared Steps', 'Test Plan', 'Test Suite'],
      problems: [],
      warnings: [],
    });
  });

  it('uses a type of the same name first, ignoring case (Feature, Issue, a mirrored user story)', () => {
    const mirrored = [
      ...jiraTypes,
      { id: '10020', name: 'Feature', hierarchyLevel: 1 },
      { id: '10021', name: 'ISSUE', hierarchyLevel: 0 },
      { id: '10022', name: 'user story', hierarchyLevel: 0 },
    ];
    expect(mapTypes(['Feature', 'Issue', 'User Story', 'Impediment'], mirrored).map).toEqual({
      Feature: { id: '10020', name: 'Feature' },
      Issue: { id: '10021', name: 'ISSUE' },
      'User Story': { id: '10022', name: 'user story' },
      Impediment: { id: '10021', name: 'ISSUE' },
    });
  });

  it('maps the Scrum and CMMI names and falls back to Task for tests and impediments', () => {
    const noTest = jiraTypes.filter((t) => t.name !== 'Test');
    expect(mapTypes(['Product Backlog Item', 'Requirement', 'Impediment', 'Test Case'], noTest).map).toEqual({
      'Product Backlog Item': { id: '10001', name: 'Story' },
      Requirement: { id: '10001', name: 'Story' },
      Impediment: { id: '10002', name: 'Task' },
      'Test Case': { id: '10002', name: 'Task' },
    });
  });

  it('never picks a subtask type by default', () => {
    const onlySubtaskTask = [{ id: '5', name: 'Task', subtask: true, hierarchyLevel: -1 }];
    const result = mapTypes(['Task'], onlySubtaskTask);
    expect(result.map).toEqual({});
    expect(result.problems).toEqual([
      'Work item type "Task" has no Jira issue type: add it to options.type_overrides (issue types: Task)',
    ]);
  });

  it('reports a type with no target as a problem naming the override to add', () => {
    const result = mapTypes(['Bug', 'Risk', 'Change Request'], jiraTypes);
    expect(result.map).toEqual({ Bug: { id: '10003', name: 'Bug' } });
    expect(result.problems).toEqual([
      `Work item type "Risk" has no Jira issue type: add it to options.type_overrides ${AVAILABLE}`,
      `Work item type "Change Request" has no Jira issue type: add it to options.type_overrides ${AVAILABLE}`,
    ]);
  });

  it('maps each source type once, even when listed twice', () => {
    expect(mapTypes(['Bug', 'bug', 'Bug'], jiraTypes).map).toEqual({ Bug: { id: '10003', name: 'Bug' } });
  });
});

describe('mapTypes overrides', () => {
  it('win over the defaults and match keys and values ignoring case', () => {
    const result = mapTypes(['Bug', 'Test Case', 'Risk'], jiraTypes, {
      bug: 'task',
      'Test Case': 'Story',
      Risk: 'Task',
    });
    expect(result).toEqual({
      map: {
        Bug: { id: '10002', name: 'Task' },
        'Test Case': { id: '10001', name: 'Story' },
        Risk: { id: '10002', name: 'Task' },
      },
      notMigrated: [],
      problems: [],
      warnings: [],
    });
  });

  it('may name a subtask type or bring a not-migrated type in', () => {
    expect(
      mapTypes(['Task', 'Shared Steps'], jiraTypes, { Task: 'Sub-task', 'Shared Steps': 'Task' }),
    ).toEqual({
      map: { Task: { id: '10004', name: 'Sub-task' }, 'Shared Steps': { id: '10002', name: 'Task' } },
      notMigrated: [],
      problems: [],
      warnings: [],
    });
  });

  it('naming an issue type the project lacks is a problem, with no silent fallback', () => {
    const result = mapTypes(['Feature'], jiraTypes, { Feature: 'Initiative' });
    expect(result.map).toEqual({});
    expect(result.problems).toEqual([
      `options.type_overrides maps "Feature" to "Initiative", which is not an issue type of the Jira project ${AVAILABLE}`,
    ]);
  });

  it('warns about overrides for types the scope does not have', () => {
    const result = mapTypes(['Bug'], jiraTypes, { Bgu: 'Task', Epic: 'Epic' });
    expect(result.map).toEqual({ Bug: { id: '10003', name: 'Bug' } });
    expect(result.warnings).toEqual([
      'options.type_overrides names types the source scope does not have: "Bgu", "Epic"',
    ]);
  });
});
