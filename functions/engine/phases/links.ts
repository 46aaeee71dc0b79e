/**
 * Phase 4: the ADO links between work items, as Jira issue links and remote links.
 *
 * The units are every ADO link once (ADO stores a link on both of its ends; `planIssueLinks` keeps one within a
 * manifest slice, `dedupeLinkParts` across slices), read from the items' relations at the phase's start (200 items
 * a call) and kept as run artifacts in parts, read back a block at a time (#phase-kit/plan-slices.ts), so the order
 * is stable across resumes and an invocation never holds the whole plan:
 *  - both ends in Jira: an issue link of the mapped type and direction ("A blocks B"), with the ADO link's
 *    comment as the link's comment;
 *  - one end out of scope, or in scope but not created: a remote link on our issue to the ADO work item's web
 *    page (`{organizationUrl}/{project}/_workitems/edit/{id}`), titled with the relation ("blocks Azure DevOps
 *    #123: title"), with a stable `globalId` (`ado-workitem-{id}-{type}[-outward|-inward]`) so Jira keeps one;
 *  - a parent or child out of scope (phase 3 handles those in scope): a remote link too ("child of Azure DevOps
 *    #12"), so the hierarchy is not dropped silently;
 *  - neither end in Jira: nothing to write (the items' own failures are recorded by phase 2), skipped;
 *  - and for every item in Jira, a remote link back to its own ADO work item ("Azure DevOps #123: title"),
 *    `globalId` `ado:<organization>:<id>`, written even when the run migrates no links (then the only units).
 * The project's confirmed link types replace LINK_TABLE's per relation (its direction kept). Link types Jira
 * lacks fall back as `planIssueLinks` says (Relates, else dropped with a warning).
 * Idempotent: before writing an issue link, the block reads its subjects' `issuelinks` (one search,
 * read-after-write) and writes only what is missing. A remote link is not read first: Jira's POST with a
 * `globalId` creates the link or updates the issue's link with that globalId, answering 201 or 200 (see
 * `JiraClient.addRemoteLink`), so writing it again after an interruption keeps one, and the answer tells a link
 * already there from a new one. What was already in Jira when the phase started is counted as skipped; what
 * appears since (our own write before an interruption) as success. The plan tells the first (`present`): issue
 * links from one search per 50 issues; remote links from a read of the issues this run did not create (only
 * those can hold one of our globalIds before this phase writes; none are read in a run that created them all),
 * and a unit found present writes nothing. A dry run writes nothing, so it reads the remote links with its block.
 * A write to an issue the run did not create is journalled first (#phase-kit/write-journal.ts), for a rollback to
 * take back: a remote link on it, and an issue link with one end on it (with its comment, when it is the link's
 * subject); a link between two issues the run created goes with them.
 */
