/**
 * Phase 1's order of the manifest for the sprints: Jira takes no issue into a closed sprint, so a past sprint can
 * be closed only once every issue that belongs in it exists. The items are ordered by the sprint step that waits
 * for them (past sprints in the order they close, then the current ones), parents still first, and each sprint
 * records `closableAt`, the create phase's checkpoint from which all of its issues exist: the create phase then
 * starts and closes sprints while later items are still being created (`SprintsAhead`, sprints.ts).
 * A sub-task has no sprint of its own (Jira keeps it in its parent's), so it counts in its parent's.
 */
import { type ManifestItem, orderByRank } from '#domain/manifest.ts';
import { sprintSteps } from '#domain/mapping/sprints.ts';
import type { Preflight, PreflightSprint } from '#phase-kit/context.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { PlacementIndex } from './sprints.ts';

export function orderForSprints(
  preflight: Preflight,
  items: readonly AdoWorkItem[],
): Pick<Preflight, 'manifest' | 'sprints'> {
  const { manifest, sprints } = preflight;
  const withIds = sprints.filter((s): s is PreflightSprint & { id: number } => s.id !== null);
  if (withIds.length === 0) return { manifest, sprints };
  // The steps as they would be taken from the states preflight left: a sprint's rank is its first step's.
  const rank = new Map<number, number>();
  for (const [n, step] of sprintSteps(withIds).entries()) if (!rank.has(step.id)) rank.set(step.id, n);
  if (rank.size === 0) return { manifest, sprints };

  const placement = new PlacementIndex(preflight);
  const byId = new Map(items.map((i) => [i.id, i]));
  const own = new Map<number, number>();
  for (const m of manifest) {
    const item = byId.get(m.id);
    const sprint = item && placement.of(item, () => {}).sprint?.id;
    if (sprint !== undefined && rank.has(sprint)) own.set(m.id, sprint);
  }
  const sprintOf = (m: ManifestItem): number | undefined => {
    const id = own.get(m.id);
    if (id !== undefined || m.parentId === null) return id;
    const type = preflight.typeMap[m.type]?.name ?? '';
    return preflight.typeLevels[type] === -1 ? own.get(m.parentId) : undefined;
  };
  const ordered = orderByRank(manifest, (m) => {
    const sprint = sprintOf(m);
    return sprint === undefined ? Number.POSITIVE_INFINITY : (rank.get(sprint) as number);
  });
  const closableAt = new Map<number, number>([...rank.keys()].map((id) => [id, 0]));
  for (const [n, m] of ordered.entries()) {
    const sprint = sprintOf(m);
    if (sprint !== undefined) closableAt.set(sprint, n + 1);
  }
  return {
    manifest: ordered,
    sprints: sprints.map((s) =>
      s.id !== null && closableAt.has(s.id) ? { ...s, closableAt: closableAt.get(s.id) as number } : s,
    ),
  };
}
