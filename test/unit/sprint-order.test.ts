import { describe, expect, it } from 'vitest';
import { orderParentsFirst } from '../../functions/domain/manifest.ts';
import { orderForSprints } from '../../functions/engine/phases/sprint-order.ts';
import type { Preflight, PreflightSprint } from '../../functions/phase-kit/context.ts';

const sprint = (
  id: number,
  name: string,
  start: string,
  end: string,
  state: PreflightSprint['state'],
): PreflightSprint => ({
  id,
  name,
  iterationPath: `P\\${name}`,
  startDate: `${start}T00:00:00.000Z`,
  endDate: `${end}T23:59:59.000Z`,
  state,
  jiraState: 'future',
  created: true,
});

const item = (id: number, type: string, iteration: string) => ({
  id,
  rev: 1,
  fields: { 'System.WorkItemType': type, 'System.IterationPath': iteration },
});

describe("phase 1's manifest order for the sprints", () => {
  // Ids in creation order, as a real project's are; the past sprints' items are spread over every depth.
  const items = [
    item(1, 'Epic', 'P'),
    item(2, 'User Story', 'P\\S2'),
    item(3, 'User Story', 'P\\S1'),
    item(4, 'Task', 'P\\S2'), // a sub-task of 3: it goes with its parent's sprint, S1
    item(5, 'Bug', 'P\\S1'),
    item(6, 'User Story', 'P\\Now'),
    item(7, 'Bug', 'P\\Later'),
  ];
  const preflight = {
    manifest: orderParentsFirst([
      { id: 1, type: 'Epic', parentId: null },
      { id: 2, type: 'User Story', parentId: 1 },
      { id: 3, type: 'User Story', parentId: 1 },
      { id: 4, type: 'Task', parentId: 3 },
      { id: 5, type: 'Bug', parentId: 3 },
      { id: 6, type: 'User Story', parentId: null },
      { id: 7, type: 'Bug', parentId: null },
    ]),
    typeMap: {
      Epic: { id: '1', name: 'Epic' },
      'User Story': { id: '2', name: 'Story' },
      Task: { id: '3', name: 'Sub-task' },
      Bug: { id: '4', name: 'Bug' },
    },
    typeLevels: { Epic: 1, Story: 0, 'Sub-task': -1, Bug: 0 },
    sprintFieldId: 'customfield_10020',
    boardId: 1,
    sprints: [
      sprint(11, 'S1', '2025-01-01', '2025-01-14', 'closed'),
      sprint(12, 'S2', '2025-01-15', '2025-01-28', 'closed'),
      sprint(13, 'Now', '2025-06-01', '2025-06-14', 'active'),
      sprint(14, 'Later', '2025-07-01', '2025-07-14', 'future'),
    ],
    components: [],
  } as unknown as Preflight;

  it('puts each sprint’s issues together in the order the sprints are stepped, parents still first', () => {
    expect(preflight.manifest.map((m) => m.id)).toEqual([1, 6, 7, 2, 3, 4, 5]);
    const { manifest, sprints } = orderForSprints(preflight, items);
    // S1 (3, its sub-task 4, 5) after the epic it needs, then S2 (2), the current sprint (6), the rest.
    expect(manifest.map((m) => m.id)).toEqual([1, 3, 4, 5, 2, 6, 7]);
    // Each stepped sprint may be stepped once the checkpoint has passed its last issue; a future one never is.
    expect(sprints?.map((s) => [s.name, s.closableAt])).toEqual([
      ['S1', 4],
      ['S2', 5],
      ['Now', 6],
      ['Later', undefined],
    ]);
  });

  it('leaves the manifest alone when no sprint is stepped (a dry run has no sprint ids)', () => {
    const dry = {
      ...preflight,
      sprints: preflight.sprints?.map((s) => ({ ...s, id: null })),
    } as Preflight;
    expect(orderForSprints(dry, items).manifest).toBe(dry.manifest);
  });
});
