/**
 * Phase 5's second job, the final description: an item's description written again once every item of the run
 * exists and its inline images are uploaded (attachments-upload.ts), with mentions, references to items created
 * later in the run, images and the footer all resolved. It is written for every item whose description needs
 * the run (images, mentions, references), with attachments off too (images then show only if an earlier run
 * uploaded them), and writing it again writes the same document. ADF media nodes need the attachment's media
 * file id, read off Jira's content redirect.
 */
import type { PhaseContext, UnitOutcome } from '#phase-kit/context.ts';
import { noteInto } from '#phase-kit/toolkit.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { type JiraAttachment, uploadProblem } from './attachments-upload.ts';
import { type DescriptionContext, descriptionOf } from './description.ts';

/** An inline image of the item and its attachment on the issue: shown in place by the final description. */
export interface ShownImage {
  image: { url: string; uploadName: string };
  attachment: JiraAttachment;
}

/**
 * Writes the item's final description to its issue, its images shown by their media ids (read side by side);
 * answers the images whose id could not be read.
 */
export async function writeFinalDescription(
  ctx: PhaseContext,
  target: { key: string; item: AdoWorkItem; describe: DescriptionContext; outcome: UnitOutcome },
  shown: ShownImage[],
): Promise<string[]> {
  const { key, item, describe, outcome } = target;
  const mediaBySrc = new Map<string, string>();
  const media = await Promise.allSettled(
    shown.map(async ({ image, attachment }) =>
      mediaBySrc.set(image.url, await ctx.deps.target.attachmentMediaId(attachment.id)),
    ),
  );
  const unread: string[] = [];
  media.forEach((read, i) => {
    if (read.status === 'fulfilled') return;
    if (!(read.reason instanceof TrackerHttpError)) throw read.reason;
    unread.push(uploadProblem(`inline image ${shown[i]?.image.uploadName}`, read.reason));
  });
  const description = descriptionOf(item, noteInto(outcome, item.id), {
    ...describe,
    // Unmapped mentions were reported when the issue was written in phase 2.
    report: ['unresolved-reference'],
    image: (src) => {
      const mediaId = mediaBySrc.get(src);
      return mediaId ? { mediaId } : undefined;
    },
  });
  await ctx.deps.target.editIssue(key, { fields: { description } });
  return unread;
}