import { linkTypeFor, planIssueLinks, workItemIdFromUrl } from '#domain/mapping/index.ts';
import { PHASES } from '#domain/runs.ts';
import {
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { manifestIds } from '#phase-kit/manifest-slices.ts';
import {
  HashSeen,
  hash32,
  openPlan,
  type PlanInSlices,
  preparePlanInSlices,
} from '#phase-kit/plan-slices.ts';
import { blockReads, ITEM_CONCURRENCY, inPool } from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import {
  hasIssueLink,
  type IssueState,
  readIssueStates,
  refusalOf,
  remoteLinkIds,
  writeIssueLink,
} from './links-jira.ts';

const TITLE_MAX = 255;

export type LinkUnit =
  /** "`from` <type's outward phrase> `to`", both in Jira. */
  | { kind: 'issue'; type: string; from: number; to: number; comment?: string; present?: true }
  /** A link from our item `on` to the ADO work item `other`, which is not in Jira. */
  | {
      kind: 'remote';
      on: number;
      other: number;
      url: string;
      title: string;
      globalId: string;
      present?: true;
      /** The link from the item's issue back to its own ADO work item (`on` = `other`). */
      backlink?: true;
    }
  /** Neither end is in Jira. */
  | { kind: 'unmigrated'; type: string; from: number; to: number };

/** What the plan holds besides its units (its index's header). */
export interface LinkPlanHeader {
  /** Link type names (lower case) whose two phrases are the same: direction carries no meaning. */
  symmetric: string[];
  warnings: string[];
}

/** One manifest slice's plan: the links its items hold. */
export interface LinkPlan extends LinkPlanHeader {
  units: LinkUnit[];
}

export const linkPlanKey = (tenantId: string, runId: string) =>
  `tenants/${tenantId}/runs/${runId}/link-plan.json`;

/** The stable id of a remote link to ADO work item `other`, per relation, so Jira keeps it once. */
export function remoteGlobalId(other: number, relation: string): string {
  return `ado-workitem-${other}-${relation.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/** The stable id of the remote link from an item's issue back to the ADO work item it came from. */
export function backlinkGlobalId(organization: string, id: number): string {
  return `ado:${organization.toLowerCase()}:${id}`;
}

/** The organisation as a backlink's `globalId` names it: its name, or its host for a URL without a path. */
const organizationOf = (source: PhaseContext['deps']['source']) =>
  source.organizationName || new URL(source.organizationUrl).host;

/**
 * The ADO web page of a work item, in its own team project when its fields name one (else the connection's):
 * the backlinks, the links to items out of scope and the description's footer all point here.
 */
export function workItemWebUrl(
  source: PhaseContext['deps']['source'],
  id: number,
  fields?: Record<string, unknown>,
): string {
  const teamProject = fields?.['System.TeamProject'];
  const project = typeof teamProject === 'string' ? teamProject : source.connection.project;
  return `${source.organizationUrl.replace(/\/+$/, '')}/${encodeURIComponent(project)}/_workitems/edit/${id}`;
}

/**
 * Whether a far end is in the run's manifest: its ids read once per invocation into one sorted typed array (the
 * plan's slices ask side by side), not a set of the whole manifest built again for every slice.
 */
function scopeOf(ctx: PhaseContext): Promise<(id: number) => boolean> {
  const scope = ctx.invocation.keep(SCOPE_KEY, () => manifestIds(ctx.preflight.manifest));
  // A failed read is tried again by the next slice, not remembered.
  scope.catch(() => ctx.invocation.drop(SCOPE_KEY, scope));
  return scope;
}
const SCOPE_KEY = 'links-manifest-ids';

/** The plan of one manifest slice: the links its items hold (the scope, for their far ends, is the whole run). */
async function computePlan(ctx: PhaseContext, sliceFrom: number, sliceTo: number): Promise<LinkPlan> {
  const { deps, run, preflight } = ctx;
  const { store, source, target } = deps;
  const ids = (await preflight.manifest.range(sliceFrom, sliceTo)).map((m) => m.id);
  const inScope = await scopeOf(ctx);
  // With links off, only the backlinks are planned: the items' fields are enough.
  const withLinks = run.options.migrateLinks !== false;
  const [items, linkTypes] = await Promise.all([
    source.workItems(ids, { expand: withLinks ? 'relations' : 'none' }),
    withLinks ? target.linkTypes() : Promise.resolve([]),
  ]);
  // Far ends too: an item outside this run's manifest may be in Jira already (an incremental run's
  // unchanged items), and a link to it is an issue link, not a remote one.
  const ends = items.flatMap((i) => (i.relations ?? []).flatMap((r) => workItemIdFromUrl(r.url) ?? []));
  const entries = await store.idMap.getMany(run.tenantId, run.projectId, [...ids, ...ends]);
  const { links, warnings } = withLinks
    ? planIssueLinks(items, {
        availableTypes: linkTypes.map((t) => t.name),
        ...(preflight.mappings ? { linkTypes: preflight.mappings.linkTypes } : {}),
      })
    : { links: [], warnings: [] };
  const typeOf = new Map(linkTypes.map((t) => [t.name.toLowerCase(), t]));
  const symmetric = linkTypes.filter((t) => t.inward === t.outward).map((t) => t.name.toLowerCase());
  // A dry run created nothing: an item in scope counts as if it were in Jira.
  const inJira = (id: number) => entries.has(id) || (run.options.dryRun && inScope(id));

  type Remote = { on: number; other: number; phrase: string; relation: string; comment?: string };
  const units: (LinkUnit | Remote)[] = [];
  for (const link of links) {
    const [fromIn, toIn] = [inJira(link.from), inJira(link.to)];
    if (fromIn && toIn) units.push({ kind: 'issue', ...link });
    else if (!fromIn && !toIn)
      units.push({ kind: 'unmigrated', type: link.type, from: link.from, to: link.to });
    else {
      const type = typeOf.get(link.type.toLowerCase());
      const sym = symmetric.includes(link.type.toLowerCase());
      const [on, other, phrase, side] = fromIn
        ? [link.from, link.to, type?.outward ?? link.type, 'outward']
        : [link.to, link.from, type?.inward ?? link.type, 'inward'];
      units.push({
        on,
        other,
        phrase,
        relation: sym ? link.type : `${link.type}-${side}`,
        ...(link.comment ? { comment: link.comment } : {}),
      });
    }
  }
  // Parents and children out of scope: in scope, phase 3 shows them.
  for (const item of withLinks ? items : []) {
    if (!inJira(item.id)) continue;
    for (const r of item.relations ?? []) {
      const other = workItemIdFromUrl(r.url);
      if (linkTypeFor(r.rel) !== 'hierarchy' || other === undefined || inScope(other)) continue;
      // In Jira already: phase 3 shows a parent of a manifest item; a child outside the manifest got its
      // parent when it was migrated.
      if (entries.has(other)) continue;
      const isParent = /-reverse$/i.test(r.rel);
      units.push({
        on: item.id,
        other,
        phrase: isParent ? 'child of' : 'parent of',
        relation: isParent ? 'parent' : 'child',
      });
    }
  }

  // What Jira already holds now, before this phase writes anything, is "already present" (skipped): the issue
  // links' subjects read beside the far ends' titles below.
  const issueUnits = units.filter(
    (u): u is Extract<LinkUnit, { kind: 'issue' }> => 'kind' in u && u.kind === 'issue',
  );
  const statesRead = readIssueStates(
    target,
    issueUnits.flatMap((u) => entries.get(u.from)?.targetId ?? []),
  );
  statesRead.catch(() => {}); // awaited below; a failure of the titles' read first must not leave it unhandled
  // Titles and projects of the far ends, for the remote links (those in scope were read above).
  const remotes = units.filter((u): u is Remote => !('kind' in u));
  const known = new Map(items.map((i) => [i.id, i.fields]));
  const unread = [...new Set(remotes.map((r) => r.other))].filter((id) => !known.has(id));
  if (unread.length) {
    try {
      for (const i of await source.workItems(unread, { fields: ['System.Title'] })) known.set(i.id, i.fields);
    } catch (err) {
      // The titles are a courtesy: a far end we may not read still gets its link, with its id only.
      if (!(err instanceof TrackerHttpError) || err.status >= 500) throw err;
    }
  }
  const seen = new Set<string>();
  const resolved: LinkUnit[] = units.flatMap((u): LinkUnit[] => {
    if ('kind' in u) return [u];
    // A relation recorded twice on the same item is one remote link.
    const globalId = remoteGlobalId(u.other, u.relation);
    if (seen.has(`${u.on}|${globalId}`)) return [];
    seen.add(`${u.on}|${globalId}`);
    const fields = known.get(u.other);
    const title = typeof fields?.['System.Title'] === 'string' ? (fields['System.Title'] as string) : '';
    const full = `${u.phrase} Azure DevOps #${u.other}${title ? `: ${title}` : ''}${u.comment ? ` (${u.comment})` : ''}`;
    return [
      {
        kind: 'remote',
        on: u.on,
        other: u.other,
        url: workItemWebUrl(source, u.other, fields),
        title: full.length > TITLE_MAX ? `${full.slice(0, TITLE_MAX - 1)}…` : full,
        globalId,
      },
    ];
  });

  // Each item's way back to Azure DevOps.
  const organization = organizationOf(source);
  for (const item of items) {
    if (!inJira(item.id)) continue;
    const title =
      typeof item.fields['System.Title'] === 'string' ? (item.fields['System.Title'] as string) : '';
    const full = `Azure DevOps #${item.id}${title ? `: ${title}` : ''}`;
    resolved.push({
      kind: 'remote',
      on: item.id,
      other: item.id,
      url: workItemWebUrl(source, item.id, item.fields),
      title: full.length > TITLE_MAX ? `${full.slice(0, TITLE_MAX - 1)}…` : full,
      globalId: backlinkGlobalId(organization, item.id),
      backlink: true,
    });
  }

  const states = await statesRead;
  for (const u of issueUnits) {
    const [from, to] = [entries.get(u.from), entries.get(u.to)];
    const state = from && states.get(from.targetId);
    if (to && state && hasIssueLink(state, u.type, to.targetKey, symmetric.includes(u.type.toLowerCase())))
      u.present = true;
  }
  // Only an issue this run did not create can hold one of our remote links before this phase writes one.
  const notOurs = (id: number) => {
    const entry = entries.get(id);
    return entry !== undefined && (entry.runId !== run.id || entry.origin === 'found');
  };
  const remoteUnits = resolved.filter(
    (u): u is Extract<LinkUnit, { kind: 'remote' }> => u.kind === 'remote' && notOurs(u.on),
  );
  const existing = await remoteLinksOf(
    target,
    remoteUnits.flatMap((u) => entries.get(u.on)?.targetKey ?? []),
  );
  for (const u of remoteUnits) {
    const key = entries.get(u.on)?.targetKey;
    if (key && existing.get(key)?.has(u.globalId)) u.present = true;
  }
  return { units: resolved, symmetric, warnings };
}

