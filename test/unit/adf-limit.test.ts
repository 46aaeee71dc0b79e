/**
 * Jira's 32,767-character limit on a description: fitAdf cuts an over-long document between blocks (whole rows,
 * list items, quoted paragraphs), inside text only when nothing would be left, and ends it with a note; the
 * engine's description builder uses it and says which file holds the full text.
 */
import { describe, expect, it } from 'vitest';
import {
  ADF_BUDGET,
  type AdfDoc,
  type AdfNode,
  adfLength,
  cutNote,
  fitAdf,
  htmlToAdf,
  JIRA_TEXT_LIMIT,
  validateAdf,
} from '../../functions/domain/adf/index.ts';
import {
  descriptionOf,
  fullDescriptionName,
  fullDescriptionOf,
} from '../../functions/engine/phases/description.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';

const NOTE = cutNote('Cut here.');
const textOf = (n: AdfNode): string => n.text ?? (n.content ?? []).map(textOf).join('');
const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `word${from + i}`).join(' ');

/** About `kb` kilobytes of the shapes a long Azure DevOps description has. */
function longHtml(kb: number): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < kb * 1024; i++) {
    parts.push(
      `<h2>Part ${i}</h2><p>Paragraph ${i}: ${words(20, i * 20)} <b>bold</b> and a <a href="https://e.example/${i}">link</a>.</p>`,
      `<ul><li>item ${i}.1<ul><li>nested ${i}</li></ul></li><li>item ${i}.2</li></ul>`,
      `<table><tr><th>Key</th><th>Value</th></tr><tr><td>k${i}</td><td>v${i} &quot;quoted&quot;</td></tr></table>`,
      `<pre><code>line ${i}\nline two "${i}"</code></pre>`,
    );
  }
  return parts.join('');
}

function expectFitted(doc: AdfDoc): void {
  expect(validateAdf(doc)).toEqual([]);
  expect(adfLength(doc)).toBeLessThanOrEqual(ADF_BUDGET);
  expect(adfLength(doc)).toBeLessThan(JIRA_TEXT_LIMIT);
}

describe('fitAdf', () => {
  it('leaves a document within the budget as it is', () => {
    const doc = htmlToAdf('<p>short</p>');
    expect(fitAdf(doc, NOTE)).toEqual({ doc, cut: false });
  });

  it('keeps the first whole blocks of a 100 kB document that fit, then the note', () => {
    const doc = htmlToAdf(longHtml(100));
    expect(adfLength(doc)).toBeGreaterThan(100_000);
    const { doc: fitted, cut } = fitAdf(doc, NOTE);
    expect(cut).toBe(true);
    expectFitted(fitted);
    expect(fitted.content.at(-1)).toEqual(NOTE[0]);
    const kept = fitted.content.slice(0, -1);
    // Every kept block but the last is the original's, in order; the last is the original's or a shortened one.
    expect(kept.slice(0, -1)).toEqual(doc.content.slice(0, kept.length - 1));
    const last = kept.at(-1)!;
    expect(last.type).toBe(doc.content[kept.length - 1]!.type);
    expect(textOf(doc.content[kept.length - 1]!).startsWith(textOf(last))).toBe(true);
    // Close to the budget: nothing worth keeping was dropped early.
    expect(adfLength(fitted)).toBeGreaterThan(ADF_BUDGET - 1_000);
  });

  it('shortens a long list by items and a long table by whole rows', () => {
    const items = Array.from({ length: 2000 }, (_, i) => `<li>item ${i} ${words(3)}</li>`).join('');
    const list = fitAdf(htmlToAdf(`<p>intro</p><ol start="5">${items}</ol>`), NOTE).doc;
    expectFitted(list);
    const ol = list.content[1]!;
    expect(ol).toMatchObject({ type: 'orderedList', attrs: { order: 5 } });
    expect(ol.content!.length).toBeGreaterThan(100);
    expect(ol.content!.length).toBeLessThan(2000);
    expect(textOf(ol.content!.at(-1)!)).toBe(`item ${ol.content!.length - 1} ${words(3)}`);

    const rows = Array.from({ length: 1500 }, (_, i) => `<tr><td>r${i}</td><td>${words(4)}</td></tr>`).join(
      '',
    );
    const table = fitAdf(htmlToAdf(`<table><tr><th>A</th><th>B</th></tr>${rows}</table>`), NOTE).doc;
    expectFitted(table);
    const kept = table.content[0]!.content!;
    expect(kept.length).toBeGreaterThan(50);
    expect(kept.every((row) => row.content!.length === 2)).toBe(true);
  });

  it('cuts inside text only when the first block alone is too long: a paragraph at a word, code at a line', () => {
    const paragraph = fitAdf(htmlToAdf(`<p>${words(12_000)}</p><p>after</p>`), NOTE).doc;
    expectFitted(paragraph);
    const kept = textOf(paragraph.content[0]!);
    expect(kept).toMatch(/ word\d+$/);
    expect(words(12_000).startsWith(`${kept} `)).toBe(true);
    expect(paragraph.content).toHaveLength(2);

    const lines = Array.from({ length: 5000 }, (_, i) => `console.log("line ${i}");`).join('\n');
    const code = fitAdf(htmlToAdf(`<pre>${lines}</pre>`), NOTE).doc;
    expectFitted(code);
    const codeText = textOf(code.content[0]!);
    expect(lines.startsWith(`${codeText}\n`)).toBe(true);

    // Not the first block: the cut falls before it.
    const second = fitAdf(htmlToAdf(`<p>first</p><p>${words(12_000)}</p>`), NOTE).doc;
    expect(second.content).toEqual([htmlToAdf('<p>first</p>').content[0], NOTE[0]]);
  });

  it('measures escapes and astral characters as JSON does, never splitting a surrogate pair', () => {
    const doc = htmlToAdf(`<p>${'"\\🚀 '.repeat(20_000)}</p>`);
    const { doc: fitted } = fitAdf(doc, NOTE);
    expectFitted(fitted);
    const kept = textOf(fitted.content[0]!);
    expect(kept).not.toMatch(/[\ud800-\udbff]$/);
    expect(kept.length).toBeGreaterThan(10_000);
  });
});

