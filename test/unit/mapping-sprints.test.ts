/**
 * ADO iterations -> Jira sprints, pure: which iterations become sprints, their names, dates and states on a
 * reference day (never the real clock), and the start/close steps that reach those states within Jira's rules.
 */
import { describe, expect, it } from 'vitest';
import {
  buildIssueFields,
  type IterationNode,
  mapTypes,
  planSprints,
  type SprintInJira,
  sprintStateOn,
  sprintSteps,
} from '../../functions/domain/mapping/index.ts';
import { buildIterations, type ClassificationNode } from '../../local/sandbox/generator/classification.ts';
import { ISSUE_TYPES, PRIORITIES } from '../../local/sandbox/jira/catalog.ts';

const at = (iso: string) => Date.parse(iso);
const dated = (
  name: string,
  start: string,
  finish: string,
  children: IterationNode[] = [],
): IterationNode => ({
  name,
  attributes: { startDate: `${start}T00:00:00Z`, finishDate: `${finish}T00:00:00Z` },
  children,
});
const undated = (name: string, children: IterationNode[] = []): IterationNode => ({ name, children });

const TREE: IterationNode = undated('Contoso', [
  undated('Backlog'),
  dated('Release 1', '2025-01-06', '2025-02-14', [
    dated('Sprint 1', '2025-01-06', '2025-01-17'),
    dated('Sprint 2', '2025-01-20', '2025-01-31'),
  ]),
  dated('Release 2', '2025-02-17', '2025-03-28', [
    dated('Sprint 1', '2025-02-17', '2025-02-28'),
    dated('Sprint 3', '2025-03-03', '2025-03-14'),
    { name: 'Broken', attributes: { startDate: '2025-03-20T00:00:00Z', finishDate: '2025-03-10T00:00:00Z' } },
  ]),
]);

/** The generator's tree (what the ADO sandbox serves) in the API's shape. */
function apiTree(node: ClassificationNode): IterationNode {
  return {
    name: node.name,
    ...(node.startDate && node.finishDate
      ? { attributes: { startDate: node.startDate, finishDate: node.finishDate } }
      : {}),
    children: node.children.map(apiTree),
  };
}

describe('planSprints', () => {
  it('plans a sprint for each dated iteration in use, none for the root, undated or unknown ones', () => {
    const plan = planSprints(
      TREE,
      [
        'Contoso\\Release 1\\Sprint 2',
        'contoso\\release 1\\sprint 2', // ADO paths ignore case: the same iteration
        'Contoso',
        'Contoso\\Backlog',
        'Contoso\\Release 2\\Broken',
        'Contoso\\Gone',
        'Contoso\\Release 1',
        '',
      ],
      at('2025-01-22T09:00:00Z'),
    );
    expect(plan.sprints).toEqual([
      {
        iterationPath: 'Contoso\\Release 1',
        name: 'Release 1',
        startDate: '2025-01-06T00:00:00.000Z',
        endDate: '2025-02-14T23:59:59.000Z',
        state: 'active',
      },
      {
        iterationPath: 'Contoso\\Release 1\\Sprint 2',
        name: 'Sprint 2',
        startDate: '2025-01-20T00:00:00.000Z',
        endDate: '2025-01-31T23:59:59.000Z',
        state: 'active',
      },
    ]);
    expect(plan.unplanned).toEqual([
      { iterationPath: 'Contoso', reason: 'root' },
      { iterationPath: 'Contoso\\Backlog', reason: 'undated' },
      // A finish before the start is no dates at all: Jira could never start it.
      { iterationPath: 'Contoso\\Release 2\\Broken', reason: 'undated' },
      { iterationPath: 'Contoso\\Gone', reason: 'unknown' },
    ]);
  });

  it('names a sprint by its path below the root when another dated iteration has the same name', () => {
    const plan = planSprints(
      TREE,
      ['Contoso\\Release 2\\Sprint 1', 'Contoso\\Release 1\\Sprint 1', 'Contoso\\Release 2\\Sprint 3'],
      at('2025-06-01T00:00:00Z'),
    );
    expect(plan.sprints.map((s) => [s.name, s.state])).toEqual([
      ['Release 1 / Sprint 1', 'closed'],
      ['Release 2 / Sprint 1', 'closed'],
      ['Sprint 3', 'closed'],
    ]);
  });

  it('reads the state off the calendar days: active from the first day through the whole last day', () => {
    const start = at('2025-03-03T00:00:00Z');
    const end = at('2025-03-15T00:00:00Z'); // the finish day (14th) ends here
    expect(sprintStateOn(start, end, start - 1)).toBe('future');
    expect(sprintStateOn(start, end, start)).toBe('active');
    expect(sprintStateOn(start, end, end - 1)).toBe('active');
    expect(sprintStateOn(start, end, end)).toBe('closed');
    const on = (iso: string) =>
      planSprints(TREE, ['Contoso\\Release 2\\Sprint 3'], at(iso)).sprints[0]?.state;
    expect([on('2025-03-02T23:59:59Z'), on('2025-03-14T23:00:00Z'), on('2025-03-15T00:00:00Z')]).toEqual([
      'future',
      'active',
      'closed',
    ]);
  });

  it('over the sandbox calendar: past sprints closed, the one under way active, later ones future', () => {
    // SANDBOX_ADO_REFERENCE_DAY=2025-06-04 lays the calendar out around that day (a Wednesday in sprint 53).
    const referenceDay = Date.UTC(2025, 5, 4);
    const layout = buildIterations('Contoso', 42, referenceDay);
    const paths = layout.sprints.map((s) => s.path);
    const plan = planSprints(apiTree(layout.root), paths, referenceDay + 12 * 3_600_000);
    expect(plan.sprints).toHaveLength(56);
    expect(plan.unplanned).toEqual([]);
    const byState = (state: string) => plan.sprints.filter((s) => s.state === state).map((s) => s.name);
    expect(byState('closed')).toEqual(Array.from({ length: 52 }, (_, i) => layout.sprints[i]!.name));
    expect(byState('active')).toEqual(['Sprint 53']);
    expect(byState('future')).toEqual(['Sprint 54', 'Sprint 55', 'Sprint 56']);
    expect(plan.sprints[52]).toMatchObject({
      startDate: '2025-05-26T00:00:00.000Z',
      endDate: '2025-06-06T23:59:59.000Z',
    });
    // The weekend after a sprint's last day: it is over, the next one not begun; no sprint is active.
    const saturday = Date.UTC(2025, 5, 7, 12);
    expect(
      planSprints(apiTree(layout.root), paths, saturday).sprints.filter((s) => s.state === 'active'),
    ).toEqual([]);
    // Releases and undated nodes: dated releases become sprints, undated ones do not.
    const releases = planSprints(
      apiTree(layout.root),
      layout.releases.map((r) => r.path),
      referenceDay,
    );
    expect(releases.sprints.map((s) => s.name)).toEqual(
      layout.releases.filter((r) => r.startDate).map((r) => r.name),
    );
    expect(releases.unplanned.map((u) => u.reason)).toEqual(
      layout.releases.filter((r) => !r.startDate).map(() => 'undated'),
    );
  });
});

