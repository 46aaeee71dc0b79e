/** htmlToAdf, construct by construct: the exact ADF each shape of Azure DevOps HTML becomes. */
import { describe, expect, it } from 'vitest';
import {
  type AdfMark,
  type AdfNode,
  type AdfWarning,
  type HtmlToAdfContext,
  htmlToAdf,
  validateAdf,
} from '../../functions/domain/adf/index.ts';

const t = (text: string, ...marks: AdfMark[]): AdfNode =>
  marks.length ? { type: 'text', text, marks } : { type: 'text', text };
const p = (...content: AdfNode[]): AdfNode => ({ type: 'paragraph', content });
const h = (level: number, ...content: AdfNode[]): AdfNode => ({ type: 'heading', attrs: { level }, content });
const li = (...content: AdfNode[]): AdfNode => ({ type: 'listItem', content });
const ul = (...content: AdfNode[]): AdfNode => ({ type: 'bulletList', content });
const ol = (order: number, ...content: AdfNode[]): AdfNode => ({
  type: 'orderedList',
  attrs: { order },
  content,
});
const br: AdfNode = { type: 'hardBreak' };
const strong: AdfMark = { type: 'strong' };
const em: AdfMark = { type: 'em' };
const code: AdfMark = { type: 'code' };
const link = (href: string): AdfMark => ({ type: 'link', attrs: { href } });
const cell = (...content: AdfNode[]): AdfNode => ({ type: 'tableCell', content });
const row = (...content: AdfNode[]): AdfNode => ({ type: 'tableRow', content });
const table = (...rows: AdfNode[]): AdfNode => ({ type: 'table', content: rows });

/** Converts, checks the result with Atlassian's validator, and returns the content and the warnings. */
function convert(html: string, ctx: HtmlToAdfContext = {}) {
  const warnings: AdfWarning[] = [];
  const doc = htmlToAdf(html, { ...ctx, warn: (w) => warnings.push(w) });
  expect(validateAdf(doc)).toEqual([]);
  expect(doc.type).toBe('doc');
  expect(doc.version).toBe(1);
  return { content: doc.content, warnings };
}
const blocks = (html: string, ctx?: HtmlToAdfContext) => convert(html, ctx).content;

describe('text blocks', () => {
  it('turns headings h1-h6 into headings of the same level', () => {
    expect(blocks('<h1>One</h1><h3>Three</h3><h6>Six</h6>')).toEqual([
      h(1, t('One')),
      h(3, t('Three')),
      h(6, t('Six')),
    ]);
  });

  it('makes paragraphs of p and div, and of bare text', () => {
    expect(blocks('<p>First</p><div>Second</div>Third')).toEqual([
      p(t('First')),
      p(t('Second')),
      p(t('Third')),
    ]);
  });

  it('splits a div holding inline text and blocks into separate paragraphs', () => {
    expect(blocks('<div>before<div>inner</div>after</div>')).toEqual([
      p(t('before')),
      p(t('inner')),
      p(t('after')),
    ]);
  });

  it('turns <br> into hardBreak and drops a trailing one', () => {
    expect(blocks('<div>line 1<br>line 2<br></div>')).toEqual([p(t('line 1'), br, t('line 2'))]);
  });

  it('keeps a leading <br> (it shows an empty first line)', () => {
    expect(blocks('<p><br>text</p>')).toEqual([p(br, t('text'))]);
  });

  it('drops paragraphs that show nothing', () => {
    expect(blocks('<div><br></div><p></p><p>&nbsp;</p><div></div><p> \n </p><p>kept</p>')).toEqual([
      p(t('kept')),
    ]);
  });

  it('gives an empty document for empty, blank and <br>-only input', () => {
    for (const html of ['', '   ', '\n\t', '<br>', '<br><br>', '<p></p>', '<!-- only a comment -->']) {
      expect(blocks(html)).toEqual([]);
    }
  });

  it('collapses white space as a browser does, across elements and around line breaks', () => {
    expect(blocks('<p>  a \n  b<b> c </b> d  <br>  e </p>')).toEqual([
      p(t('a b'), t(' c ', strong), t('d'), br, t('e')),
    ]);
  });

  it('keeps no-break spaces (as plain spaces) where collapsing would remove them', () => {
    expect(blocks('<p>a&nbsp;&nbsp;b</p>')).toEqual([p(t('a  b'))]);
  });

  it('decodes HTML entities', () => {
    expect(blocks('<p>&lt;tag&gt; &amp; &quot;q&quot; &#39;a&#39; &eacute; &#x1F680; &copy;</p>')).toEqual([
      p(t('<tag> & "q" \'a\' é 🚀 ©')),
    ]);
  });

  it('keeps emoji and non-Latin text as text', () => {
    expect(blocks('<p>Done ✅ 🎉 ⚠️ 日本語 עברית</p>')).toEqual([p(t('Done ✅ 🎉 ⚠️ 日本語 עברית'))]);
  });

  it('removes control characters and byte-order marks', () => {
    expect(blocks('<p>\ufeffa\u0001b\u0007c</p>')).toEqual([p(t('abc'))]);
  });

  it('turns hr into a rule', () => {
    expect(blocks('<p>a</p><hr><p>b</p>')).toEqual([p(t('a')), { type: 'rule' }, p(t('b'))]);
  });

  it('keeps a heading split around a block met inside it', () => {
    expect(blocks('<h2>Title<ul><li>x</li></ul>more</h2>')).toEqual([
      h(2, t('Title')),
      ul(li(p(t('x')))),
      h(2, t('more')),
    ]);
  });
});