/** A hand-built work item, as the Azure DevOps client answers it. */
function workItem(id: number, fields: Record<string, unknown>): AdoWorkItem {
  return { id, rev: 1, fields: { 'System.Title': 'Checkout fails', ...fields } } as unknown as AdoWorkItem;
}

describe('descriptionOf and fullDescriptionOf', () => {
  it('keeps a title Jira cannot take as a summary in a Full title section', () => {
    const title = `Checkout fails when ${'the customer pays with a voucher and a card '.repeat(8)}`.trim();
    expect(title.length).toBeGreaterThan(255);
    const doc = descriptionOf(
      workItem(3, { 'System.Title': title, 'System.Description': '<p>Body</p>' }),
      () => {
        throw new Error('no warning expected');
      },
    );
    // Then the footer: a rule and its line.
    expect(doc.content.map(textOf)).toEqual([
      'Full title',
      title,
      'Body',
      '',
      'Migrated from Azure DevOps #3',
    ]);
  });

  it('cuts a 100 kB description with a note and a warning, and attaches the whole of it', () => {
    const html = longHtml(100);
    const item = workItem(42, {
      'System.Description': html,
      'Microsoft.VSTS.Common.AcceptanceCriteria': '<p>Given a cart</p>',
    });
    const warnings: string[] = [];
    const doc = descriptionOf(item, (w) => warnings.push(w));
    expectFitted(doc);
    // The note, then the footer (kept whole: it counts against the limit).
    expect(doc.content.at(-2)!.type).toBe('rule');
    expect(textOf(doc.content.at(-1)!)).toBe('Migrated from Azure DevOps #42');
    expect(textOf(doc.content.at(-3)!)).toBe(
      'Jira takes at most 32,767 characters in a description: this one was cut here. The full text is attached as description-42.html.',
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^#42: warning: description measures \d{6} characters as ADF, over Jira's limit of 32767: cut to \d{5}; the full text goes into description-42\.html$/,
      ),
    ]);
    const file = fullDescriptionOf(item)!;
    expect(file.fileName).toBe(fullDescriptionName(42));
    expect(file.html).toContain(html);
    expect(file.html).toContain('<h2>Acceptance criteria</h2>\n<p>Given a cart</p>');
    expect(file.size).toBe(Buffer.byteLength(file.html));
  });

  it('attaches nothing for a description within the limit', () => {
    const html = longHtml(4);
    expect(adfLength(htmlToAdf(html))).toBeGreaterThan(10_000);
    const item = workItem(5, { 'System.Description': html });
    const doc = descriptionOf(item, () => undefined);
    expect(doc.content.slice(0, -2)).toEqual(htmlToAdf(html).content);
    expect(doc.content.at(-2)).toEqual({ type: 'rule' });
    expect(fullDescriptionOf(item)).toBeUndefined();
  });
});