describe('sprintSteps', () => {
  const sprint = (
    id: number,
    start: string,
    finish: string,
    state: SprintInJira['state'],
    jiraState: SprintInJira['jiraState'],
  ): SprintInJira => ({
    id,
    name: `S${id}`,
    startDate: `${start}T00:00:00.000Z`,
    endDate: `${finish}T23:59:59.000Z`,
    state,
    jiraState,
  });

  it('starts and closes past sprints one at a time in date order, then starts the current one', () => {
    const steps = sprintSteps([
      sprint(5, '2025-03-03', '2025-03-14', 'active', 'future'),
      sprint(3, '2025-02-03', '2025-02-14', 'closed', 'future'),
      sprint(6, '2025-03-17', '2025-03-28', 'future', 'future'),
      sprint(4, '2025-02-17', '2025-02-28', 'closed', 'active'),
      sprint(1, '2025-01-06', '2025-01-17', 'closed', 'future'),
      sprint(2, '2025-01-20', '2025-01-31', 'closed', 'closed'),
    ]);
    expect(steps.map((s) => `${s.action} ${s.name}`)).toEqual([
      'start S1',
      'close S1',
      'start S3',
      'close S3',
      'close S4',
      'start S5',
    ]);
  });

  it('starts the most specific current sprint first, never moves one back, and does nothing twice', () => {
    const release = sprint(10, '2025-03-03', '2025-04-11', 'active', 'future');
    const inside = sprint(11, '2025-03-17', '2025-03-28', 'active', 'future');
    expect(sprintSteps([release, inside]).map((s) => s.id)).toEqual([11, 10]);
    // Jira cannot reopen a closed sprint or unstart an active one: no step for those.
    expect(
      sprintSteps([
        sprint(1, '2025-03-03', '2025-03-14', 'active', 'closed'),
        sprint(2, '2025-04-07', '2025-04-18', 'future', 'active'),
        sprint(3, '2025-03-17', '2025-03-28', 'active', 'active'),
      ]),
    ).toEqual([]);
  });
});

describe('buildIssueFields with a sprint and a component', () => {
  it('writes the sprint as a bare id in the site Sprint field and the components by id', () => {
    const typeMap = mapTypes(
      ['User Story'],
      ISSUE_TYPES.map((t) => ({ id: t.id, name: t.name, hierarchyLevel: t.hierarchyLevel })),
    ).map;
    const item = {
      id: 7,
      fields: {
        'System.WorkItemType': 'User Story',
        'System.Title': 'Checkout',
        'System.AreaPath': 'Contoso\\Web',
      },
    };
    const base = {
      projectKey: 'MIG',
      typeMap,
      priorityNames: PRIORITIES.map((p) => p.name),
      users: () => undefined,
    };
    const { fields } = buildIssueFields(item, {
      ...base,
      sprint: { fieldId: 'customfield_10020', id: 42 },
      componentIds: [{ id: '10001' }],
    });
    expect(fields.customfield_10020).toBe(42);
    expect(fields.components).toEqual([{ id: '10001' }]);
    const plain = buildIssueFields(item, base).fields;
    expect(Object.keys(plain)).not.toContain('customfield_10020');
    expect(Object.keys(plain)).not.toContain('components');
  });
});
