import { describe, expect, it } from 'vitest';
import { buildScanReport, startScanReport } from '../../functions/domain/scan-report.ts';

const areas = {
  name: 'Contoso',
  children: [{ name: 'Web', children: [{ name: 'Checkout' }] }, { name: 'Mobile' }],
};
const iterations = {
  name: 'Contoso',
  children: [
    {
      name: 'Sprint 1',
      attributes: { startDate: '2026-01-05T00:00:00Z', finishDate: '2026-01-16T00:00:00Z' },
    },
    { name: 'Backlog' },
  ],
};
const item = (
  type: string,
  area: string,
  iteration: string,
  extra: Record<string, unknown> = {},
  relations: { rel: string; attributes?: Record<string, unknown> }[] = [],
) => ({
  fields: {
    'System.WorkItemType': type,
    'System.AreaPath': area,
    'System.IterationPath': iteration,
    'System.CommentCount': 2,
    ...extra,
  },
  relations,
});

describe('the scan report', () => {
  it('counts types, paths, custom fields, attachments and comments', () => {
    const report = buildScanReport({
      items: [
        item('Bug', 'Contoso\\Web', 'Contoso\\Sprint 1', { 'Custom.Risk': 'High' }, [
          { rel: 'AttachedFile', attributes: { resourceSize: 1024 ** 3 } },
        ]),
        item('Bug', 'Contoso\\Web\\Checkout', 'Contoso\\Backlog', { 'Custom.Risk': '' }),
        item('Epic', 'Contoso', 'Contoso\\Sprint 1', {}, [
          { rel: 'System.LinkTypes.Hierarchy-Forward' },
          { rel: 'AttachedFile', attributes: { resourceSize: 1024 ** 3 / 2 } },
        ]),
      ],
      areas,
      iterations,
      fieldDefinitions: [
        { referenceName: 'Custom.Risk', name: 'Risk', type: 'string' },
        { referenceName: 'System.Title', name: 'Title', type: 'string' },
      ],
    });
    expect(report).toMatchObject({
      totalWorkItems: 3,
      typeCounts: { Bug: 2, Epic: 1 },
      iterationPaths: [
        { path: 'Contoso\\Sprint 1', startDate: '2026-01-05', endDate: '2026-01-16', itemCount: 2 },
      ],
      areaPaths: [
        { path: 'Contoso', depth: 0, itemCount: 1 },
        { path: 'Contoso\\Web', depth: 1, itemCount: 1 },
        { path: 'Contoso\\Web\\Checkout', depth: 2, itemCount: 1 },
        { path: 'Contoso\\Mobile', depth: 1, itemCount: 0 },
      ],
      customFields: [{ referenceName: 'Custom.Risk', name: 'Risk', type: 'string', itemCount: 1 }],
      attachmentTotalGb: 1.5,
      commentCount: 6,
    });
    expect(report.pricing).toMatchObject({ totalItems: 3, attachmentGb: 1.5, currency: 'GBP' });
  });
});

/** A generated project: a seeded mix of types, paths, custom fields, attachments and comment counts. */
function generatedProject(size: number, seed: number) {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % n;
  };
  const areaPaths = ['Contoso', 'Contoso\\Web', 'Contoso\\Web\\Checkout', 'Contoso\\Mobile', 'Elsewhere'];
  const iterationPaths = ['Contoso\\Sprint 1', 'Contoso\\Backlog', 'Contoso'];
  const types = ['Bug', 'Epic', 'User Story', 'Task'];
  return Array.from({ length: size }, () => ({
    fields: {
      'System.WorkItemType': types[next(types.length)],
      'System.AreaPath': areaPaths[next(areaPaths.length)],
      'System.IterationPath': iterationPaths[next(iterationPaths.length)],
      'System.CommentCount': next(7),
      ...(next(3) === 0 ? { 'Custom.Risk': ['High', '', null][next(3)] } : {}),
      ...(next(4) === 0 ? { 'Custom.Score': next(100) } : {}),
    },
    relations: Array.from({ length: next(4) }, () =>
      next(2) === 0
        ? { rel: 'AttachedFile', attributes: { resourceSize: next(50_000_000) } }
        : { rel: 'System.LinkTypes.Related' },
    ),
  }));
}

describe('the scan report as a fold over chunks', () => {
  const shape = {
    areas,
    iterations,
    fieldDefinitions: [
      { referenceName: 'Custom.Score', name: 'Score', type: 'integer' },
      { referenceName: 'Custom.Risk', name: 'Risk', type: 'string' },
      { referenceName: 'System.Title', name: 'Title', type: 'string' },
    ],
  };
  const items = generatedProject(2_503, 7);

  it('answers byte for byte what the report over the whole project answers, for any chunking', () => {
    const whole = JSON.stringify(buildScanReport({ items, ...shape }));
    for (const size of [1, 7, 1_000, 2_503, 5_000]) {
      const fold = startScanReport(shape);
      for (let i = 0; i < items.length; i += size) fold.add(items.slice(i, i + size));
      expect(JSON.stringify(fold.finish())).toBe(whole);
    }
  });

  it("takes the tracker's comment counts per chunk in place of the items' own", () => {
    const whole = JSON.stringify(buildScanReport({ items, ...shape, commentCount: 4_242 }));
    const fold = startScanReport(shape);
    fold.add(items.slice(0, 1_000), 4_000);
    fold.add(items.slice(1_000), 242);
    expect(JSON.stringify(fold.finish())).toBe(whole);
  });

  it('reports an empty project', () => {
    expect(startScanReport(shape).finish()).toEqual(buildScanReport({ items: [], ...shape }));
    expect(startScanReport(shape).finish()).toMatchObject({ totalWorkItems: 0, commentCount: 0 });
  });
});
