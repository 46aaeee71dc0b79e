/** The ordered list of what a run migrates. Pure. */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';

export interface ManifestItem {
  id: number;
  type: string;
  /** The parent work item, when it is in scope too. */
  parentId: number | null;
}

/** As a run's preflight artifact keeps it. */
export const ManifestItemSchema = exactSchema<ManifestItem>()(
  z.object({ id: z.number(), type: z.string(), parentId: z.number().nullable() }),
);

const PARENT_REL = 'System.LinkTypes.Hierarchy-Reverse';

/** The parent id from an ADO item's relations (`.../workItems/123`), if any. */
export function parentIdOf(relations: { rel: string; url: string }[] | undefined): number | null {
  const rel = relations?.find((r) => r.rel === PARENT_REL);
  const id = rel ? Number(rel.url.split('/').at(-1)) : Number.NaN;
  return Number.isInteger(id) ? id : null;
}

/**
 * Parents before children: by depth in the in-scope hierarchy, then by id. A parent outside the scope makes
 * its child a root; a (corrupt) cycle is broken at the item met first, never looping. `keepParent` names
 * parents outside the items that still count (an incremental run's parents already in Jira): the child keeps
 * its parentId but is ordered as a root.
 */
export function orderParentsFirst(
  items: ManifestItem[],
  keepParent: (id: number) => boolean = () => false,
): ManifestItem[] {
  const byId = new Map(items.map((i) => [i.id, i]));
  const depth = new Map<number, number>();
  const depthOf = (item: ManifestItem): number => {
    const known = depth.get(item.id);
    if (known !== undefined) return known;
    const seen = new Set<number>([item.id]);
    const chain: ManifestItem[] = [item];
    let current = item;
    while (
      current.parentId !== null &&
      byId.has(current.parentId) &&
      !seen.has(current.parentId) &&
      !depth.has(current.parentId)
    ) {
      current = byId.get(current.parentId) as ManifestItem;
      seen.add(current.id);
      chain.push(current);
    }
    const top = chain[chain.length - 1] as ManifestItem;
    let d = top.parentId !== null && depth.has(top.parentId) ? (depth.get(top.parentId) as number) + 1 : 0;
    for (let i = chain.length - 1; i >= 0; i--) depth.set((chain[i] as ManifestItem).id, d++);
    return depth.get(item.id) as number;
  };
  const scoped = items.map((i) => ({
    ...i,
    parentId: i.parentId !== null && (byId.has(i.parentId) || keepParent(i.parentId)) ? i.parentId : null,
  }));
  return scoped.sort((a, b) => depthOf(a) - depthOf(b) || a.id - b.id);
}

/**
 * SAMPLE runs: a small representative subset, up to `perType` items of each type (the lowest ids), together
 * with every ancestor they need so the hierarchy is faithful; still parents first.
 */
export function sampleManifest(ordered: ManifestItem[], perType = 5): ManifestItem[] {
  const byId = new Map(ordered.map((i) => [i.id, i]));
  const taken = new Map<string, number>();
  const keep = new Set<number>();
  for (const item of [...ordered].sort((a, b) => a.id - b.id)) {
    const n = taken.get(item.type) ?? 0;
    if (n >= perType) continue;
    taken.set(item.type, n + 1);
    for (
      let cur: ManifestItem | undefined = item;
      cur && !keep.has(cur.id);
      cur = cur.parentId !== null ? byId.get(cur.parentId) : undefined
    ) {
      keep.add(cur.id);
    }
  }
  return ordered.filter((i) => keep.has(i.id));
}

/**
 * A parents-first manifest reordered by rank (ascending, stable), each item's ancestors not yet placed moved up
 * just before it, so the result is still parents first. The create phase ranks items by the sprint step that
 * waits for them (engine/phases/sprint-order.ts): a sprint's issues then come together, early, and it can be
 * closed while later items are still being created. Unranked items (`Infinity`) keep their order at the end.
 */
export function orderByRank(ordered: ManifestItem[], rankOf: (item: ManifestItem) => number): ManifestItem[] {
  const byId = new Map(ordered.map((i) => [i.id, i]));
  const position = new Map(ordered.map((i, n) => [i.id, n]));
  const ranked = [...ordered].sort(
    (a, b) => rankOf(a) - rankOf(b) || (position.get(a.id) as number) - (position.get(b.id) as number),
  );
  const placed = new Set<number>();
  const out: ManifestItem[] = [];
  for (const item of ranked) {
    const chain: ManifestItem[] = [];
    for (
      let cur: ManifestItem | undefined = item;
      cur && !placed.has(cur.id);
      cur = cur.parentId !== null ? byId.get(cur.parentId) : undefined
    ) {
      chain.push(cur);
      placed.add(cur.id); // also breaks a (corrupt) cycle
    }
    out.push(...chain.reverse());
  }
  return out;
}