describe('marks', () => {
  it('maps strong/b, em/i, u, s/strike/del, code, sub and sup', () => {
    expect(
      blocks(
        '<p><b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><s>s</s><strike>k</strike><del>d</del><code>c</code><sub>2</sub><sup>3</sup></p>',
      ),
    ).toEqual([
      p(
        t('bs', strong),
        t('ie', em),
        t('u', { type: 'underline' }),
        t('skd', { type: 'strike' }),
        t('c', code),
        t('2', { type: 'subsup', attrs: { type: 'sub' } }),
        t('3', { type: 'subsup', attrs: { type: 'sup' } }),
      ),
    ]);
  });

  it('nests marks and keeps one mark per type', () => {
    expect(blocks('<p><b>a<i>b<b>c</b></i></b></p>')).toEqual([p(t('a', strong), t('bc', strong, em))]);
  });

  it('lets the inner of sub/sup win', () => {
    expect(blocks('<p><sup>a<sub>b</sub></sup></p>')).toEqual([
      p(
        t('a', { type: 'subsup', attrs: { type: 'sup' } }),
        t('b', { type: 'subsup', attrs: { type: 'sub' } }),
      ),
    ]);
  });

  it('drops the other marks on code text (ADF allows code with link only)', () => {
    expect(blocks('<p><b>x <code>y</code></b> <a href="https://e.com"><code>z</code></a></p>')).toEqual([
      p(t('x ', strong), t('y', code), t(' '), t('z', code, link('https://e.com'))),
    ]);
  });

  it('reads bold, italic, underline, strike-through and sub/sup from inline styles', () => {
    expect(
      blocks(
        '<p><span style="font-weight:bold">b</span><span style="FONT-STYLE: italic">i</span><span style="text-decoration:underline line-through">u</span><span style="vertical-align:super">s</span><b><span style="font-weight:normal">n</span></b></p>',
      ),
    ).toEqual([
      p(
        t('b', strong),
        t('i', em),
        t('u', { type: 'underline' }, { type: 'strike' }),
        t('s', { type: 'subsup', attrs: { type: 'sup' } }),
        t('n'),
      ),
    ]);
  });

  it('drops text colour, highlight and fonts', () => {
    expect(
      blocks(
        '<p><span style="color:rgb(255, 0, 0);">red</span> <font color="#1F497D" face="Calibri">blue</font> <span style="background-color:rgb(255, 255, 0);"><b><i>hi</i></b></span></p>',
      ),
    ).toEqual([p(t('red blue '), t('hi', strong, em))]);
  });

  it('turns http(s) and mailto links into link marks', () => {
    expect(
      blocks(
        '<p><a href="https://docs.example.com/a?v=2&amp;lang=en">docs</a> <a href="mailto:a@b.example">mail</a></p>',
      ),
    ).toEqual([
      p(
        t('docs', link('https://docs.example.com/a?v=2&lang=en')),
        t(' '),
        t('mail', link('mailto:a@b.example')),
      ),
    ]);
  });

  it('keeps only the text of links to other schemes, relative paths and anchors', () => {
    expect(
      blocks(
        '<p><a href="javascript:alert(1)">js</a> <a href="/relative">rel</a> <a href="#top">top</a> <a name="x">anchor</a></p>',
      ),
    ).toEqual([p(t('js rel top anchor'))]);
  });

  it('lets an inner link win over an outer one', () => {
    expect(blocks('<p><a href="https://a.example">x<a href="https://b.example">y</a></a></p>')).toEqual([
      p(t('x', link('https://a.example')), t('y', link('https://b.example'))),
    ]);
  });
});