/** The remote links' globalIds of each issue (an issue gone from Jira is left out), 50 issues side by side. */
async function remoteLinksOf(
  target: PhaseContext['deps']['target'],
  keys: string[],
): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  await inPool([...new Set(keys)], ITEM_CONCURRENCY, async (key) => {
    try {
      out.set(key, await remoteLinkIds(target, key));
    } catch (err) {
      if (!(err instanceof TrackerHttpError) || err.status !== 404) throw err;
    }
  });
  return out;
}

/** What makes two units the same link: planned twice, it is worked once. */
export function linkKey(u: LinkUnit): string {
  return u.kind === 'remote'
    ? `remote|${u.on}|${u.globalId}`
    : `${u.kind}|${u.type.toLowerCase()}|${u.from}|${u.to}`;
}

/**
 * The link plan's final parts from its slices' parts, in order. A link between two slices' items is planned by
 * both: it is kept once, in the place it was first planned, and when that one has no comment it takes the first
 * later one's (a relation's comment recorded on one end only). The same units, order and comments as joining all
 * the parts and keeping each link's first (all units held), with two passes holding one part at a time:
 *  1. every unit's key hashed into a HashSeen (8 to 16 bytes a unit); a key whose hash was met before is kept
 *     exactly, with the first comment of its later occurrences. Every key planned twice is among them (its second
 *     occurrence meets its first's hash), and only a few others (a 32-bit hash shared by chance);
 *  2. each part written without the later occurrences of those keys, their first taking the comment.
 * A key not kept in the first pass was planned once: it is written as it is.
 */
