/** sectionsToAdf, textToAdf and validateAdf. */
import { describe, expect, it } from 'vitest';
import { sectionsToAdf, textToAdf, validateAdf } from '../../functions/domain/adf/index.ts';

const t = (text: string) => ({ type: 'text', text });
const p = (...content: unknown[]) => ({ type: 'paragraph', content });
const doc = (...content: unknown[]) => ({ type: 'doc', version: 1, content });

describe('sectionsToAdf', () => {
  it('puts a heading above each non-empty section and leaves empty ones out', () => {
    const out = sectionsToAdf([
      { heading: null, html: '<div>The description.</div>' },
      { heading: 'Acceptance criteria', html: '<ol><li>Saves</li></ol>' },
      { heading: 'Repro steps', html: '<div><br></div><p>&nbsp;</p>' },
      { heading: 'System info', html: '' },
      { heading: 'Notes', html: '<p>Last.</p>' },
    ]);
    expect(out).toEqual(
      doc(
        p(t('The description.')),
        { type: 'heading', attrs: { level: 2 }, content: [t('Acceptance criteria')] },
        {
          type: 'orderedList',
          attrs: { order: 1 },
          content: [{ type: 'listItem', content: [p(t('Saves'))] }],
        },
        { type: 'heading', attrs: { level: 2 }, content: [t('Notes')] },
        p(t('Last.')),
      ),
    );
    expect(validateAdf(out)).toEqual([]);
  });

  it('gives an empty document when every section is empty', () => {
    expect(sectionsToAdf([{ heading: 'A', html: '<p></p>' }])).toEqual(doc());
  });

  it('passes the context on (warnings from every section)', () => {
    const codes: string[] = [];
    sectionsToAdf(
      [
        { heading: null, html: '<img src="https://x.example/a.png">' },
        { heading: 'B', html: '<a data-vss-mention="version:2.0,1">@Bo</a>' },
      ],
      { warn: (w) => codes.push(w.code) },
    );
    expect(codes).toEqual(['unresolved-image', 'unmapped-mention']);
  });
});

describe('textToAdf', () => {
  it('keeps line breaks as hardBreaks and blank lines as paragraph breaks', () => {
    expect(textToAdf('line 1\r\nline 2\n\n\n  spaced  <b>not html</b>\n')).toEqual(
      doc(p(t('line 1'), { type: 'hardBreak' }, t('line 2')), p(t('  spaced  <b>not html</b>'))),
    );
  });

  it('gives an empty document for empty or blank text', () => {
    expect(textToAdf('')).toEqual(doc());
    expect(textToAdf(' \n \n')).toEqual(doc());
  });

  it('keeps an empty line inside a paragraph as a break, never as empty text', () => {
    const out = textToAdf('a\n \nb\n\u0000c');
    expect(out).toEqual(doc(p(t('a')), p(t('b'), { type: 'hardBreak' }, t('c'))));
    expect(validateAdf(out)).toEqual([]);
  });
});

describe('validateAdf', () => {
  it('accepts valid documents, code marks included', () => {
    expect(validateAdf(doc())).toEqual([]);
    expect(validateAdf(doc(p({ type: 'text', text: 'x', marks: [{ type: 'code' }] })))).toEqual([]);
  });

  it('rejects what Jira refuses', () => {
    const bad = [
      'not a doc',
      { type: 'paragraph' },
      doc(p(t(''))),
      doc(p({ type: 'text', text: 'x', marks: [{ type: 'code' }, { type: 'strong' }] })),
      doc(p({ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }] })),
      doc({
        type: 'bulletList',
        content: [
          {
            type: 'listItem',
            content: [
              {
                type: 'table',
                content: [{ type: 'tableRow', content: [{ type: 'tableCell', content: [p()] }] }],
              },
            ],
          },
        ],
      }),
      doc({ type: 'blockquote', content: [{ type: 'heading', attrs: { level: 1 }, content: [] }] }),
      doc({ type: 'bulletList', content: [] }),
    ];
    for (const d of bad) expect(validateAdf(d).length, JSON.stringify(d)).toBeGreaterThan(0);
  });
});