describe('mentions', () => {
  const html =
    '<div><a href="#" data-vss-mention="version:2.0,0f4e2c1a-1111-2222-3333-444455556666">@Ava Brown</a> please check</div>';

  it('becomes a Jira mention when the person is mapped', () => {
    const seen: unknown[] = [];
    const { content, warnings } = convert(html, {
      mention: (ref) => {
        seen.push(ref);
        return { accountId: '5b10ac8d82e05b22cc7d4ef5', displayName: 'Ava Brown' };
      },
    });
    expect(seen).toEqual([{ adoId: '0f4e2c1a-1111-2222-3333-444455556666', displayName: 'Ava Brown' }]);
    expect(content).toEqual([
      p(
        { type: 'mention', attrs: { id: '5b10ac8d82e05b22cc7d4ef5', text: '@Ava Brown' } },
        t(' please check'),
      ),
    ]);
    expect(warnings).toEqual([]);
  });

  it('stays plain @Name text with an unmapped-mention warning when not mapped', () => {
    const { content, warnings } = convert(html, { mention: () => undefined });
    expect(content).toEqual([p(t('@Ava Brown please check'))]);
    expect(warnings).toEqual([
      {
        code: 'unmapped-mention',
        message: '@Ava Brown (0f4e2c1a-1111-2222-3333-444455556666) has no Jira account; kept as text',
      },
    ]);
  });

  it('warns too when the caller maps no one at all', () => {
    expect(convert(html).warnings.map((w) => w.code)).toEqual(['unmapped-mention']);
  });

  it('keeps the surrounding marks on an unmapped mention, and none on a mapped one', () => {
    const bold = `<b>${html}</b>`;
    expect(convert(bold).content).toEqual([p(t('@Ava Brown please check', strong))]);
    expect(convert(bold, { mention: () => ({ accountId: 'acc', displayName: 'Ava B.' }) }).content).toEqual([
      p({ type: 'mention', attrs: { id: 'acc', text: '@Ava B.' } }, t(' please check', strong)),
    ]);
  });
});

describe('work item references', () => {
  const keys: HtmlToAdfContext = { workItemKey: (id) => (id === 42 ? 'MIG-7' : undefined) };

  it('links a resolved #123 in text to the Jira issue by key', () => {
    const { content, warnings } = convert('<p>Blocked by #42, see (#42).</p>', keys);
    const ref = t('MIG-7', link('/browse/MIG-7'));
    expect(content).toEqual([p(t('Blocked by '), ref, t(', see ('), ref, t(').'))]);
    expect(warnings).toEqual([]);
  });

  it('becomes an inlineCard when the caller gives the issue URL', () => {
    const ctx: HtmlToAdfContext = { ...keys, issueUrl: (key) => `https://acme.atlassian.net/browse/${key}` };
    expect(blocks('<p>See #42</p>', ctx)).toEqual([
      p(t('See '), { type: 'inlineCard', attrs: { url: 'https://acme.atlassian.net/browse/MIG-7' } }),
    ]);
  });

  it('rewrites the editor’s work item links (data-vss-mention="version:1.0")', () => {
    const html =
      '<div>Blocked by <a href="https://dev.azure.com/org/Proj/_workitems/edit/42/" data-vss-mention="version:1.0">#42</a></div>';
    expect(blocks(html, keys)).toEqual([p(t('Blocked by '), t('MIG-7', link('/browse/MIG-7')))]);
  });

  it('points a work item link with other words at the migrated issue', () => {
    expect(blocks('<p><a href="https://dev.azure.com/o/p/_workitems/edit/42">the bug</a></p>', keys)).toEqual(
      [p(t('the bug', link('/browse/MIG-7')))],
    );
  });

  it('leaves unresolved references as written, with a warning', () => {
    const html =
      '<p>See #9 and <a href="https://dev.azure.com/o/p/_workitems/edit/8/" data-vss-mention="version:1.0">#8</a></p>';
    const { content, warnings } = convert(html, keys);
    expect(content).toEqual([
      p(t('See #9 and '), t('#8', link('https://dev.azure.com/o/p/_workitems/edit/8/'))),
    ]);
    expect(warnings.map((w) => w.code)).toEqual(['unresolved-reference', 'unresolved-reference']);
  });

  it('does not take C#1, page#12, URL fragments, code or link text for references', () => {
    const html =
      '<p>C#1 page#12 https://x.example/#/42 #42abc <code>#42</code> <a href="https://gh.example/pull/42">PR #42</a></p>';
    const { content, warnings } = convert(html, keys);
    expect(JSON.stringify(content)).not.toContain('MIG-7');
    expect(warnings).toEqual([]);
  });

  it('leaves everything as text when the caller resolves no references', () => {
    expect(blocks('<p>#42</p>')).toEqual([p(t('#42'))]);
  });
});