export async function dedupeLinkParts(
  parts: () => AsyncGenerator<LinkPlan>,
  write: (units: LinkUnit[]) => Promise<void>,
  hash: (key: string) => number = hash32,
): Promise<LinkPlanHeader> {
  const hashes = new HashSeen();
  // Keys whose hash was met before -> the first comment of those occurrences (an issue link's).
  const again = new Map<string, string | undefined>();
  let symmetric: string[] | undefined;
  const warnings = new Set<string>();
  for await (const part of parts()) {
    symmetric ??= part.symmetric;
    for (const w of part.warnings) warnings.add(w);
    for (const u of part.units) {
      const key = linkKey(u);
      if (!hashes.add(hash(key))) continue;
      const comment = u.kind === 'issue' && u.comment ? u.comment : undefined;
      if (!again.has(key) || (again.get(key) === undefined && comment)) again.set(key, comment);
    }
  }
  const kept = new Set<string>();
  for await (const part of parts())
    await write(
      part.units.filter((u) => {
        const key = linkKey(u);
        if (!again.has(key)) return true;
        if (kept.has(key)) return false;
        kept.add(key);
        // Its own comment, else the first later one's: this occurrence's is not among those unless it has one.
        const later = again.get(key);
        if (u.kind === 'issue' && u.comment === undefined && later) u.comment = later;
        return true;
      }),
    );
  return { symmetric: symmetric ?? [], warnings: [...warnings] };
}

