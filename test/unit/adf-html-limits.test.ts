/**
 * What the converter refuses to parse: HTML too long, or nested too deep (htmlparser2 keeps its open elements in
 * an array it shifts at the front, so every tag costs as much as the nesting under it: 1 MB of unclosed `<b>`
 * took 20 s). Such HTML is measured in one bounded pass and becomes a note naming where the original is kept.
 */
import { describe, expect, it } from 'vitest';
import {
  type AdfNode,
  type AdfWarning,
  htmlLimitBreach,
  htmlToAdf,
  MAX_HTML_DEPTH,
  MAX_HTML_LENGTH,
  validateAdf,
} from '../../functions/domain/adf/index.ts';

const em = { type: 'em' };
const note = (text: string): AdfNode => ({
  type: 'paragraph',
  content: [{ type: 'text', text, marks: [em] }],
});

function convert(html: string, original?: string) {
  const warnings: AdfWarning[] = [];
  const doc = htmlToAdf(html, { warn: (w) => warnings.push(w), ...(original ? { original } : {}) });
  expect(validateAdf(doc)).toEqual([]);
  return { content: doc.content, warnings };
}

describe('HTML over the converter’s limits', () => {
  it('is not parsed when nested deeper than the limit: a note says why and where the original is', () => {
    // 200 kB of unclosed <b>: what a contributor pastes to stall a run.
    const poison = `<p>before</p>${'<b>'.repeat(200_000 / 3)}text`;
    expect(convert(poison, 'description-7.html')).toEqual({
      content: [
        note(
          `The original HTML was not converted (elements nested over ${MAX_HTML_DEPTH} deep): it is attached as description-7.html.`,
        ),
      ],
      warnings: [
        {
          code: 'unconverted-html',
          message: `HTML not converted (elements nested over ${MAX_HTML_DEPTH} deep): the original is attached as description-7.html`,
        },
      ],
    });
  });

  it('is not parsed when longer than the limit, whatever it holds', () => {
    const long = `<p>${'x'.repeat(MAX_HTML_LENGTH)}</p>`;
    const size = long.length.toLocaleString('en-US');
    const limit = MAX_HTML_LENGTH.toLocaleString('en-US');
    expect(convert(long)).toEqual({
      content: [
        note(`The original HTML was not converted (${size} characters, over the limit of ${limit}).`),
      ],
      warnings: [
        {
          code: 'unconverted-html',
          message: `HTML not converted (${size} characters, over the limit of ${limit})`,
        },
      ],
    });
  });

  it('converts HTML exactly at the limits', () => {
    const strong = { type: 'strong' };
    expect(convert(`${'<b>'.repeat(MAX_HTML_DEPTH)}deep`)).toEqual({
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'deep', marks: [strong] }] }],
      warnings: [],
    });
    const long = `<p>${'x'.repeat(MAX_HTML_LENGTH - 7)}</p>`;
    expect(long.length).toBe(MAX_HTML_LENGTH);
    expect(convert(long).warnings).toEqual([]);
  });

  it('counts nesting as the parser keeps it open, not tag by tag', () => {
    const times = (s: string) => s.repeat(MAX_HTML_DEPTH * 3);
    // Void elements, closed elements, and elements a sibling closes (p, li, td) never pile up.
    for (const flat of [
      times('<br>'),
      times('<img src="x.png">'),
      times('<b>x</b>'),
      times('<p>para'),
      `<ul>${times('<li>item')}</ul>`,
      `<table><tr>${times('<td>cell')}</tr></table>`,
      times('<!-- <b> -->'),
      `<script>${times('<b>')}</script>`,
    ])
      expect(htmlLimitBreach(flat), flat.slice(0, 40)).toBeUndefined();
    // A closing tag that closes nothing open does not pop, whatever its name; `</b>` as script text closes
    // nothing either; tag names are case-insensitive.
    for (const deep of [
      times('<b></i>'),
      times('<b><script></b></script>'),
      times('<B>'),
      times('<div><span>'),
      `${'<b>'.repeat(MAX_HTML_DEPTH + 1)}x`,
    ])
      expect(htmlLimitBreach(deep), deep.slice(0, 40)).toEqual({
        limit: 'depth',
        reason: `elements nested over ${MAX_HTML_DEPTH} deep`,
      });
    expect(htmlLimitBreach('x'.repeat(MAX_HTML_LENGTH + 1))).toEqual({
      limit: 'length',
      reason: `${(MAX_HTML_LENGTH + 1).toLocaleString('en-US')} characters, over the limit of ${MAX_HTML_LENGTH.toLocaleString('en-US')}`,
    });
  });
});
