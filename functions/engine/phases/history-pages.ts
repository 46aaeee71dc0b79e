/**
 * Phase 5's third job, the history page: an item's revision history as one HTML file (history.ts) on its issue,
 * for every item with more than one revision, whatever the run's options. Its revisions come from the run's
 * reads (history-reads.ts); the page goes up with the item's other files (attachments-upload.ts).
 */
import type { PhaseContext } from '#phase-kit/context.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraAttachment, Upload } from './attachments-upload.ts';
import { historyFileName, historyHtml, isHistoryFileOf } from './history.ts';
import { historyRevisions } from './history-reads.ts';

/**
 * The item's revision history as one HTML file (history.ts), whatever the run's options, for an item with more
 * than one revision. Named after its last revision (`ado-history-<id>-r<rev>.html`), so a file of that name
 * means done and costs no read of the revisions (a resumed run, a re-run). `at` is the item's manifest position
 * (its window of the run's reads). Answers the file the issue has (`current`) or the one to upload (`send`).
 */
export async function historyOf(
  ctx: PhaseContext,
  item: AdoWorkItem,
  existing: JiraAttachment[],
  at: number,
): Promise<{ current?: JiraAttachment; send?: Upload }> {
  if (item.rev <= 1) return {};
  const named = (rev: number) => existing.find((a) => a.filename === historyFileName(item.id, rev));
  const known = named(item.rev);
  if (known) return { current: known };
  // From the run's batched read of the project's revisions (history-reads.ts), or one call for most items.
  const revisions = await historyRevisions(ctx, item, undefined, at);
  const lastRev = revisions.reduce((m, r) => Math.max(m, r.rev), item.rev);
  const current = named(lastRev);
  if (current || revisions.length <= 1) return current ? { current } : {};
  const fileName = historyFileName(item.id, lastRev);
  const html = historyHtml(revisions);
  return {
    send: {
      fileName,
      label: `revision history ${fileName}`,
      size: Buffer.byteLength(html),
      source: { html },
    },
  };
}

/**
 * When the item has changed since an earlier history file (an incremental run), the new file is uploaded first
 * and older history files of the item are deleted after, so the issue is never without its history; a crash
 * between leaves an older file the next pass deletes.
 */
export async function deleteOlderHistories(
  ctx: PhaseContext,
  item: AdoWorkItem,
  current: JiraAttachment,
  existing: JiraAttachment[],
  problems: string[],
): Promise<void> {
  for (const older of existing.filter((a) => a !== current && isHistoryFileOf(item.id, a.filename))) {
    try {
      await ctx.deps.target.deleteAttachment(older.id);
    } catch (err) {
      if (!(err instanceof TrackerHttpError)) throw err;
      if (err.status !== 404)
        problems.push(`older revision history ${older.filename} not deleted: Jira answered ${err.status}`);
    }
  }
}