describe('images', () => {
  const src = 'https://dev.azure.com/org/0a1b/_apis/wit/attachments/9f8e?fileName=screen%20shot.png';
  const html = `<div>Before<img src="${src}" alt="Image" style="width:600px;">after</div>`;

  it('becomes a mediaSingle with the uploaded file, splitting the paragraph', () => {
    const { content, warnings } = convert(html, {
      image: (s) =>
        s === src ? { mediaId: 'f1e2d3c4-0000-4000-8000-000000000001', width: 1200, height: 800 } : undefined,
    });
    expect(content).toEqual([
      p(t('Before')),
      {
        type: 'mediaSingle',
        attrs: { layout: 'center' },
        content: [
          {
            type: 'media',
            attrs: {
              type: 'file',
              id: 'f1e2d3c4-0000-4000-8000-000000000001',
              collection: '',
              alt: 'Image',
              width: 1200,
              height: 800,
            },
          },
        ],
      },
      p(t('after')),
    ]);
    expect(warnings).toEqual([]);
  });

  it('becomes a paragraph linking to the source, with a warning, when not uploaded', () => {
    const { content, warnings } = convert(html, { image: () => undefined });
    expect(content).toEqual([p(t('Before')), p(t('screen shot.png', link(src))), p(t('after'))]);
    expect(warnings).toEqual([
      {
        code: 'unresolved-image',
        message: `image ${src} has no uploaded attachment; linked to its source instead`,
      },
    ]);
  });

  it('names a pasted data: image by its alt text, without a link', () => {
    const { content, warnings } = convert(
      '<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="diagram"></p>',
    );
    expect(content).toEqual([p(t('diagram'))]);
    expect(warnings.map((w) => w.code)).toEqual(['unresolved-image']);
  });

  it('ignores an image without a source', () => {
    expect(convert('<p>a<img alt="x">b</p>')).toEqual({ content: [p(t('ab'))], warnings: [] });
  });

  it('lifts an image out of a link and a heading, the link staying on the image', () => {
    expect(
      blocks(`<h3><a href="${src}">Shot <img src="${src}"></a></h3>`, { image: () => ({ mediaId: 'm' }) }),
    ).toEqual([
      h(3, t('Shot', link(src))),
      {
        type: 'mediaSingle',
        attrs: { layout: 'center' },
        content: [{ type: 'media', attrs: { type: 'file', id: 'm', collection: '' }, marks: [link(src)] }],
      },
    ]);
  });

  describe('inside a link', () => {
    const wiki = 'https://wiki.example/architecture';
    // As Word and ADO's editor write a clickable picture.
    const linked = `<p class=MsoNormal><a href="${wiki}"><span style='text-decoration:none'><img width=600 height=300 src="${src}" alt="Architecture"></span></a><o:p></o:p></p>`;

    it('keeps the link as a link mark on the media node', () => {
      const { content, warnings } = convert(linked, { image: () => ({ mediaId: 'm1' }) });
      expect(content).toEqual([
        {
          type: 'mediaSingle',
          attrs: { layout: 'center' },
          content: [
            {
              type: 'media',
              attrs: { type: 'file', id: 'm1', collection: '', alt: 'Architecture' },
              marks: [link(wiki)],
            },
          ],
        },
      ]);
      expect(warnings).toEqual([]);
    });

    it('puts no link on an image outside links, nor a mark other than the link', () => {
      const plain = blocks(`<b><img src="${src}"></b>`, { image: () => ({ mediaId: 'm2' }) });
      expect(plain).toEqual([
        {
          type: 'mediaSingle',
          attrs: { layout: 'center' },
          content: [{ type: 'media', attrs: { type: 'file', id: 'm2', collection: '' } }],
        },
      ]);
      const bold = blocks(`<b><a href="${wiki}"><img src="${src}"></a></b>`, {
        image: () => ({ mediaId: 'm3' }),
      });
      expect(bold[0]!.content![0]!.marks).toEqual([link(wiki)]);
    });

    it('links the placeholder of an image not uploaded where the image linked, with a warning', () => {
      const { content, warnings } = convert(linked, { image: () => undefined });
      expect(content).toEqual([p(t('screen shot.png', link(wiki)))]);
      expect(warnings).toEqual([
        {
          code: 'unresolved-image',
          message: `image ${src} has no uploaded attachment; its name keeps the enclosing link`,
        },
      ]);
    });

    it('keeps the link in a list item and a table cell', () => {
      const html = `<ul><li><a href="${wiki}"><img src="${src}"></a></li></ul><table><tr><td><a href="${wiki}"><img src="${src}"></a></td></tr></table>`;
      const media = {
        type: 'mediaSingle',
        attrs: { layout: 'center' },
        content: [{ type: 'media', attrs: { type: 'file', id: 'm', collection: '' }, marks: [link(wiki)] }],
      };
      expect(blocks(html, { image: () => ({ mediaId: 'm' }) })).toEqual([
        ul(li(media)),
        table(row(cell(media))),
      ]);
    });
  });
});

