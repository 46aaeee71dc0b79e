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

function countBy(items: ScanItem[], field: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const value = item.fields[field];
    if (typeof value === 'string') counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return counts;
}

const hasValue = (v: unknown) => v !== undefined && v !== null && v !== '';

export function buildScanReport(input: ScanInput): ScanReport {
  const { items } = input;
  const typeCounts: Record<string, number> = {};
  for (const [type, n] of [...countBy(items, 'System.WorkItemType')].sort(([a], [b]) => a.localeCompare(b)))
    typeCounts[type] = n;

  const perIteration = countBy(items, 'System.IterationPath');
  const iterationPaths = flatten(input.iterations).flatMap(({ path, node }) => {
    const startDate = day(node.attributes?.startDate);
    const endDate = day(node.attributes?.finishDate);
    return startDate && endDate ? [{ path, startDate, endDate, itemCount: perIteration.get(path) ?? 0 }] : [];
  });

  const perArea = countBy(items, 'System.AreaPath');
  const areaPaths = flatten(input.areas).map(({ path, depth }) => ({
    path,
    depth,
    itemCount: perArea.get(path) ?? 0,
  }));

  const customFields = input.fieldDefinitions
    .filter((f) => f.referenceName.startsWith('Custom.'))
    .map((f) => ({
      referenceName: f.referenceName,
      name: f.name,
      type: f.type,
      itemCount: items.filter((i) => hasValue(i.fields[f.referenceName])).length,
    }))
    .sort((a, b) => a.referenceName.localeCompare(b.referenceName));

  let attachmentBytes = 0;
  for (const item of items) {
    for (const r of item.relations ?? []) {
      if (r.rel === 'AttachedFile') attachmentBytes += Number(r.attributes?.resourceSize ?? 0);
    }
  }
  const attachmentTotalGb = Math.round((attachmentBytes / GIB) * 1e6) / 1e6;

  const commentCount =
    input.commentCount ?? items.reduce((sum, i) => sum + Number(i.fields['System.CommentCount'] ?? 0), 0);

  return {
    totalWorkItems: items.length,
    typeCounts,
    iterationPaths,
    areaPaths,
    customFields,
    attachmentTotalGb,
    commentCount,
    pricing: priceScan(items.length, attachmentTotalGb),
  };
}
