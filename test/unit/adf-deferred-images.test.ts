/**
 * deferImages (functions/domain/adf/deferred-images.ts): a document converted once with its images deferred,
 * then settled with the media ids the upload gave, is the document a conversion with those ids gives; settled
 * with none, the one a conversion without them gives. Over the hand-written corpus and the generator's HTML.
 */
import { describe, expect, it } from 'vitest';
import { type AdfWarning, deferImages, htmlToAdf, scanHtml } from '../../functions/domain/adf/index.ts';
import { htmlFragments } from '../support/html-fragments.ts';

/** Media ids for some of a fragment's images (every other one), as an upload that partly failed gives them. */
const someMedia = (html: string) => {
  const srcs = [...new Set(scanHtml(html).images.map((i) => i.src))];
  const ids = new Map(
    srcs.filter((_, i) => i % 2 === 0).map((src, i) => [src, `0000000${i}-aaaa-4bbb-8ccc-dddddddddddd`]),
  );
  return (src: string) => ids.get(src);
};

describe('images deferred past the conversion', () => {
  it('settle into the document a conversion with the same media ids gives, warnings included', () => {
    const all = htmlFragments(11).filter((h) => h.includes('<img'));
    expect(all.length).toBeGreaterThan(20);
    for (const [i, html] of all.entries()) {
      const deferred = deferImages((src) => src.startsWith('http'));
      const draft = htmlToAdf(html, deferred.context);
      for (const mediaIdOf of [someMedia(html), () => undefined]) {
        const direct: AdfWarning[] = [];
        const expected = htmlToAdf(html, {
          image: (src) => {
            const mediaId = src.startsWith('http') ? mediaIdOf(src) : undefined;
            return mediaId ? { mediaId } : undefined;
          },
          warn: (w) => direct.push(w),
        });
        const settled: string[] = [];
        expect(
          deferred.settle(draft, mediaIdOf, (w) => settled.push(w)),
          `fragment ${i}`,
        ).toEqual(expected);
        const deferredWarnings = direct.filter(
          (w) => w.code === 'unresolved-image' && /^image http/.test(w.message),
        );
        expect(settled.sort(), `fragment ${i}`).toEqual(deferredWarnings.map((w) => w.message).sort());
      }
    }
  });

  it('leave the converted document as it was: it settles again, differently', () => {
    const src = 'https://dev.azure.com/o/_apis/wit/attachments/a1?fileName=a.png';
    const deferred = deferImages(() => true);
    const draft = htmlToAdf(
      `<p>Look: <a href="https://x.example/"><img src="${src}" alt="shot"></a></p>`,
      deferred.context,
    );
    const before = structuredClone(draft);

    const shown = deferred.settle(draft, () => '11111111-2222-4333-8444-555555555555');
    const linked = deferred.settle(draft, () => undefined);

    expect(draft).toEqual(before);
    expect(shown.content[1]).toEqual({
      type: 'mediaSingle',
      attrs: { layout: 'center' },
      content: [
        {
          type: 'media',
          attrs: { type: 'file', id: '11111111-2222-4333-8444-555555555555', collection: '', alt: 'shot' },
          marks: [{ type: 'link', attrs: { href: 'https://x.example/' } }],
        },
      ],
    });
    expect(linked.content[1]).toEqual({
      type: 'paragraph',
      content: [
        { type: 'text', text: 'a.png', marks: [{ type: 'link', attrs: { href: 'https://x.example/' } }] },
      ],
    });
  });
});