describe('lists', () => {
  it('converts nested bullet and ordered lists', () => {
    expect(blocks('<ul><li>a<ol><li>b<ul><li>c</li></ul></li></ol></li><li>d</li></ul>')).toEqual([
      ul(li(p(t('a')), ol(1, li(p(t('b')), ul(li(p(t('c'))))))), li(p(t('d')))),
    ]);
  });

  it('keeps the start of an ordered list', () => {
    expect(blocks('<ol start="4"><li>four</li><li>five</li></ol>')).toEqual([
      ol(4, li(p(t('four'))), li(p(t('five')))),
    ]);
  });

  it('attaches a list nested directly in a list to the item before it', () => {
    expect(blocks('<ul><li>a</li><ul><li>b</li></ul><li>c</li></ul>')).toEqual([
      ul(li(p(t('a')), ul(li(p(t('b'))))), li(p(t('c')))),
    ]);
  });

  it('starts an item with an empty paragraph when it opens with a nested list', () => {
    expect(blocks('<ul><li><ul><li>deep</li></ul></li></ul>')).toEqual([ul(li(p(), ul(li(p(t('deep'))))))]);
  });

  it('keeps empty items (their bullet shows) with an empty paragraph', () => {
    expect(blocks('<ol><li></li><li><br></li><li>x</li></ol>')).toEqual([
      ol(1, li(p()), li(p()), li(p(t('x')))),
    ]);
  });

  it('closes unclosed items and lists', () => {
    expect(blocks('<ul><li>a<li>b<ul><li>c')).toEqual([ul(li(p(t('a'))), li(p(t('b')), ul(li(p(t('c'))))))]);
  });

  it('makes an orphan li a list of its own', () => {
    expect(blocks('<li>lonely</li>')).toEqual([ul(li(p(t('lonely'))))]);
  });

  it('turns headings in items into bold paragraphs and unwraps quotes', () => {
    expect(blocks('<ul><li><h2>Title <code>x</code></h2><blockquote>quoted</blockquote></li></ul>')).toEqual([
      ul(li(p(t('Title ', strong), t('x', code)), p(t('quoted')))),
    ]);
  });

  it('lifts a table out of a list, splitting it and continuing the numbering', () => {
    expect(
      blocks('<ol start="2"><li>a</li><li>b<table><tr><td>t</td></tr></table>b2</li><li>c</li></ol>'),
    ).toEqual([
      ol(2, li(p(t('a'))), li(p(t('b')))),
      table(row(cell(p(t('t'))))),
      ol(4, li(p(t('b2'))), li(p(t('c')))),
    ]);
  });

  it('lifts a rule out of a list', () => {
    expect(blocks('<ul><li>a<hr>b</li></ul>')).toEqual([
      ul(li(p(t('a')))),
      { type: 'rule' },
      ul(li(p(t('b')))),
    ]);
  });
});

describe('tables', () => {
  it('converts header and body cells, with colspan and rowspan', () => {
    const html =
      '<table><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead><tbody><tr><td rowspan="2">x</td><td colspan="2">y</td></tr><tr><td>1</td><td>2</td></tr></tbody></table>';
    expect(blocks(html)).toEqual([
      table(
        row(
          { type: 'tableHeader', content: [p(t('A'))] },
          { type: 'tableHeader', content: [p(t('B'))] },
          { type: 'tableHeader', content: [p(t('C'))] },
        ),
        row(
          { type: 'tableCell', attrs: { rowspan: 2 }, content: [p(t('x'))] },
          { type: 'tableCell', attrs: { colspan: 2 }, content: [p(t('y'))] },
        ),
        row(cell(p(t('1'))), cell(p(t('2')))),
      ),
    ]);
  });

  it('fills empty cells with an empty paragraph', () => {
    expect(blocks('<table><tr><td></td><td>&nbsp;</td></tr></table>')).toEqual([
      table(row(cell(p()), cell(p()))),
    ]);
  });

  it('pads short rows and clamps spans that run past the table', () => {
    expect(blocks('<table><tr><td>a</td><td>b</td></tr><tr><td rowspan="5">c</td></tr></table>')).toEqual([
      table(row(cell(p(t('a'))), cell(p(t('b')))), row(cell(p(t('c'))), cell(p()))),
    ]);
  });

  it('keeps block content in cells: lists, headings, code', () => {
    expect(blocks('<table><tr><td><h2>H</h2><ul><li>i</li></ul><pre>x</pre></td></tr></table>')).toEqual([
      table(
        row(
          cell(h(2, t('H')), ul(li(p(t('i')))), {
            type: 'codeBlock',
            content: [{ type: 'text', text: 'x' }],
          }),
        ),
      ),
    ]);
  });

  it('flattens a table nested in a cell to its cells’ content', () => {
    expect(
      blocks(
        '<table><tr><td>out<table><tr><td>in 1</td><td></td><td>in 2</td></tr></table></td></tr></table>',
      ),
    ).toEqual([table(row(cell(p(t('out')), p(t('in 1')), p(t('in 2')))))]);
  });

  it('reads rows without tbody and cells without tr, and puts the caption before the table', () => {
    expect(blocks('<table><caption>Cap</caption><td>a</td><td>b</td><tr><td>c</td></tr></table>')).toEqual([
      p(t('Cap')),
      table(row(cell(p(t('a'))), cell(p(t('b')))), row(cell(p(t('c'))), cell(p()))),
    ]);
  });

  it('drops a table without rows', () => {
    expect(blocks('<table><tbody></tbody></table>')).toEqual([]);
  });
});

