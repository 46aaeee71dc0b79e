/**
 * The scan report of a source project (the spec's table), aggregated from what the source client read.
 * Pure. Paths are written as work items carry them (`Project\Area\Sub`), built from the node names, so the
 * classification API's `\Project\Area\...` form never leaks in.
 */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';
import { type Pricing, PricingSchema, priceScan } from './pricing.ts';

export interface ScanNode {
  name: string;
  children?: ScanNode[];
  attributes?: { startDate?: string; finishDate?: string };
}

export interface ScanItem {
  fields: Record<string, unknown>;
  relations?: { rel: string; attributes?: Record<string, unknown> }[];
}

export interface ScanReport {
  totalWorkItems: number;
  typeCounts: Record<string, number>;
  iterationPaths: { path: string; startDate: string; endDate: string; itemCount: number }[];
  areaPaths: { path: string; depth: number; itemCount: number }[];
  customFields: { referenceName: string; name: string; type: string; itemCount: number }[];
  attachmentTotalGb: number;
  commentCount: number;
  pricing: Pricing;
}

/** As a finished scan's record keeps it. */
export const ScanReportSchema = exactSchema<ScanReport>()(
  z.object({
    totalWorkItems: z.number(),
    typeCounts: z.record(z.string(), z.number()),
    iterationPaths: z.array(
      z.object({ path: z.string(), startDate: z.string(), endDate: z.string(), itemCount: z.number() }),
    ),
    areaPaths: z.array(z.object({ path: z.string(), depth: z.number(), itemCount: z.number() })),
    customFields: z.array(
      z.object({ referenceName: z.string(), name: z.string(), type: z.string(), itemCount: z.number() }),
    ),
    attachmentTotalGb: z.number(),
    commentCount: z.number(),
    pricing: PricingSchema,
  }),
);

export interface ScanInput {
  items: ScanItem[];
  areas: ScanNode;
  iterations: ScanNode;
  fieldDefinitions: { referenceName: string; name: string; type: string }[];
  /** Comments per item when the items do not carry System.CommentCount. */
  commentCount?: number;
}

const GIB = 1024 ** 3;
const day = (iso: string | undefined) => (iso ? iso.slice(0, 10) : undefined);

/** Every node with its item-style path and depth (the project root is depth 0). */
function flatten(root: ScanNode): { path: string; depth: number; node: ScanNode }[] {
  const out: { path: string; depth: number; node: ScanNode }[] = [];
  const walk = (node: ScanNode, path: string, depth: number) => {
    out.push({ path, depth, node });
    for (const child of node.children ?? []) walk(child, `${path}\\${child.name}`, depth + 1);
  };
  walk(root, root.name, 0);
  return out;
}

const hasValue = (v: unknown) => v !== undefined && v !== null && v !== '';

function countInto(counts: Map<string, number>, value: unknown): void {
  if (typeof value === 'string') counts.set(value, (counts.get(value) ?? 0) + 1);
}

/** What a scan reports besides the items: the project's classification trees and field definitions. */
export type ScanShape = Omit<ScanInput, 'items' | 'commentCount'>;

/** The scan report folded over chunks of items, each added then dropped: memory holds counts, not items. */
export interface ScanReportFold {
  /**
   * Counts a chunk. `countedComments` is the chunk's comments as the tracker counted them, for items that do not
   * carry System.CommentCount; without it the items' own counts are summed.
   */
  add(items: readonly ScanItem[], countedComments?: number): void;
  /** The report of every item added so far. */
  finish(): ScanReport;
}

export function startScanReport(shape: ScanShape): ScanReportFold {
  const types = new Map<string, number>();
  const perIteration = new Map<string, number>();
  const perArea = new Map<string, number>();
  const custom = shape.fieldDefinitions
    .filter((f) => f.referenceName.startsWith('Custom.'))
    .map((f) => ({ definition: f, itemCount: 0 }));
  let total = 0;
  let attachmentBytes = 0;
  let comments = 0;
  return {
    add(items, countedComments) {
      for (const item of items) {
        countInto(types, item.fields['System.WorkItemType']);
        countInto(perIteration, item.fields['System.IterationPath']);
        countInto(perArea, item.fields['System.AreaPath']);
        for (const field of custom)
          if (hasValue(item.fields[field.definition.referenceName])) field.itemCount++;
        for (const r of item.relations ?? []) {
          if (r.rel === 'AttachedFile') attachmentBytes += Number(r.attributes?.resourceSize ?? 0);
        }
        if (countedComments === undefined) comments += Number(item.fields['System.CommentCount'] ?? 0);
      }
      total += items.length;
      if (countedComments !== undefined) comments += countedComments;
    },
    finish() {
      const typeCounts: Record<string, number> = {};
      for (const [type, n] of [...types].sort(([a], [b]) => a.localeCompare(b))) typeCounts[type] = n;

      const iterationPaths = flatten(shape.iterations).flatMap(({ path, node }) => {
        const startDate = day(node.attributes?.startDate);
        const endDate = day(node.attributes?.finishDate);
        return startDate && endDate
          ? [{ path, startDate, endDate, itemCount: perIteration.get(path) ?? 0 }]
          : [];
      });
      const areaPaths = flatten(shape.areas).map(({ path, depth }) => ({
        path,
        depth,
        itemCount: perArea.get(path) ?? 0,
      }));
      const customFields = custom
        .map(({ definition: f, itemCount }) => ({
          referenceName: f.referenceName,
          name: f.name,
          type: f.type,
          itemCount,
        }))
        .sort((a, b) => a.referenceName.localeCompare(b.referenceName));
      const attachmentTotalGb = Math.round((attachmentBytes / GIB) * 1e6) / 1e6;
      return {
        totalWorkItems: total,
        typeCounts,
        iterationPaths,
        areaPaths,
        customFields,
        attachmentTotalGb,
        commentCount: comments,
        pricing: priceScan(total, attachmentTotalGb),
      };
    },
  };
}

/** The report over a whole project at once: the fold over it as one chunk. */
export function buildScanReport(input: ScanInput): ScanReport {
  const { items, commentCount, ...shape } = input;
  const fold = startScanReport(shape);
  fold.add(items, commentCount);
  return fold.finish();
}
