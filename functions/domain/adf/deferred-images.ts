/**
 * Images whose upload is decided after the conversion: each image a caller wants is converted as media under a
 * placeholder id of its own (a UUID's length, so the document measures as it will), and the block it would be
 * without an attachment is kept beside it. `settle` then gives the document with the images that have a media
 * id shown and the others as the converter writes an image it cannot show. The fitting rules (fit.ts) treat a
 * mediaSingle and a paragraph alike wherever they stand, so a settled document is the one a conversion with those
 * media ids would have given, without converting the HTML again.
 */
import type { AdfDoc, AdfNode, HtmlToAdfContext } from './types.ts';

interface Slot {
  src: string;
  without: AdfNode;
  warning: string;
}

/** Placeholder media ids: UUID-shaped, as Jira's media file ids are, numbered per image. */
const placeholder = (n: number) => `ffffffff-ffff-4fff-8fff-${n.toString(16).padStart(12, '0')}`;

export interface DeferredImages {
  /** The converter's context members that defer the images `wanted` accepts (the others are not shown). */
  readonly context: Pick<HtmlToAdfContext, 'image' | 'withoutMedia'>;
  /**
   * `doc` (converted with `context`) with each deferred image shown under the media id `mediaIdOf` answers for
   * its src, or in its form without one (its warning to `warn`). A new document: `doc` is left as it is.
   */
  settle(
    doc: AdfDoc,
    mediaIdOf: (src: string) => string | undefined,
    warn?: (warning: string) => void,
  ): AdfDoc;
}

export function deferImages(wanted: (src: string) => boolean): DeferredImages {
  const slots = new Map<string, Slot>();
  const pending = new Map<string, string>();
  const settleNode = (
    node: AdfNode,
    mediaIdOf: (src: string) => string | undefined,
    warn: (w: string) => void,
  ): AdfNode => {
    const media = node.type === 'mediaSingle' ? node.content?.[0] : undefined;
    const slot = media ? slots.get(String(media.attrs?.id)) : undefined;
    if (media && slot) {
      const id = mediaIdOf(slot.src);
      if (id === undefined) {
        warn(slot.warning);
        return slot.without;
      }
      return { ...node, content: [{ ...media, attrs: { ...media.attrs, id } }] };
    }
    return node.content
      ? { ...node, content: node.content.map((n) => settleNode(n, mediaIdOf, warn)) }
      : node;
  };
  return {
    context: {
      image: (src) => {
        if (!wanted(src)) return undefined;
        const mediaId = placeholder(slots.size + pending.size + 1);
        pending.set(mediaId, src);
        return { mediaId };
      },
      withoutMedia: (mediaId, without, warning) => {
        const src = pending.get(mediaId);
        if (src === undefined) return;
        pending.delete(mediaId);
        slots.set(mediaId, { src, without, warning });
      },
    },
    settle: (doc, mediaIdOf, warn = () => undefined) => ({
      ...doc,
      content: doc.content.map((n) => settleNode(n, mediaIdOf, warn)),
    }),
  };
}