describe('code blocks', () => {
  it('keeps the text of pre exactly, line breaks and indentation included', () => {
    const code = 'def f():\n    return "<x>"  \n\n\tdone';
    expect(blocks(`<pre><code>${code.replace('<x>', '&lt;x&gt;')}</code></pre>`)).toEqual([
      { type: 'codeBlock', content: [{ type: 'text', text: code }] },
    ]);
  });

  it('takes the language from a language- class and drops the newline after <pre>', () => {
    expect(blocks('<pre class="hl"><code class="language-TypeScript">\nconst a = 1;</code></pre>')).toEqual([
      {
        type: 'codeBlock',
        attrs: { language: 'typescript' },
        content: [{ type: 'text', text: 'const a = 1;' }],
      },
    ]);
  });

  it('drops marks and turns <br> and line elements into newlines', () => {
    expect(blocks('<pre><b>a</b><br>b<div>c</div></pre>')).toEqual([
      { type: 'codeBlock', content: [{ type: 'text', text: 'a\nb\nc' }] },
    ]);
  });

  it('keeps an empty code block empty', () => {
    expect(blocks('<pre></pre>')).toEqual([{ type: 'codeBlock', content: [] }]);
  });
});

describe('blockquotes', () => {
  it('wraps the quoted text in paragraphs', () => {
    expect(blocks('<blockquote>quoted <b>bold</b><p>second</p></blockquote>')).toEqual([
      { type: 'blockquote', content: [p(t('quoted '), t('bold', strong)), p(t('second'))] },
    ]);
  });

  it('unwraps a nested quote and bolds a heading in a quote', () => {
    expect(blocks('<blockquote><h2>T</h2><blockquote>inner</blockquote></blockquote>')).toEqual([
      { type: 'blockquote', content: [p(t('T', strong)), p(t('inner'))] },
    ]);
  });

  it('lifts a table out of a quote', () => {
    expect(blocks('<blockquote>a<table><tr><td>t</td></tr></table>b</blockquote>')).toEqual([
      { type: 'blockquote', content: [p(t('a'))] },
      table(row(cell(p(t('t'))))),
      { type: 'blockquote', content: [p(t('b'))] },
    ]);
  });

  it('drops an empty quote', () => {
    expect(blocks('<blockquote> <br> </blockquote>')).toEqual([]);
  });
});

describe('Word and Outlook markup', () => {
  it('reduces MsoNormal paragraphs, o:p, styled spans and conditional comments to text and structure', () => {
    const html =
      '<!--[if gte mso 9]><xml><w:WordDocument><w:View>Normal</w:View></w:WordDocument></xml><![endif]-->' +
      `<p class=MsoNormal><span style='font-size:11.0pt;font-family:"Calibri",sans-serif;color:#1F497D'>Thanks for the update.<o:p></o:p></span></p>` +
      '<p class=MsoNormal><o:p>&nbsp;</o:p></p>' +
      `<p class=MsoNormal><b><span lang=EN-US style='color:#1F497D'>Kind regards,</span></b><span lang=EN-US><br>Ava Brown<o:p></o:p></span></p>`;
    expect(blocks(html)).toEqual([
      p(t('Thanks for the update.')),
      p(t('Kind regards,', strong), br, t('Ava Brown')),
    ]);
  });

  it('keeps an Outlook reply header', () => {
    const html =
      '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm"><p class=MsoNormal><b><span lang=EN-US>From:</span></b><span lang=EN-US> Ava &lt;ava@contoso.example&gt;<br><b>Sent:</b> Tuesday<o:p></o:p></span></p></div>';
    expect(blocks(html)).toEqual([
      p(t('From:', strong), t(' Ava <ava@contoso.example>'), br, t('Sent:', strong), t(' Tuesday')),
    ]);
  });
});

