import { describe, expect, it } from 'vitest';
import { orderByRank, orderParentsFirst, parentIdOf } from '../../functions/domain/manifest.ts';

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

  it('reorders by rank, stable, with each ancestor moved up just before its first ranked descendant', () => {
    const ordered = orderParentsFirst([
      { id: 1, type: 'Epic', parentId: null },
      { id: 2, type: 'Feature', parentId: 1 },
      { id: 3, type: 'User Story', parentId: 2 },
      { id: 4, type: 'Bug', parentId: null },
      { id: 5, type: 'Task', parentId: 3 },
      { id: 6, type: 'User Story', parentId: null },
      { id: 7, type: 'Bug', parentId: null },
    ]);
    // Ranks: the story 3 and its task 5 wait on the first step, bug 7 on the second, 4 and 6 on none.
    const rank: Record<number, number> = { 3: 0, 5: 0, 7: 1 };
    const byRank = orderByRank(ordered, (i) => rank[i.id] ?? Number.POSITIVE_INFINITY);
    expect(byRank.map((i) => i.id)).toEqual([1, 2, 3, 5, 7, 4, 6]);
    const position = new Map(byRank.map((i, n) => [i.id, n]));
    for (const i of byRank)
      if (i.parentId !== null) expect(position.get(i.parentId)).toBeLessThan(position.get(i.id) as number);
    // Nothing ranked: the order is kept.
    expect(orderByRank(ordered, () => Number.POSITIVE_INFINITY)).toEqual(ordered);
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
