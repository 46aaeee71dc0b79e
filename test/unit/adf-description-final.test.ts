/**
 * The description builder's footer (who created the ADO item and when, who had it, a link to it), how it counts
 * against Jira's limit, mentions and `#123` references resolved in descriptions as in comments, and the names
 * inline images are uploaded under (two pasted `image.png` are two files).
 */
import { describe, expect, it } from 'vitest';
import {
  ADF_BUDGET,
  type AdfNode,
  adfLength,
  cutNote,
  fitAdf,
  footerBlocks,
  htmlToAdf,
  validateAdf,
} from '../../functions/domain/adf/index.ts';
import { inlineUploads } from '../../functions/engine/phases/attachments-upload.ts';
import {
  type DescriptionContext,
  descriptionOf,
  descriptionRefsOf,
  footerOf,
} from '../../functions/engine/phases/description.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';

const textOf = (n: AdfNode): string => n.text ?? (n.content ?? []).map(textOf).join('');
const nodesOf = (n: AdfNode, type: string): AdfNode[] => [
  ...(n.type === type ? [n] : []),
  ...(n.content ?? []).flatMap((c) => nodesOf(c, type)),
];

function workItem(id: number, fields: Record<string, unknown>, relations: unknown[] = []): AdoWorkItem {
  return {
    id,
    rev: 1,
    fields: { 'System.Title': 'Checkout fails', ...fields },
    relations,
  } as unknown as AdoWorkItem;
}

const ANN = {
  id: 'A1B2C3D4-0000-4000-8000-000000000001',
  displayName: 'Ann Lee',
  uniqueName: 'ann@x.example',
};
const URL_OF = (item: AdoWorkItem) => `https://dev.azure.com/org/Proj/_workitems/edit/${item.id}`;

describe('the footer', () => {
  it('is a rule and an italic line, its link on the URL; valid ADF', () => {
    const blocks = footerBlocks([
      { text: 'Migrated from Azure DevOps #7 (' },
      {
        text: 'https://dev.azure.com/o/p/_workitems/edit/7',
        href: 'https://dev.azure.com/o/p/_workitems/edit/7',
      },
      { text: ')' },
    ]);
    expect(blocks).toEqual([
      { type: 'rule' },
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'Migrated from Azure DevOps #7 (', marks: [{ type: 'em' }] },
          {
            type: 'text',
            text: 'https://dev.azure.com/o/p/_workitems/edit/7',
            marks: [
              { type: 'em' },
              { type: 'link', attrs: { href: 'https://dev.azure.com/o/p/_workitems/edit/7' } },
            ],
          },
          { type: 'text', text: ')', marks: [{ type: 'em' }] },
        ],
      },
    ]);
    expect(validateAdf({ type: 'doc', version: 1, content: blocks })).toEqual([]);
    // An href that is not http(s) links nothing.
    const [, line] = footerBlocks([{ text: 'x', href: 'javascript:alert(1)' }]);
    expect(line?.content?.[0]).toEqual({ type: 'text', text: 'x', marks: [{ type: 'em' }] });
    expect(footerBlocks([])).toEqual([]);
  });

  it('names the ADO item, its creator and date, and its assignee, by name', () => {
    const item = workItem(7, {
      'System.CreatedBy': ANN,
      'System.CreatedDate': '2024-05-01T23:30:00.000Z',
      'System.AssignedTo': 'Bo Chen <bo@x.example>',
    });
    expect(
      footerOf(item, URL_OF)
        .map((s) => s.text)
        .join(''),
    ).toBe(
      'Migrated from Azure DevOps #7 (https://dev.azure.com/org/Proj/_workitems/edit/7) · created by Ann Lee on 2024-05-01 · assigned to Bo Chen',
    );
    // Without an assignee, a creator or a URL, those parts are left out.
    expect(
      footerOf(workItem(8, {}))
        .map((s) => s.text)
        .join(''),
    ).toBe('Migrated from Azure DevOps #8');
    expect(
      footerOf(workItem(9, { 'System.CreatedDate': '2023-01-02T10:00:00Z' }))
        .map((s) => s.text)
        .join(''),
    ).toBe('Migrated from Azure DevOps #9 · created on 2023-01-02');
  });

  it('ends every description, created or rebuilt, and the document stays valid', () => {
    const item = workItem(7, {
      'System.Description': '<p>Body</p>',
      'System.CreatedBy': ANN,
      'System.CreatedDate': '2024-05-01T10:00:00Z',
    });
    const doc = descriptionOf(item, () => undefined, { itemUrl: URL_OF });
    expect(validateAdf(doc)).toEqual([]);
    expect(doc.content.map((b) => b.type)).toEqual(['paragraph', 'rule', 'paragraph']);
    const footer = doc.content.at(-1)!;
    expect(textOf(footer)).toMatch(
      /^Migrated from Azure DevOps #7 \(https:\/\/.*\/_workitems\/edit\/7\) · created by Ann Lee on 2024-05-01$/,
    );
    expect(JSON.stringify(footer)).toContain('"href":"https://dev.azure.com/org/Proj/_workitems/edit/7"');
    // An empty description still says where the issue came from.
    const empty = descriptionOf(workItem(8, {}), () => undefined);
    expect(empty.content.map(textOf)).toEqual(['', 'Migrated from Azure DevOps #8']);
    expect(validateAdf(empty)).toEqual([]);
  });
});