describe('Word lists (MsoListParagraph)', () => {
  /** One list paragraph as Word writes it: indented by level, the bullet or number in an mso-list:Ignore span. */
  const wordItem = (cls: string, list: string, marker: string, font: string, body: string) =>
    `<p class=${cls} style='margin-left:${36 * Number(/level(\d)/.exec(list)![1])}.0pt;mso-add-space:auto;text-indent:-18.0pt;mso-list:${list}'>` +
    `<![if !supportLists]><span style='font-family:${font}'><span style='mso-list:Ignore'>${marker}` +
    `<span style='font:7.0pt "Times New Roman"'>&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp; </span></span></span>` +
    `<![endif]>${body}<o:p></o:p></p>\n`;

  it('becomes a bullet list nested by level, the bullets dropped', () => {
    const html =
      '<p class=MsoNormal>Steps we saw:<o:p></o:p></p>\n' +
      wordItem(
        'MsoListParagraphCxSpFirst',
        'l0 level1 lfo1',
        '·',
        'Symbol',
        '<span lang=EN-US>Checkout <b>fails</b></span>',
      ) +
      wordItem('MsoListParagraphCxSpMiddle', 'l0 level2 lfo1', 'o', '"Courier New"', 'on Safari 17') +
      wordItem('MsoListParagraphCxSpMiddle', 'l0 level3 lfo1', '§', 'Wingdings', 'with Apple Pay') +
      wordItem('MsoListParagraphCxSpMiddle', 'l0 level2 lfo1', 'o', '"Courier New"', 'on Firefox') +
      wordItem('MsoListParagraphCxSpLast', 'l0 level1 lfo1', '·', 'Symbol', 'Refunds stall') +
      '<p class=MsoNormal>Thanks<o:p></o:p></p>';
    expect(blocks(html)).toEqual([
      p(t('Steps we saw:')),
      ul(
        li(
          p(t('Checkout '), t('fails', strong)),
          ul(li(p(t('on Safari 17')), ul(li(p(t('with Apple Pay'))))), li(p(t('on Firefox')))),
        ),
        li(p(t('Refunds stall'))),
      ),
      p(t('Thanks')),
    ]);
  });

  it('becomes an ordered list from numbers and letters, starting where Word started', () => {
    const html =
      wordItem('MsoListParagraphCxSpFirst', 'l1 level1 lfo2', '3.', 'Calibri', 'Open the cart') +
      wordItem('MsoListParagraphCxSpMiddle', 'l1 level2 lfo2', 'a)', 'Calibri', 'empty') +
      wordItem('MsoListParagraphCxSpMiddle', 'l1 level2 lfo2', 'b)', 'Calibri', 'full') +
      // A list paragraph without mso-list: the step's second paragraph.
      "<p class=MsoListParagraphCxSpMiddle style='margin-left:36.0pt;mso-add-space:auto'>Then wait.<o:p></o:p></p>\n" +
      wordItem('MsoListParagraphCxSpLast', 'l1 level1 lfo2', '4.', 'Calibri', 'Pay');
    expect(blocks(html)).toEqual([
      ol(
        3,
        li(p(t('Open the cart')), ol(1, li(p(t('empty'))), li(p(t('full')))), p(t('Then wait.'))),
        li(p(t('Pay'))),
      ),
    ]);
  });

  it('adds a second paragraph to the item it lines up with', () => {
    const html =
      wordItem('MsoListParagraphCxSpFirst', 'l0 level1 lfo1', '·', 'Symbol', 'a') +
      wordItem('MsoListParagraphCxSpMiddle', 'l0 level2 lfo1', 'o', '"Courier New"', 'b') +
      "<p class=MsoListParagraphCxSpMiddle style='margin-left:72.0pt'>b, continued</p>" +
      wordItem('MsoListParagraphCxSpLast', 'l0 level1 lfo1', '·', 'Symbol', 'c');
    expect(blocks(html)).toEqual([ul(li(p(t('a')), ul(li(p(t('b')), p(t('b, continued'))))), li(p(t('c'))))]);
  });

  it('reads roman numerals, legal numbering and a lone MsoListParagraph item', () => {
    const one = (marker: string) => wordItem('MsoListParagraph', 'l5 level1 lfo7', marker, 'Calibri', 'x');
    expect(blocks(one('iv.'))).toEqual([ol(4, li(p(t('x'))))]);
    expect(blocks(one('2.3.'))).toEqual([ol(3, li(p(t('x'))))]);
    expect(blocks(one('(7)'))).toEqual([ol(7, li(p(t('x'))))]);
    // Letters without their punctuation are Word's symbol-font bullets (o, v, q, n).
    expect(blocks(one('v'))).toEqual([ul(li(p(t('x'))))]);
  });

  it('drops the marker Word shows only to old browsers (<![if !supportLists]>), and hidden content', () => {
    const html =
      "<p class=MsoListParagraphCxSpFirst style='mso-list:l0 level1 lfo1'><![if !supportLists]><span style='font-family:Symbol'>·<span style='font:7.0pt \"Times New Roman\"'>&nbsp;&nbsp; </span></span><![endif]>Item one<span style='display:none'>hidden</span></p>";
    expect(blocks(html)).toEqual([ul(li(p(t('Item one'))))]);
  });

  it('starts another list for another list instance, or when bullets turn into numbers', () => {
    const html =
      wordItem('MsoListParagraph', 'l0 level1 lfo1', '·', 'Symbol', 'a') +
      wordItem('MsoListParagraph', 'l0 level1 lfo3', '·', 'Symbol', 'b') +
      wordItem('MsoListParagraph', 'l0 level1 lfo3', '1.', 'Calibri', 'c');
    expect(blocks(html)).toEqual([ul(li(p(t('a')))), ul(li(p(t('b')))), ol(1, li(p(t('c'))))]);
  });

  it('works inside table cells and keeps an item that starts deeper than level 1', () => {
    const html = `<table><tr><td>${wordItem('MsoListParagraph', 'l0 level2 lfo1', 'o', 'Symbol', 'deep')}${wordItem('MsoListParagraph', 'l0 level1 lfo1', '·', 'Symbol', 'top')}</td></tr></table>`;
    expect(blocks(html)).toEqual([table(row(cell(ul(li(p(t('deep')))), ul(li(p(t('top')))))))]);
  });

  it('leaves a paragraph without mso-list and the same span outside Word lists as they are', () => {
    expect(
      blocks("<p class=MsoListParagraph>Just indented</p><p><span style='mso-list:Ignore'>·</span> kept</p>"),
    ).toEqual([p(t('Just indented')), p(t('· kept'))]);
  });
});

