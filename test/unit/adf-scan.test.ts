/**
 * scanHtml (functions/domain/adf/scan.ts): what a fragment names that its caller resolves (mentions, `#123`
 * references, images), read without converting it, and agreeing with what the converter asks its caller for
 * over the hand-written corpus and the sandbox generator's HTML (test/support/html-fragments.ts).
 */
import { describe, expect, it } from 'vitest';
import { htmlToAdf, MAX_HTML_DEPTH, scanHtml } from '../../functions/domain/adf/index.ts';
import { htmlFragments } from '../support/html-fragments.ts';

const ADO = 'https://dev.azure.com/contoso/Web/_apis/wit/attachments';

/** What the converter asks its caller for while converting `html`, nothing resolved. */
function converterAsks(html: string) {
  const mentions: { adoId?: string; displayName: string }[] = [];
  const references = new Set<number>();
  const images: string[] = [];
  htmlToAdf(html, {
    mention: (m) => {
      mentions.push(m);
      return undefined;
    },
    workItemKey: (id) => {
      references.add(id);
      return undefined;
    },
    image: (src) => {
      images.push(src);
      return undefined;
    },
  });
  return { mentions, references: [...references], images };
}

describe('scanning rich text', () => {
  it('names the people mentioned, the items referred to and the images, as the converter reads them', () => {
    const html =
      `<p>Ask <a href="#" data-vss-mention="version:2.0,1A2B-guid">@Dana Scully</a> about ` +
      `<a href="https://dev.azure.com/contoso/Web/_workitems/edit/41" data-vss-workitem="41">#41</a> and #42.</p>` +
      `<p>See <a href="https://dev.azure.com/contoso/Web/_workitems/edit/43">the login story</a>, not <code>#44</code>` +
      ` nor <a href="https://example.com/#45">#45 on a page</a>.</p>` +
      `<pre>#46 in a code block</pre><div style="display:none">#47 hidden, <img src="${ADO}/h1?fileName=hidden.png"></div>` +
      `<p><img src="${ADO}/g1?fileName=image.png" alt="first"> and again <img src="${ADO}/g1?fileName=image.png"></p>` +
      `<a data-vss-mention="version:2.0">@Fox</a> <a data-vss-mention="version:2.0,x">no at sign</a>`;

    expect(scanHtml(html)).toEqual({
      mentions: [{ adoId: '1A2B-guid', displayName: 'Dana Scully' }, { displayName: 'Fox' }],
      references: [41, 42, 43],
      images: [
        { src: `${ADO}/h1?fileName=hidden.png` },
        { src: `${ADO}/g1?fileName=image.png`, alt: 'first' },
        { src: `${ADO}/g1?fileName=image.png` },
      ],
    });
  });

  it('finds what the converter asks for in every fragment of the corpus and of the generator', () => {
    const fragments = htmlFragments(7);
    let named = 0;
    for (const [i, html] of fragments.entries()) {
      const asks = converterAsks(html);
      const scan = scanHtml(html);
      expect(scan.mentions, `fragment ${i}`).toEqual(asks.mentions);
      expect(scan.references, `fragment ${i}`).toEqual(asks.references);
      // Every image the converter shows is one the scan found; the scan also finds hidden ones.
      expect(
        asks.images.filter((src) => !scan.images.some((img) => img.src === src)),
        `fragment ${i}`,
      ).toEqual([]);
      if (scan.mentions.length + scan.references.length + scan.images.length > 0) named++;
    }
    expect(named).toBeGreaterThan(fragments.length / 4);
  });

  it('does not parse HTML over the converter limits: it names nothing', () => {
    const deep = `${'<div>'.repeat(MAX_HTML_DEPTH + 1)}#12 <img src="${ADO}/d1">`;

    expect(scanHtml(deep)).toEqual({ mentions: [], references: [], images: [] });
  });
});
