/**
 * The link plan as its slices' parts make it when all are joined and held at once: the reference the plan stored
 * in parts (`dedupeLinkParts`, functions/engine/phases/links.ts) is held to. A link planned by two slices is kept
 * once, in the place it was first planned; the first one takes a later one's comment when it has none.
 */
import type { LinkPlan, LinkUnit } from '../../functions/engine/phases/links.ts';

export function mergeLinkPlans(parts: LinkPlan[]): LinkPlan {
  const seen = new Map<string, LinkUnit>();
  for (const unit of parts.flatMap((p) => p.units)) {
    // A copy: the parts stay as they were read.
    const u = { ...unit };
    const id =
      u.kind === 'remote'
        ? `remote|${u.on}|${u.globalId}`
        : `${u.kind}|${u.type.toLowerCase()}|${u.from}|${u.to}`;
    const first = seen.get(id);
    if (!first) seen.set(id, u);
    else if (first.kind === 'issue' && u.kind === 'issue' && first.comment === undefined && u.comment)
      first.comment = u.comment;
  }
  return {
    units: [...seen.values()],
    symmetric: parts[0]?.symmetric ?? [],
    warnings: [...new Set(parts.flatMap((p) => p.warnings))],
  };
}
