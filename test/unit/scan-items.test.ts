/**
 * The scan's reading at scale, against a counting source at the adapter port: it holds one chunk of items at a
 * time (the items read before become unreachable, seen by a forced GC) and asks the tracker for comment counts
 * a few at a time, never one request per item of the project at once.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  COMMENT_COUNT_CONCURRENCY,
  SCAN_CHUNK,
  type ScanSource,
  scanItems,
} from '../../functions/services/scan-items.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** A project read by id; every third item carries no System.CommentCount (the tracker counts those: id % 5). */
function countingSource() {
  const handedOut: WeakRef<AdoWorkItem>[] = [];
  const seen = { mostItemsAlive: 0, mostCountsInFlight: 0, commentCountRequests: 0 };
  let inFlight = 0;
  const source: ScanSource = {
    classificationNodes: async (group) => ({ id: 1, name: 'Contoso', structureType: group }),
    fields: async () => [{ referenceName: 'Custom.Risk', name: 'Risk', type: 'string' }],
    async workItems(ids) {
      collectGarbage();
      const alive = handedOut.filter((ref) => ref.deref() !== undefined).length;
      seen.mostItemsAlive = Math.max(seen.mostItemsAlive, alive);
      const items = ids.map((id) => ({
        id,
        rev: 1,
        fields: {
          'System.WorkItemType': id % 2 ? 'Bug' : 'Task',
          'System.AreaPath': 'Contoso',
          ...(id % 3 ? { 'System.CommentCount': 1 } : {}),
          'Custom.Risk': 'x'.repeat(200),
        },
      }));
      for (const item of items) handedOut.push(new WeakRef(item));
      return items;
    },
    async commentCount(id) {
      seen.commentCountRequests++;
      seen.mostCountsInFlight = Math.max(seen.mostCountsInFlight, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return id % 5;
    },
  };
  return { source, seen };
}

describe('the scan of a large project', () => {
  it('holds one chunk of items at a time and asks for comment counts a few at a time', async () => {
    const size = 5 * SCAN_CHUNK;
    const ids = Array.from({ length: size }, (_, i) => i + 1);
    const { source, seen } = countingSource();
    const progress: number[] = [];

    const report = await scanItems(source, ids, async (processed) => {
      progress.push(processed);
    });

    const counted = ids.filter((id) => id % 3 === 0);
    expect(report).toMatchObject({
      totalWorkItems: size,
      typeCounts: { Bug: size / 2, Task: size / 2 },
      areaPaths: [{ path: 'Contoso', depth: 0, itemCount: size }],
      customFields: [{ referenceName: 'Custom.Risk', name: 'Risk', type: 'string', itemCount: size }],
      commentCount: size - counted.length + counted.reduce((sum, id) => sum + (id % 5), 0),
    });
    expect(progress).toEqual([1_000, 2_000, 3_000, 4_000, 5_000]);
    // Only the items without a count of their own cost a request.
    expect(seen.commentCountRequests).toBe(counted.length);
    expect(seen.mostCountsInFlight).toBeGreaterThan(1);
    expect(seen.mostCountsInFlight).toBeLessThanOrEqual(COMMENT_COUNT_CONCURRENCY);
    // When a chunk is asked for, at most the one before it may still be reachable.
    expect(seen.mostItemsAlive).toBeLessThanOrEqual(SCAN_CHUNK);
  });
});
