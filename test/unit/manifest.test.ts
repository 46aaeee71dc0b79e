import { describe, expect, it } from 'vitest';
import { orderParentsFirst, parentIdOf } from '../../functions/domain/manifest.ts';

describe('the run manifest', () => {
  it('puts every parent before its children, then orders by id', () => {
    const ordered = orderParentsFirst([
      { id: 5, type: 'Task', parentId: 3 },
      { id: 1, type: 'Epic', parentId: null },
      { id: 3, type: 'User Story', parentId: 2 },
      { id: 2, type: 'Feature', parentId: 1 },
      { id: 4, type: 'Bug', parentId: null },
      { id: 6, type: 'Task', parentId: 99 },
    ]);
    expect(ordered.map((i) => i.id)).toEqual([1, 4, 6, 2, 3, 5]);
    const position = new Map(ordered.map((i, n) => [i.id, n]));
    for (const i of ordered)
      if (i.parentId !== null) expect(position.get(i.parentId)).toBeLessThan(position.get(i.id) as number);
    expect(ordered.find((i) => i.id === 6)?.parentId).toBeNull();
  });

  it('keeps a parent outside the items when told it counts (already in Jira), ordering the child as a root', () => {
    const ordered = orderParentsFirst(
      [
        { id: 8, type: 'Task', parentId: 7 },
        { id: 7, type: 'User Story', parentId: 40 },
        { id: 9, type: 'Task', parentId: 41 },
      ],
      (id) => id === 40,
    );
    expect(ordered).toEqual([
      { id: 7, type: 'User Story', parentId: 40 },
      { id: 9, type: 'Task', parentId: null },
      { id: 8, type: 'Task', parentId: 7 },
    ]);
  });

  it('survives a cycle without looping', () => {
    const ordered = orderParentsFirst([
      { id: 1, type: 'Task', parentId: 2 },
      { id: 2, type: 'Task', parentId: 1 },
    ]);
    expect(ordered.map((i) => i.id).sort()).toEqual([1, 2]);
  });

  it('reads the parent from ADO relations', () => {
    expect(
      parentIdOf([
        { rel: 'System.LinkTypes.Hierarchy-Reverse', url: 'https://dev.azure.com/o/_apis/wit/workItems/42' },
      ]),
    ).toBe(42);
    expect(parentIdOf([{ rel: 'System.LinkTypes.Related', url: 'https://x/workItems/7' }])).toBeNull();
    expect(parentIdOf(undefined)).toBeNull();
  });
});
