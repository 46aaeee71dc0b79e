/**
 * The converter over a corpus: hand-written fragments (test/fixtures/html/corpus.html: every construct plus
 * nasty shapes), everything the Azure DevOps sandbox generator writes into HTML fields and comments, and a
 * seeded fuzzer composing the constructs at random. Every document must pass Atlassian's validator, hold the
 * structural rules the validator does not check, and keep every visible character of its HTML.
 */
import { readFileSync } from 'node:fs';
import { type ChildNode, Comment, Element, Text } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import {
  type AdfDoc,
  type AdfNode,
  type HtmlToAdfContext,
  htmlToAdf,
  sectionsToAdf,
  validateAdf,
} from '../../functions/domain/adf/index.ts';
import { type Random, seededRandom } from '../../local/sandbox/common/random.ts';
import { type AdoWorld, commentAt } from '../../local/sandbox/generator/index.ts';
import { generatedHtml, SANDBOX_BASE_URL } from '../support/html-fragments.ts';

interface Fragment {
  name: string;
  html: string;
  /** The context used for the full check (resolving some references, people and images, not all). */
  ctx: HtmlToAdfContext;
  /** Whether content moves (a table's stray content goes before it), so only the characters are compared. */
  unordered?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// The oracle: what the converter must hold for any input.

/** Resolves everything without changing text, so output text can be compared with the HTML's. */
const NEUTRAL: HtmlToAdfContext = {
  mention: ({ displayName }) => ({ accountId: 'acc', displayName }),
  image: (src) => ({ mediaId: `m-${src.length}` }),
};

/** What a browser shows no text for. */
const INVISIBLE = new Set(
  'script style template noscript iframe frame frameset object embed applet video audio canvas svg math select datalist head title meta link base xml input col colgroup wbr'.split(
    ' ',
  ),
);
const hidden = (el: Element) =>
  el.attribs.hidden !== undefined || /(^|;)\s*display\s*:\s*none/i.test(el.attribs.style ?? '');

/** A Word list paragraph (`mso-list:l0 level1 lfo1`): its bullet or number becomes the list's own. */
const wordListParagraph = (el: Element) =>
  el.name === 'p' && /mso-list\s*:\s*l\d+\s+level\d+\s+lfo\d+/i.test(el.attribs.style ?? '');
const wordMarker = (el: Element) => /mso-list\s*:\s*ignore/i.test(el.attribs.style ?? '');

function visibleText(nodes: ChildNode[], inWordList = false): string {
  let downlevel = false;
  return nodes
    .map((n) => {
      // Word's marker: in an mso-list:Ignore span, or between <![if !supportLists]> and <![endif]>.
      if (inWordList && n instanceof Comment) {
        if (/^\[if !supportLists\]$/i.test(n.data.trim())) downlevel = true;
        if (/^\[endif\]$/i.test(n.data.trim())) downlevel = false;
      }
      if (downlevel) return '';
      if (n instanceof Text) return n.data;
      if (n instanceof Element && !INVISIBLE.has(n.name) && !hidden(n)) {
        if (inWordList && wordMarker(n)) return '';
        return visibleText(n.children, inWordList || wordListParagraph(n));
      }
      return '';
    })
    .join('');
}

function adfText(node: AdfNode): string {
  if (node.type === 'text') return node.text ?? '';
  if (node.type === 'mention') return String(node.attrs?.text ?? '');
  return (node.content ?? []).map(adfText).join('');
}

/** The characters that must survive: no white space, control characters or lone surrogates. */
const squash = (s: string) => s.replace(/[\s\p{Cc}\ufeff]|[\ud800-\udfff]/gu, '');
const sorted = (s: string) => [...s].sort().join('');

/** The nodes that may carry marks, and which: text any, media only a link (an image inside a link). */
const MARK_NODES: Record<string, (type: string) => boolean> = {
  text: () => true,
  media: (type) => type === 'link',
};
const ITEM_STARTS = new Set(['paragraph', 'codeBlock', 'mediaSingle']);
const EMPTY_PARAGRAPH_PARENTS = new Set(['listItem', 'tableCell', 'tableHeader']);

/** Rules the validator does not check but the converter promises. */
function structuralProblems(node: AdfNode, parent?: AdfNode): string[] {
  const out: string[] = [];
  const marks = node.marks ?? [];
  const allowed = MARK_NODES[node.type];
  if (marks.some((m) => !allowed?.(m.type))) out.push(`${node.type} carries marks`);
  if (new Set(marks.map((m) => m.type)).size !== marks.length) out.push('a mark type twice');
  if (marks.some((m) => m.type === 'code') && marks.some((m) => m.type !== 'code' && m.type !== 'link'))
    out.push('code combined with a mark other than link');
  if (node.type === 'text' && !node.text) out.push('empty text');
  if (node.type === 'listItem' && !ITEM_STARTS.has(node.content?.[0]?.type ?? ''))
    out.push(`listItem starting with ${node.content?.[0]?.type}`);
  if (node.type === 'paragraph') {
    const content = node.content ?? [];
    if (content.length === 0 && !EMPTY_PARAGRAPH_PARENTS.has(parent?.type ?? 'doc'))
      out.push(`empty paragraph in ${parent?.type ?? 'doc'}`);
    if (
      content.length > 0 &&
      content.every((c) => c.type === 'hardBreak' || (c.type === 'text' && !c.text?.trim()))
    )
      out.push('blank paragraph');
  }
  if (node.type === 'table') out.push(...gridProblems(node));
  const content = node.content ?? [];
  content.forEach((child, i) => {
    const prev = content[i - 1];
    if (
      prev?.type === 'text' &&
      child.type === 'text' &&
      JSON.stringify(prev.marks) === JSON.stringify(child.marks)
    )
      out.push('unmerged adjacent texts');
    out.push(...structuralProblems(child, node));
  });
  return out;
}

/** Every row of a table covers the same number of columns, spans included. */
function gridProblems(table: AdfNode): string[] {
  const rows = table.content ?? [];
  const taken = rows.map(() => new Set<number>());
  rows.forEach((row, r) => {
    let col = 0;
    for (const cell of row.content ?? []) {
      while (taken[r]!.has(col)) col++;
      const cs = Number(cell.attrs?.colspan ?? 1);
      const rs = Number(cell.attrs?.rowspan ?? 1);
      for (let dr = 0; dr < rs; dr++) for (let dc = 0; dc < cs; dc++) taken[r + dr]?.add(col + dc);
      if (r + rs > rows.length) return;
      col += cs;
    }
  });
  const widths = new Set(taken.map((t) => t.size));
  return widths.size > 1 ? [`ragged table (row widths ${[...widths].join(', ')})`] : [];
}

interface Figures {
  fragments: number;
  documents: number;
  invalid: number;
  failures: string[];
}

function check(fragments: Fragment[]): Figures {
  const figures: Figures = { fragments: 0, documents: 0, invalid: 0, failures: [] };
  const fail = (f: Fragment, what: string) => {
    figures.invalid++;
    if (figures.failures.length < 10) figures.failures.push(`${f.name}: ${what}\n  ${f.html.slice(0, 300)}`);
  };
  for (const f of fragments) {
    figures.fragments++;
    const docs: [string, AdfDoc][] = [
      ['full', htmlToAdf(f.html, f.ctx)],
      ['neutral', htmlToAdf(f.html, NEUTRAL)],
      ['bare', htmlToAdf(f.html)],
    ];
    for (const [label, doc] of docs) {
      figures.documents++;
      const problems = [...validateAdf(doc), ...structuralProblems(doc as AdfNode)];
      if (problems.length > 0) fail(f, `${label}: ${problems.slice(0, 3).join('; ')}`);
    }
    const expected = squash(visibleText(parseDocument(f.html, { decodeEntities: true }).children));
    const actual = squash(docs[1]![1].content.map(adfText).join(''));
    const same = f.unordered ? sorted(expected) === sorted(actual) : expected === actual;
    if (!same)
      fail(f, `text changed:\n  expected ${expected.slice(0, 200)}\n  actual   ${actual.slice(0, 200)}`);
  }
  return figures;
}

function expectClean(name: string, figures: Figures): void {
  console.log(
    `${name}: ${figures.fragments} fragments, ${figures.documents} documents checked, ${figures.invalid} invalid`,
  );
  expect(figures.failures).toEqual([]);
  expect(figures.invalid).toBe(0);
}

// ---------------------------------------------------------------------------------------------------------
// Hand-written fragments.

/** Resolves some of everything, like a real migration where a few people, items and images did not map. */
const PARTIAL: HtmlToAdfContext = {
  mention: ({ adoId, displayName }) =>
    adoId && adoId !== '00000000-0000-0000-0000-000000000000'
      ? { accountId: `acc-${adoId}`, displayName }
      : undefined,
  workItemKey: (id) => (id % 2 === 1 && id < 1000 ? `MIG-${id}` : undefined),
  image: (src) =>
    src.includes('11111111') || src.includes('x.example') ? { mediaId: 'media-1', alt: 'shot' } : undefined,
};
const WITH_CARDS: HtmlToAdfContext = {
  ...PARTIAL,
  issueUrl: (key) => `https://acme.atlassian.net/browse/${key}`,
};

function handWritten(): Fragment[] {
  const file = readFileSync(new URL('../fixtures/html/corpus.html', import.meta.url), 'utf8');
  const parts = file.split(/<!-- @@ (.+?) -->/).slice(1);
  const out: Fragment[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const name = parts[i]!;
    const html = parts[i + 1]!.replace(/\n$/, '');
    const unordered = name === 'table foster content' || name === 'cells without rows';
    out.push(
      { name, html, ctx: PARTIAL, unordered },
      { name: `${name} (cards)`, html, ctx: WITH_CARDS, unordered },
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The Azure DevOps sandbox generator's HTML.

const BASE_URL = SANDBOX_BASE_URL;
const ATTACHMENT_ID = /\/_apis\/wit\/attachments\/([0-9a-f-]{36})/;

/** People with a Jira account map, 90% of items were migrated, three images in four were uploaded. */
function worldContext(world: AdoWorld, cards: boolean): HtmlToAdfContext {
  return {
    mention: ({ adoId }) => {
      const person = world.people.find((p) => p.adoId === adoId);
      return person && person.on !== 'ado'
        ? { accountId: person.jiraAccountId, displayName: person.displayName }
        : undefined;
    },
    workItemKey: (id) => (id >= 1 && id <= world.items * 0.9 ? `WEB-${id}` : undefined),
    ...(cards ? { issueUrl: (key: string) => `https://contoso.atlassian.net/browse/${key}` } : {}),
    image: (src) => {
      const id = ATTACHMENT_ID.exec(src)?.[1];
      const att = id ? world.attachments.get(id) : undefined;
      return att && att.fileId % 4 !== 0 ? { mediaId: att.id, alt: att.name } : undefined;
    },
  };
}

function generated(
  seed: number,
  items: number,
): { fragments: Fragment[]; sections: { html: string; heading: string | null }[][]; ctx: HtmlToAdfContext } {
  const { world, items: generatedItems } = generatedHtml(seed, items);
  const ctx = worldContext(world, seed % 2 === 0);
  const fragments: Fragment[] = [];
  const sections: { html: string; heading: string | null }[][] = [];
  for (const { item, fields: f } of generatedItems) {
    const fields: [string, string | null][] = [
      ['System.Description', f.description],
      ['Microsoft.VSTS.Common.AcceptanceCriteria', f.acceptanceCriteria],
      ['Microsoft.VSTS.TCM.ReproSteps', f.reproSteps],
      ['Microsoft.VSTS.TCM.SystemInfo', f.systemInfo],
      ['Custom.ReleaseNotes', (item.custom?.['Custom.ReleaseNotes'] as string | undefined) ?? null],
    ];
    for (const [ref, html] of fields)
      if (html !== null) fragments.push({ name: `seed ${seed} #${item.id} ${ref}`, html, ctx });
    for (let k = 0; k < item.commentTotal; k++) {
      fragments.push({
        name: `seed ${seed} #${item.id} comment ${k}`,
        html: commentAt(world, item, k, BASE_URL).text,
        ctx,
      });
    }
    sections.push([
      { heading: null, html: f.description ?? '' },
      { heading: 'Acceptance criteria', html: f.acceptanceCriteria ?? '' },
      { heading: 'Steps to reproduce', html: f.reproSteps ?? '' },
      { heading: 'System info', html: f.systemInfo ?? '' },
    ]);
  }
  return { fragments, sections, ctx };
}

// ---------------------------------------------------------------------------------------------------------
// A seeded fuzzer composing the constructs (and breaking them: unclosed, cut short, misnested).

const WORDS = [
  'alpha',
  'beta',
  'Zoë',
  'O’Brien',
  '日本語',
  '🚀',
  '✅',
  'x',
  'naïve',
  '42',
  'C#',
  'a&b',
  'end.',
];
const ENTITIES = [
  '&amp;',
  '&lt;',
  '&gt;',
  '&quot;',
  '&#39;',
  '&nbsp;',
  '&eacute;',
  '&#x1F41B;',
  '&hellip;',
  '&#160;',
];
const INLINE_TAGS = [
  'b',
  'strong',
  'i',
  'em',
  'u',
  's',
  'strike',
  'del',
  'code',
  'sub',
  'sup',
  'span',
  'font',
  'o:p',
  'kbd',
  'x-unknown',
];
const BLOCK_TAGS = ['p', 'div', 'section', 'center', 'blockquote'];
const STYLES = [
  'color:rgb(255, 0, 0);',
  'font-weight:bold',
  'font-style:italic',
  'text-decoration:underline',
  'text-decoration:line-through',
  'vertical-align:super',
  'font-size:11.0pt;font-family:"Calibri",sans-serif;color:#1F497D',
  'background-color:rgb(255, 255, 0);',
];

function fuzzText(r: Random): string {
  const parts: string[] = [];
  for (let i = r.int(1, 4); i > 0; i--) {
    const x = r.next();
    if (x < 0.55) parts.push(r.pick(WORDS));
    else if (x < 0.7) parts.push(r.pick(ENTITIES));
    else if (x < 0.8) parts.push(`#${r.int(1, 30)}`);
    else if (x < 0.9) parts.push(r.pick([' ', '  ', '\n', '\t', ' \n ']));
    else parts.push(`(#${r.int(1, 12)})`);
  }
  return parts.join(r.chance(0.8) ? ' ' : '');
}

function fuzzInline(r: Random, depth: number): string {
  const x = r.next();
  if (depth <= 0 || x < 0.35) return fuzzText(r);
  if (x < 0.55) {
    const tag = r.pick(INLINE_TAGS);
    const style = r.chance(0.3) ? ` style='${r.pick(STYLES)}'` : '';
    return `<${tag}${style}>${fuzzInlines(r, depth - 1)}</${tag}>`;
  }
  if (x < 0.62) {
    const href = r.pick([
      'https://e.example/a?b=1&amp;c=2',
      'mailto:m@e.example',
      '#',
      'javascript:x()',
      '/rel',
      'https://dev.azure.com/o/p/_workitems/edit/7/',
    ]);
    return `<a href="${href}">${fuzzInlines(r, depth - 1)}</a>`;
  }
  if (x < 0.68)
    return `<a href="#" data-vss-mention="version:2.0,${r.pick(['guid-1', 'guid-2', '00000000-0000-0000-0000-000000000000'])}">@${r.pick(['Ava Brown', 'Zoë O’Brien', 'Bo'])}</a>`;
  if (x < 0.72)
    return `<a href="https://dev.azure.com/o/p/_workitems/edit/${r.int(1, 9)}/" data-vss-mention="version:1.0">#${r.int(1, 9)}</a>`;
  if (x < 0.8) return '<br>';
  if (x < 0.84)
    return `<img src="https://${r.pick(['x.example', 'dev.azure.com'])}/_apis/wit/attachments/${r.int(1, 5)}?fileName=f${r.int(1, 5)}.png" alt="Image">`;
  if (x < 0.88)
    return r.pick([
      '<o:p></o:p>',
      '<o:p>&nbsp;</o:p>',
      '<!-- c -->',
      '<!--[if gte mso 9]><xml><w:x/></xml><![endif]-->',
      '<wbr>',
    ]);
  // A block inside inline markup: the converter must hoist it.
  return `<${r.pick(['b', 'span', 'a href="https://e.example"'])}>${fuzzBlock(r, depth - 1)}</${r.pick(['b', 'span', 'a'])}>`;
}

const fuzzInlines = (r: Random, depth: number) =>
  Array.from({ length: r.int(1, 4) }, () => fuzzInline(r, depth)).join(r.chance(0.5) ? ' ' : '');

function fuzzList(r: Random, depth: number): string {
  const tag = r.chance(0.5) ? 'ul' : 'ol';
  const start = tag === 'ol' && r.chance(0.3) ? ` start="${r.int(0, 9)}"` : '';
  const items = Array.from({ length: r.int(1, 4) }, () => {
    const nested = depth > 0 && r.chance(0.4) ? fuzzBlock(r, depth - 1) : '';
    return r.chance(0.1)
      ? `<ul><li>${fuzzInlines(r, 1)}</li></ul>`
      : `<li>${fuzzInlines(r, 1)}${nested}</li>`;
  });
  return `<${tag}${start}>${items.join('')}</${tag}>`;
}

function fuzzTable(r: Random, depth: number): string {
  const rows = Array.from({ length: r.int(1, 4) }, (_, i) => {
    const cells = Array.from({ length: r.int(1, 4) }, () => {
      const tag = i === 0 && r.chance(0.5) ? 'th' : 'td';
      const span = r.chance(0.15)
        ? ` colspan="${r.int(1, 3)}"`
        : r.chance(0.1)
          ? ` rowspan="${r.int(1, 3)}"`
          : '';
      const content =
        depth > 0 && r.chance(0.3) ? fuzzBlock(r, depth - 1) : r.chance(0.2) ? '' : fuzzInlines(r, 1);
      return `<${tag}${span}>${content}</${tag}>`;
    });
    return `<tr>${cells.join('')}</tr>`;
  });
  return r.chance(0.5) ? `<table><tbody>${rows.join('')}</tbody></table>` : `<table>${rows.join('')}</table>`;
}

function fuzzBlock(r: Random, depth: number): string {
  const x = r.next();
  if (x < 0.25) {
    const tag = r.pick(BLOCK_TAGS);
    return `<${tag}${r.chance(0.2) ? ' class=MsoNormal' : ''}>${depth > 0 && r.chance(0.2) ? fuzzBlock(r, depth - 1) : ''}${fuzzInlines(r, 2)}</${tag}>`;
  }
  if (x < 0.33) return `<h${r.int(1, 6)}>${fuzzInlines(r, 1)}</h${r.int(1, 6)}>`;
  if (x < 0.48) return depth > 0 ? fuzzList(r, depth) : `<ul><li>${fuzzText(r)}</li></ul>`;
  if (x < 0.58) return depth > 0 ? fuzzTable(r, depth) : `<table><tr><td>${fuzzText(r)}</td></tr></table>`;
  if (x < 0.64)
    return `<pre>${r.chance(0.5) ? `<code class="language-${r.pick(['js', 'sql', 'x'])}">` : ''}${fuzzText(r).replaceAll(' ', '\n  ')}</pre>`;
  if (x < 0.68) return '<hr>';
  if (x < 0.74) return r.pick(['<div><br></div>', '<p></p>', '<p>&nbsp;</p>', '<div></div>', '<br>', '   ']);
  if (x < 0.78)
    return r.pick([
      '<script>var a = "<p>x</p>";</script>',
      '<style>p{}</style>',
      '<span style="display:none">gone</span>',
    ]);
  if (x < 0.82)
    return `<blockquote>${depth > 0 ? fuzzBlock(r, depth - 1) : ''}${fuzzInlines(r, 1)}</blockquote>`;
  if (x < 0.85) return `<li>${fuzzInlines(r, 1)}</li>`;
  if (x < 0.9) return fuzzWordList(r, depth);
  return fuzzInlines(r, 2);
}

/** Word's list paragraphs: levels that jump, bullets and numbers mixed, continuation paragraphs, filler. */
function fuzzWordList(r: Random, depth: number): string {
  const markers = ['·', 'o', '§', '1.', '2)', '(3)', 'a)', 'iv.', '1.2.', 'Ø', ''];
  return Array.from({ length: r.int(1, 5) }, () => {
    if (r.chance(0.15)) return `<p class=MsoListParagraphCxSpMiddle>${fuzzInlines(r, 1)}</p>`;
    const marker = r.pick(markers);
    const shown = r.chance(0.7)
      ? `<span style='mso-list:Ignore'>${marker}<span>&nbsp;&nbsp; </span></span>`
      : `<![if !supportLists]><span style='font-family:Symbol'>${marker}&nbsp;</span><![endif]>`;
    const content = depth > 0 && r.chance(0.2) ? fuzzBlock(r, depth - 1) : fuzzInlines(r, 1);
    return `<p class=MsoListParagraph style='mso-list:l${r.int(0, 2)} level${r.int(1, 4)} lfo${r.int(1, 2)}'>${shown}${content}</p>`;
  }).join(r.pick(['', '\n', '<!-- c -->']));
}

function fuzzed(seed: number, count: number): Fragment[] {
  const r = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    let html = Array.from({ length: r.int(1, 5) }, () => fuzzBlock(r, r.int(0, 4))).join(
      r.chance(0.3) ? '\n' : '',
    );
    // Markup as it arrives broken: cut anywhere (inside a tag or an entity too), or closing tags dropped.
    // A cut can leave text loose between table rows, which moves before the table (as in a browser).
    const cut = r.chance(0.15);
    if (cut) html = html.slice(0, r.int(0, html.length));
    else if (r.chance(0.1)) html = html.replace(/<\/(b|i|li|td|tr|p|div|ul)>/g, '');
    return { name: `fuzz ${seed}/${i}`, html, ctx: PARTIAL, unordered: cut };
  });
}

// ---------------------------------------------------------------------------------------------------------

describe('corpus', () => {
  it('converts every hand-written fragment to a valid document that keeps its text', () => {
    const fragments = handWritten();
    expect(fragments.length).toBeGreaterThan(150);
    expectClean('hand-written', check(fragments));
  });

  it('converts every HTML field and comment of generated Azure DevOps projects', () => {
    const all: Fragment[] = [];
    let sectionDocs = 0;
    // Both contexts (an odd and an even seed) at 200 items: 3,925 fragments with every shape of element (its
    // parent, attributes and class) that three seeds of 300 items give in 7,231, at about half the validator's time.
    for (const seed of [1, 2]) {
      const { fragments, sections, ctx } = generated(seed, 200);
      all.push(...fragments);
      for (const s of sections) {
        const doc = sectionsToAdf(s, ctx);
        expect(validateAdf(doc)).toEqual([]);
        sectionDocs++;
      }
    }
    expect(all.length).toBeGreaterThan(3000);
    console.log(`generated: ${sectionDocs} multi-section descriptions valid`);
    expectClean('generated', check(all));
  });

  it('converts fuzzed fragments', () => {
    const fragments = [...fuzzed(1, 400), ...fuzzed(2, 400)];
    expectClean('fuzzed', check(fragments));
  });

  it('has an oracle that catches a lost word, a broken document and a structural slip', () => {
    const f: Fragment = { name: 'probe', html: '<p>keep me</p>', ctx: {} };
    expect(check([f]).invalid).toBe(0);
    // The same checks, fed on purpose with what a broken converter would produce.
    expect(squash(visibleText(parseDocument('<p>keep me</p>').children))).not.toBe(squash('keep'));
    expect(validateAdf({ type: 'doc', version: 1, content: [{ type: 'text', text: 'loose' }] })).not.toEqual(
      [],
    );
    const slip: AdfNode = {
      type: 'doc',
      content: [
        {
          type: 'bulletList',
          content: [{ type: 'listItem', content: [{ type: 'bulletList', content: [] }] }],
        },
        { type: 'paragraph', content: [{ type: 'text', text: ' ' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        {
          type: 'table',
          content: [
            {
              type: 'tableRow',
              content: [
                { type: 'tableCell', content: [] },
                { type: 'tableCell', content: [] },
              ],
            },
            { type: 'tableRow', content: [{ type: 'tableCell', content: [] }] },
          ],
        },
        {
          type: 'mediaSingle',
          content: [{ type: 'media', marks: [{ type: 'strong' }] }],
        },
        {
          type: 'mediaSingle',
          content: [{ type: 'media', marks: [{ type: 'link', attrs: { href: 'https://e.example' } }] }],
        },
      ],
    };
    expect(structuralProblems(slip)).toEqual([
      'listItem starting with bulletList',
      'blank paragraph',
      'unmerged adjacent texts',
      'ragged table (row widths 2, 1)',
      'media carries marks',
    ]);
    // Word's bullet is not text to keep in a list paragraph; the same span elsewhere is.
    const marker = "<span style='mso-list:Ignore'>·</span>x";
    expect(visibleText(parseDocument(`<p style='mso-list:l0 level1 lfo1'>${marker}</p>`).children)).toBe('x');
    expect(visibleText(parseDocument(`<p>${marker}</p>`).children)).toBe('·x');
  });
});