/** The phase's plan: a manifest slice at a time, across invocations if need be (see preparePlanInSlices). */
const linkPlan = (ctx: PhaseContext): PlanInSlices<LinkPlan, LinkUnit, LinkPlanHeader> => ({
  key: linkPlanKey(ctx.run.tenantId, ctx.run.id),
  manifestLength: ctx.preflight.manifest.length,
  ...(ctx.deps.planSliceItems ? { sliceItems: ctx.deps.planSliceItems } : {}),
  compute: (from, to) => computePlan(ctx, from, to),
  finish: (parts, write) => dedupeLinkParts(parts, write),
});

const preparePlan = (ctx: PhaseContext, remainingMs?: () => number) =>
  preparePlanInSlices(ctx.deps.artifacts, linkPlan(ctx), ctx.invocation, remainingMs);

/** The invocation's reader of the plan: its index, and the units by window, a part at a time. */
const planOf = async (ctx: PhaseContext) => {
  await preparePlan(ctx);
  return openPlan<LinkUnit, LinkPlanHeader>(
    ctx.deps.artifacts,
    linkPlanKey(ctx.run.tenantId, ctx.run.id),
    ctx.invocation,
  );
};

/** The phase's units one at a time; the id map, issue links and remote links read 50 units at a time. */
export async function openLinks(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run } = ctx;
  const { store, target } = deps;
  const plan = await planOf(ctx);
  const dryRun = run.options.dryRun;
  const journal = WriteJournal.of(ctx);
  const block = blockReads(async (from, to) => {
    // The block's units from the plan's part(s) they are in: the plan is never held whole.
    const units = await plan.range(from, to);
    const entries = await store.idMap.getMany(
      run.tenantId,
      run.projectId,
      units.flatMap((u) => (u.kind === 'remote' ? [u.on] : [u.from, u.to])),
    );
    const mapped = (id: number) => entries.get(id);
    const states: Map<string, IssueState> = await readIssueStates(
      target,
      units.flatMap((u) => (u.kind === 'issue' && mapped(u.to) ? (mapped(u.from)?.targetId ?? []) : [])),
    );
    // Outside a dry run the remote link's POST tells whether it was there (see the file's comment).
    const remotes = dryRun
      ? await remoteLinksOf(
          target,
          units.flatMap((u) => (u.kind === 'remote' ? (mapped(u.on)?.targetKey ?? []) : [])),
        )
      : new Map<string, Set<string>>();
    return { from, units, entries, states, remotes };
  }, plan.length);

  const done = (out: UnitOutcome, u: LinkUnit, what: string, existed: boolean) => {
    if (existed && u.kind !== 'unmigrated' && u.present) out.skipped++;
    else out.success++;
    out.log.push(what);
  };
  const fail = (out: UnitOutcome, sourceId: number, what: string, reason: string) => {
    out.failure++;
    out.log.push(`${what} failed: ${reason}`);
    out.failures.push({ sourceId, reason: `${what}: ${reason}` });
  };

  // Each unit writes a link of its own.
  const one = async (
    u: LinkUnit,
    out: UnitOutcome,
    read: Awaited<ReturnType<typeof block>>,
  ): Promise<void> => {
    const { entries, states, remotes } = read;
    const mapped = (id: number) => entries.get(id);
    if (u.kind === 'unmigrated') {
      out.skipped++;
      out.log.push(`#${u.from} ${u.type} #${u.to}: neither item is in Jira, nothing to link`);
      return;
    }
    if (u.kind === 'issue') {
      const [from, to] = [mapped(u.from), mapped(u.to)];
      const what = `#${u.from} ${from?.targetKey ?? ''} ${u.type} #${u.to} ${to?.targetKey ?? ''}`;
      if (!from || !to) {
        if (dryRun) done(out, u, `${what}: would be linked`, false);
        else fail(out, u.from, what, 'an end is no longer in the id map');
        return;
      }
      const state = states.get(from.targetId);
      if (!state) {
        fail(out, u.from, what, `${from.targetKey} no longer exists in Jira`);
        return;
      }
      if (hasIssueLink(state, u.type, to.targetKey, plan.header.symmetric.includes(u.type.toLowerCase()))) {
        done(
          out,
          u,
          u.present ? `${what}: already in Jira` : `${what}: confirmed after an interruption`,
          true,
        );
        return;
      }
      if (dryRun) {
        done(out, u, `${what}: would be linked`, false);
        return;
      }
      try {
        // On an issue the run did not create: journalled, its comment (which Jira adds to the subject) too;
        // forgotten when Jira refuses the link.
        const records = await journal.issueLink(from, to, PHASES.links, u.type, u.comment);
        await journal.attempt(records, () =>
          writeIssueLink(target, {
            type: u.type,
            subjectKey: from.targetKey,
            objectKey: to.targetKey,
            ...(u.comment ? { comment: u.comment } : {}),
          }),
        );
        done(out, u, `${what}: linked`, false);
      } catch (err) {
        const reason = refusalOf(err);
        if (reason === undefined) throw err;
        fail(out, u.from, what, reason);
      }
      return;
    }
    const on: IdMapEntry | undefined = mapped(u.on);
    const what = `#${u.on} ${on?.targetKey ?? ''} -> ${u.title}`;
    if (!on) {
      if (dryRun) done(out, u, `${what}: would be added as a remote link`, false);
      else fail(out, u.on, what, 'the item is no longer in the id map');
      return;
    }
    const gone = () => fail(out, u.on, what, `${on.targetKey} no longer exists in Jira`);
    if (dryRun) {
      const existing = remotes.get(on.targetKey);
      if (!existing) gone();
      else if (existing.has(u.globalId)) done(out, u, `${what}: already in Jira`, true);
      else done(out, u, `${what}: would be added as a remote link`, false);
      return;
    }
    // Found by the plan's read: there before the phase, nothing to write.
    if (u.present) {
      done(out, u, `${what}: already in Jira`, true);
      return;
    }
    try {
      const records = await journal.intend(on, PHASES.links, [{ kind: 'remoteLink', globalId: u.globalId }]);
      const answer = await journal.attempt(records, () =>
        target.addRemoteLink(on.targetKey, { url: u.url, title: u.title, globalId: u.globalId }),
      );
      if (answer === 'updated') done(out, u, `${what}: confirmed after an interruption`, true);
      else done(out, u, `${what}: remote link added`, false);
    } catch (err) {
      if (err instanceof TrackerHttpError && err.status === 404) return gone();
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      fail(out, u.on, what, reason);
    }
  };
  return {
    work: async (index) => {
      const out = emptyOutcome();
      if (index === 0) out.log.push(...plan.header.warnings);
      // The unit from its block's read, which holds the block's units.
      const read = await block(index);
      await one(read.units[index - read.from] as LinkUnit, out, read);
      return out;
    },
  };
}

/** Phase 4, for the runner's PHASE_MODULES. A run that migrates no links has the backlinks only. */
const linksUnits = async (ctx: PhaseContext) => (await planOf(ctx)).length;

export const linksPhase: PhaseModule = {
  prepare: (ctx, remainingMs) => preparePlan(ctx, remainingMs),
  units: linksUnits,
  open: openLinks,
};
