/**
 * What a description needs from the run to resolve what its HTML names, for phase 2 (create, incremental
 * update) and phase 5 (the final description, once every item exists):
 *
 * - mentions: the ADO identity -> e-mail -> Jira account map comments use (comments-people.ts), kept as this
 *   run's own artifact. It is filled, once a run and only when some item mentions someone, from the identities
 *   every item of the scope names (a mention carries only a GUID and a display name), as comments do;
 * - `#123` references: the id map, rendered as comments render them (an inlineCard to the issue's browse URL);
 * - the footer's link to the item's Azure DevOps page.
 */

import type { PhaseContext } from '#phase-kit/context.ts';
import { mapYielding, runArtifactKey } from '#phase-kit/toolkit.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { PeopleMap } from './comments-people.ts';
import { type DescriptionContext, descriptionRefsOf } from './description.ts';
import { workItemWebUrl } from './links.ts';

const PEOPLE_ARTIFACT = 'description-people.json';
/** Items read at a time while learning the scope's identities. */
const ITEM_SLICE = 1000;

/** The Azure DevOps web page of a work item, the footer's link (the same page the backlink points at). */
export const itemWebUrl = (ctx: PhaseContext, item: AdoWorkItem): string =>
  workItemWebUrl(ctx.deps.source, item.id, item.fields);

/**
 * One people map per invocation: the read-ahead builds two blocks' contexts at once, and each would otherwise
 * read the whole scope and save its own copy of the map.
 */
function peopleOf(ctx: PhaseContext): Promise<PeopleMap> {
  const people = ctx.invocation.keep(PEOPLE_ARTIFACT, () => loadPeople(ctx));
  // A failed read is tried again by the next block, not remembered.
  people.catch(() => ctx.invocation.drop(PEOPLE_ARTIFACT, people));
  return people;
}

/** The run's people map for descriptions; the first time, learnt from every item of the scope. */
async function loadPeople(ctx: PhaseContext): Promise<PeopleMap> {
  const { deps, run, preflight } = ctx;
  // One read of the artifact: a saved map is the run's (a new one is learnt from the scope first).
  const people = await PeopleMap.load(deps, runArtifactKey(run, PEOPLE_ARTIFACT), preflight);
  if (!people.isNew) return people;
  // A manifest slice at a time: the ids of one slice, then its items, never the whole scope at once.
  for await (const slice of preflight.manifest.slices())
    for (let i = 0; i < slice.length; i += ITEM_SLICE) {
      const ids = slice.slice(i, i + ITEM_SLICE).map((m) => m.id);
      const items = await deps.source.workItems(ids, { expand: 'none' });
      await people.learn(items.flatMap((item) => Object.values(item.fields)));
    }
  await people.save();
  return people;
}

/**
 * The context the descriptions of `items` are built with: their mentions and references resolved as far as
 * the run knows them now (a reference to an item not created yet stays as written).
 */
export async function descriptionContextFor(
  ctx: PhaseContext,
  items: readonly AdoWorkItem[],
): Promise<DescriptionContext> {
  const { deps, run } = ctx;
  // Each item's HTML converted to find them: one at a time, the event loop given a turn between two.
  const refs = await mapYielding(items, descriptionRefsOf);
  const mentions = refs.some((r) => r.mentions.length > 0);
  const referred = [...new Set(refs.flatMap((r) => r.references))];
  const people = mentions ? await peopleOf(ctx) : undefined;
  if (people) {
    await people.learn(items.flatMap((item) => Object.values(item.fields)));
    await people.save();
  }
  const keys = referred.length
    ? await deps.store.idMap.getMany(run.tenantId, run.projectId, referred)
    : new Map<number, { targetKey: string }>();
  const siteUrl = deps.target.connection.baseUrl.replace(/\/+$/, '');
  return {
    mention: ({ adoId, displayName }) => {
      const accountId = people?.accountOf(adoId);
      return accountId ? { accountId, displayName } : undefined;
    },
    workItemKey: (id) => keys.get(id)?.targetKey,
    issueUrl: (key) => `${siteUrl}/browse/${encodeURIComponent(key)}`,
    itemUrl: (item) => itemWebUrl(ctx, item),
  };
}

/** Whether an item's description needs the run to be final: it mentions someone or refers to an item. */
export function namesOthers(item: AdoWorkItem): boolean {
  const { mentions, references } = descriptionRefsOf(item);
  return mentions.length > 0 || references.length > 0;
}