describe('the footer against the limit', () => {
  const footer = footerBlocks([{ text: 'Migrated from Azure DevOps #1 · created by Ann Lee on 2024-05-01' }]);
  const note = cutNote('Cut here.');
  const paragraphs = (n: number) =>
    htmlToAdf(Array.from({ length: n }, (_, i) => `<p>paragraph ${i} ${'x'.repeat(80)}</p>`).join(''));

  it('is measured with the document: one that fits only without it is cut, the footer kept whole', () => {
    let n = 1;
    while (adfLength(paragraphs(n + 1)) <= ADF_BUDGET) n++;
    const doc = paragraphs(n);
    expect(adfLength(doc)).toBeLessThanOrEqual(ADF_BUDGET);
    expect(fitAdf(doc, note).cut).toBe(false);
    const fitted = fitAdf(doc, note, ADF_BUDGET, footer);
    expect(fitted.cut).toBe(true);
    expect(adfLength(fitted.doc)).toBeLessThanOrEqual(ADF_BUDGET);
    expect(fitted.doc.content.slice(-3)).toEqual([...note, ...footer]);
    expect(validateAdf(fitted.doc)).toEqual([]);
  });

  it('adds the footer after a document that fits with it', () => {
    const doc = paragraphs(3);
    expect(fitAdf(doc, note, ADF_BUDGET, footer)).toEqual({
      doc: { ...doc, content: [...doc.content, ...footer] },
      cut: false,
    });
  });

  it('keeps the footer of a 100 kB description under the limit', () => {
    const html = `<p>${'word '.repeat(30_000)}</p>`;
    const warnings: string[] = [];
    const doc = descriptionOf(workItem(4, { 'System.Description': html, 'System.CreatedBy': ANN }), (w) =>
      warnings.push(w),
    );
    expect(adfLength(doc)).toBeLessThanOrEqual(ADF_BUDGET);
    expect(textOf(doc.content.at(-1)!)).toBe('Migrated from Azure DevOps #4 · created by Ann Lee');
    expect(textOf(doc.content.at(-3)!)).toContain('attached as description-4.html');
    expect(warnings).toHaveLength(1);
  });
});

