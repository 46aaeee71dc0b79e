/**
 * What a complete scan of the project must report, computed from the world (PATCHes included) rather than
 * through the API, so tests can compare the two.
 *
 * Decisions: Shared Steps count as work items (ADO stores them as work items and WIQL returns them). Area
 * depth counts from the project root at 0. Iterations are listed only when they have dates (the root, Backlog,
 * undated releases and sprints have none); itemCount counts items whose path is exactly the node's.
 * Attachment bytes are those of AttachedFile relations; inline images are reported apart.
 */
import { flatten } from './classification.ts';
import { currentValue } from './fields.ts';
import { CUSTOM_FIELDS } from './process.ts';
import type { AdoScanTruth, AdoWorld } from './types.ts';

export function scanGroundTruth(world: AdoWorld): AdoScanTruth {
  const typeCounts: Record<string, number> = {};
  const areaCounts = new Map<string, number>();
  const iterationCounts = new Map<string, number>();
  const customCounts = new Map<string, number>();
  let attachmentTotalBytes = 0;
  let attachmentCount = 0;
  let inlineImageCount = 0;
  let inlineImageBytes = 0;
  let commentCount = 0;
  let linkEnds = 0;
  for (const item of world.workItems) {
    typeCounts[item.type] = (typeCounts[item.type] ?? 0) + 1;
    const area = String(currentValue(item, 'System.AreaPath')).toLowerCase();
    areaCounts.set(area, (areaCounts.get(area) ?? 0) + 1);
    const iteration = String(currentValue(item, 'System.IterationPath')).toLowerCase();
    iterationCounts.set(iteration, (iterationCounts.get(iteration) ?? 0) + 1);
    for (const def of CUSTOM_FIELDS) {
      const v = currentValue(item, def.referenceName);
      if (v !== null && v !== undefined && v !== '') {
        customCounts.set(def.referenceName, (customCounts.get(def.referenceName) ?? 0) + 1);
      }
    }
    for (const a of item.attachments) attachmentTotalBytes += a.size;
    attachmentCount += item.attachments.length;
    for (const a of item.inlineImages) inlineImageBytes += a.size;
    inlineImageCount += item.inlineImages.length;
    commentCount += Number(currentValue(item, 'System.CommentCount'));
    for (const l of item.links) if (l.targetId !== null) linkEnds++;
  }
  const day = (iso: string) => iso.slice(0, 10);
  return {
    totalWorkItems: world.workItems.length,
    typeCounts,
    iterationPaths: flatten(world.iterations.root)
      .filter((n) => n.startDate && n.finishDate)
      .map((n) => ({
        path: n.path,
        startDate: day(n.startDate!),
        endDate: day(n.finishDate!),
        itemCount: iterationCounts.get(n.path.toLowerCase()) ?? 0,
      })),
    areaPaths: flatten(world.areas).map((n) => ({
      path: n.path,
      depth: n.depth,
      itemCount: areaCounts.get(n.path.toLowerCase()) ?? 0,
    })),
    customFields: CUSTOM_FIELDS.map((d) => ({
      referenceName: d.referenceName,
      name: d.name,
      type: d.type,
      itemCount: customCounts.get(d.referenceName) ?? 0,
    })),
    attachmentTotalBytes,
    attachmentCount,
    inlineImageCount,
    inlineImageBytes,
    commentCount,
    linkCount: linkEnds / 2,
  };
}
