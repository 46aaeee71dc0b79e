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
import type { DescriptionDraft } from './description.ts';

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
  target: { key: string; item: AdoWorkItem; draft: DescriptionDraft; outcome: UnitOutcome },
  shown: ShownImage[],
): Promise<string[]> {
  const { key, item, draft, outcome } = target;
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
  // Made from the item's one conversion (its plan's draft); unmapped mentions were reported when the issue was
  // written in phase 2.
  const description = draft.final(noteInto(outcome, item.id), (src) => mediaBySrc.get(src), [
    'unresolved-reference',
  ]);
  await ctx.deps.target.editIssue(key, { fields: { description } });
  return unread;
}
