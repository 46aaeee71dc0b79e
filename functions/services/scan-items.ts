/** The reading half of a scan: every item in scope read from the source tracker and counted into the report. */

import { buildScanReport, type ScanReport } from '#domain/scan-report.ts';
import type { AdoClient } from '#trackers/ado/client.ts';

/** Items read per request round (and per progress record). */
export const SCAN_CHUNK = 1_000;

/** What a scan asks of the source tracker. */
export type ScanSource = Pick<AdoClient, 'classificationNodes' | 'fields' | 'workItems' | 'commentCount'>;

export async function scanItems(
  client: ScanSource,
  ids: number[],
  onProgress: (processed: number) => Promise<void>,
): Promise<ScanReport> {
  const [areas, iterations, fieldDefinitions] = await Promise.all([
    client.classificationNodes('areas'),
    client.classificationNodes('iterations'),
    client.fields(),
  ]);
  const items = [];
  for (let i = 0; i < ids.length; i += SCAN_CHUNK) {
    items.push(...(await client.workItems(ids.slice(i, i + SCAN_CHUNK), { expand: 'relations' })));
    await onProgress(Math.min(ids.length, i + SCAN_CHUNK));
  }
  const needCounts = items.some((i) => i.fields['System.CommentCount'] === undefined);
  const commentCount = needCounts
    ? (await Promise.all(items.map((i) => client.commentCount(i.id)))).reduce((a, b) => a + b, 0)
    : undefined;
  return buildScanReport({
    items,
    areas,
    iterations,
    fieldDefinitions,
    ...(commentCount !== undefined ? { commentCount } : {}),
  });
}