describe('unknown and dropped elements', () => {
  it('unwraps unknown elements to their content, without warnings', () => {
    expect(convert('<custom-el><st1:place>Paris</st1:place> <mark>hi</mark></custom-el>')).toEqual({
      content: [p(t('Paris hi'))],
      warnings: [],
    });
  });

  it('drops scripts, styles and embeds, warning only when something was dropped', () => {
    const { content, warnings } = convert(
      '<style>p{color:red}</style><script>alert(1)</script><script></script><p>text</p><iframe src="https://x.example"></iframe><meta charset="utf-8">',
    );
    expect(content).toEqual([p(t('text'))]);
    expect(warnings).toEqual([
      { code: 'dropped-element', message: '<style> and its content were dropped' },
      { code: 'dropped-element', message: '<script> and its content were dropped' },
      { code: 'dropped-element', message: '<iframe> and its content were dropped' },
    ]);
  });

  it('hoists blocks out of inline elements, keeping the inline marks', () => {
    expect(blocks('<b>x<p>y</p><table><tr><td>z</td></tr></table></b>')).toEqual([
      p(t('x', strong)),
      p(t('y', strong)),
      table(row(cell(p(t('z', strong))))),
    ]);
  });

  it('does not convert content nested absurdly deep: a note stands for it (adf-html-limits.test.ts)', () => {
    for (const [open, close] of [
      ['<div>x', '</div>'],
      ['<ul><li>x', '</li></ul>'],
      ['<table><tr><td>x', '</td></tr></table>'],
      ['<blockquote><b>x', '</b></blockquote>'],
    ]) {
      const { content, warnings } = convert(open!.repeat(3000) + close!.repeat(3000));
      expect(content).toEqual([
        p(t('The original HTML was not converted (elements nested over 100 deep).', em)),
      ]);
      expect(warnings).toEqual([
        { code: 'unconverted-html', message: 'HTML not converted (elements nested over 100 deep)' },
      ]);
    }
  });

  it('closes unclosed tags at the end', () => {
    expect(blocks('<div>unclosed <b>bold <i>both')).toEqual([
      p(t('unclosed '), t('bold ', strong), t('both', strong, em)),
    ]);
  });
});