describe('mentions and references in a description', () => {
  const html =
    `<p>Ask <a href="#" data-vss-mention="version:2.0,${ANN.id.toLowerCase()}">@Ann Lee</a> or ` +
    '<a href="#" data-vss-mention="version:2.0,00000000-0000-4000-8000-00000000000f">@Zed Ray</a>, ' +
    'see #12 and #99; not &#39;quoted&#39;.</p>';
  const item = workItem(7, { 'System.Description': html });
  const ctx: DescriptionContext = {
    mention: ({ adoId, displayName }) =>
      adoId === ANN.id.toLowerCase() ? { accountId: 'acc-ann', displayName } : undefined,
    workItemKey: (id) => (id === 12 ? 'MIG-3' : undefined),
    issueUrl: (key) => `https://site.example/browse/${key}`,
  };

  it('lists what the run must resolve', () => {
    expect(descriptionRefsOf(item)).toEqual({
      mentions: [ANN.id.toLowerCase(), '00000000-0000-4000-8000-00000000000f'],
      references: [12, 99],
    });
    expect(descriptionRefsOf(workItem(8, { 'System.Description': '<p>C# &amp; F#, page#2</p>' }))).toEqual({
      mentions: [],
      references: [],
    });
  });

  it('resolves a mapped person to a mention and an issue to an inlineCard, as comments do', () => {
    const warnings: string[] = [];
    const doc = descriptionOf(item, (w) => warnings.push(w), {
      ...ctx,
      report: ['unmapped-mention', 'unresolved-reference'],
    });
    expect(validateAdf(doc)).toEqual([]);
    const body = doc.content[0]!;
    expect(nodesOf(body, 'mention')).toEqual([
      { type: 'mention', attrs: { id: 'acc-ann', text: '@Ann Lee' } },
    ]);
    expect(nodesOf(body, 'inlineCard')).toEqual([
      { type: 'inlineCard', attrs: { url: 'https://site.example/browse/MIG-3' } },
    ]);
    // A person without a Jira account stays text, and the run says so; an item not in Jira stays as written.
    expect(textOf(body)).toContain('@Zed Ray');
    expect(textOf(body)).toContain('#99');
    expect(warnings).toEqual([
      '#7: warning: description: @Zed Ray (00000000-0000-4000-8000-00000000000f) has no Jira account; kept as text',
      '#7: warning: description: work item #99 has no migrated Jira issue; kept as written',
    ]);
  });

  it('logs only the warnings asked for (references to items not created yet are no news at creation)', () => {
    const warnings: string[] = [];
    descriptionOf(item, (w) => warnings.push(w), { ...ctx, report: ['unmapped-mention'] });
    expect(warnings).toEqual([
      '#7: warning: description: @Zed Ray (00000000-0000-4000-8000-00000000000f) has no Jira account; kept as text',
    ]);
  });

  it('builds the same document every time (a rebuild after a crash writes what the first did)', () => {
    expect(descriptionOf(item, () => undefined, ctx)).toEqual(descriptionOf(item, () => undefined, ctx));
  });
});

describe('inline image upload names', () => {
  const att = (guid: string, name: string) =>
    `https://ado.example/org/p/_apis/wit/attachments/${guid}?fileName=${encodeURIComponent(name)}`;
  const A = 'aaaaaaaa-1111-4000-8000-000000000001';
  const B = 'bbbbbbbb-2222-4000-8000-000000000002';
  const C = 'cccccccc-3333-4000-8000-000000000003';

  it('keeps a name no other file of the item has', () => {
    const item = workItem(1, { 'System.Description': `<p><img src="${att(A, 'shot.png')}"></p>` });
    expect(inlineUploads(item).map((i) => i.uploadName)).toEqual(['shot.png']);
  });

  it('tells two pasted image.png apart by their ADO attachment, the same way every time', () => {
    const item = workItem(1, {
      'System.Description': `<p><img src="${att(A, 'image.png')}"></p>`,
      'Microsoft.VSTS.TCM.ReproSteps': `<p><img src="${att(B, 'image.png')}"><img src="${att(C, 'pasted.jpg')}"></p>`,
    });
    const names = inlineUploads(item).map((i) => i.uploadName);
    expect(names).toEqual(['aaaaaaaa-image.png', 'bbbbbbbb-image.png', 'pasted.jpg']);
    expect(inlineUploads(item).map((i) => i.uploadName)).toEqual(names);
  });

  it('steers clear of an attached file of the same name, and is an attached file with the same GUID', () => {
    const item = workItem(
      1,
      {
        'System.Description': `<p><img src="${att(A, 'image.png')}"><img src="${att(C, 'log.png')}"></p>`,
      },
      [
        { rel: 'AttachedFile', url: att(B, 'image.png').split('?')[0], attributes: { name: 'image.png' } },
        { rel: 'AttachedFile', url: att(C, 'log.png').split('?')[0], attributes: { name: 'log.png' } },
      ],
    );
    expect(inlineUploads(item).map((i) => i.uploadName)).toEqual(['aaaaaaaa-image.png', 'log.png']);
  });

  it('uses the whole GUID when two colliding GUIDs share their first 8 characters', () => {
    const A2 = 'aaaaaaaa-9999-4000-8000-000000000009';
    const item = workItem(1, {
      'System.Description': `<p><img src="${att(A, 'image.png')}"><img src="${att(A2, 'image.png')}"></p>`,
    });
    expect(inlineUploads(item).map((i) => i.uploadName)).toEqual([`${A}-image.png`, `${A2}-image.png`]);
  });
});
