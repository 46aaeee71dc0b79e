/** The reading half of a scan: every item in scope read from the source tracker and counted into the report. */

import { type ScanReport, startScanReport } from '#domain/scan-report.ts';
import { inPool } from '#phase-kit/toolkit.ts';
import type { AdoClient, AdoWorkItem } from '#trackers/ado/client.ts';

/** Items read per request round (and per progress record). */
export const SCAN_CHUNK = 1_000;

/** Comment counts asked at once (the pacer bounds each endpoint too; this bounds the promises made). */
export const COMMENT_COUNT_CONCURRENCY = 8;

/** What a scan asks of the source tracker. */
export type ScanSource = Pick<AdoClient, 'classificationNodes' | 'fields' | 'workItems' | 'commentCount'>;

/**
 * Reads the items in chunks of SCAN_CHUNK and folds each into the report before reading the next, so memory
 * holds one chunk, not the project. An item without System.CommentCount has its comments counted by the
 * tracker, COMMENT_COUNT_CONCURRENCY at a time.
 */
export async function scanItems(
  client: ScanSource,
  ids: readonly number[],
  onProgress: (processed: number) => Promise<void>,
): Promise<ScanReport> {
  const [areas, iterations, fieldDefinitions] = await Promise.all([
    client.classificationNodes('areas'),
    client.classificationNodes('iterations'),
    client.fields(),
  ]);
  const report = startScanReport({ areas, iterations, fieldDefinitions });
  for (let i = 0; i < ids.length; i += SCAN_CHUNK) {
    const chunk = await client.workItems(ids.slice(i, i + SCAN_CHUNK), { expand: 'relations' });
    report.add(chunk, await commentsOf(client, chunk));
    await onProgress(Math.min(ids.length, i + SCAN_CHUNK));
  }
  return report.finish();
}

/** The chunk's comments: each item's own count, else the tracker's. */
async function commentsOf(client: ScanSource, chunk: readonly AdoWorkItem[]): Promise<number> {
  let own = 0;
  const uncounted: number[] = [];
  for (const item of chunk) {
    const count = item.fields['System.CommentCount'];
    if (count === undefined) uncounted.push(item.id);
    else own += Number(count ?? 0);
  }
  const asked = await inPool(uncounted, COMMENT_COUNT_CONCURRENCY, (id) => client.commentCount(id));
  return asked.reduce((sum, n) => sum + n, own);
}
