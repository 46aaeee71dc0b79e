import { describe, expect, it } from 'vitest';
import { buildScanReport } from '../../functions/domain/scan-report.ts';

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
