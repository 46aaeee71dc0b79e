/**
 * Phase 3: every in-scope ADO parent/child pair made visible in Jira, checkpointed per item.
 *
 * Jira takes a `parent` only one hierarchy level up (Epic > standard issue > sub-task); phase 2 set it at
 * creation when the parent already existed. The units are the items whose in-scope parent is not yet shown in
 * Jira when the phase starts (computed once and kept as run artifacts in parts, read back a block at a time,
 * #phase-kit/plan-slices.ts, so the order is stable across resumes and an invocation never holds the whole plan):
 *  - levels allow it (e.g. parent and child created in the same chunk): `parent` is set by editing the child;
 *    should Jira refuse the field for an epic's child, the Agile epic endpoint is tried; should both refuse,
 *    the pair is kept as below, with Jira's reason in the comment;
 *  - levels do not allow it (a Task under a Story: both standard; a Feature under an Epic: both epics, since
 *    features become epics): a "Relates" link from parent to child whose comment says which one is the ADO
 *    parent and why Jira cannot hold it as such. The relationship is never dropped silently: without a
 *    Relates type, or when Jira refuses, the item is a recorded failure.
 * The plan is the id map's: the children not recorded as placed (phase 2 records those it created under their
 * parent), so it is stored after one id map read, and no unit writes before it is stored. Idempotent: each block's
 * children's current parent and links are read (read-after-write) before its units write, but for the children
 * this run created in the pass that stored the plan (nothing can have written them: see `known`); a pair already
 * shown is confirmed, not written. Each item gets phase 3 in its id map entry's `phasesDone` after its write (10 items
 * at a time, and the rest when the pass ends), so a resumed run neither redoes a recorded item nor writes twice
 * an item whose write was not yet recorded (the read finds it). A child the run did not create has its parent
 * before journalled first (#phase-kit/write-journal.ts), and a Relates link with an end on such an issue, for a
 * rollback to take back.
 */
import type { ManifestItem } from '#domain/manifest.ts';
import { PHASES } from '#domain/runs.ts';
import {
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type PreflightHeader,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { openPlan, type PlanInSlices, preparePlanInSlices } from '#phase-kit/plan-slices.ts';
import { blockReads } from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import {
  hasIssueLink,
  type IssueState,
  markPhaseDone,
  readIssueStates,
  refusalOf,
  writeIssueLink,
} from './links-jira.ts';

const PHASE = PHASES.hierarchy;
const RELATES = 'Relates';
/** Children recorded as done (`phasesDone`) in one id map write. */
const RECORD_BATCH = 10;

export interface HierarchyUnit {
  child: number;
  parent: number;
}

/** What the plan holds besides its units (its index's header). */
export interface HierarchyPlanHeader {
  /** The site's name of the Relates link type, for parents Jira cannot hold as `parent`; null if it has none. */
  relatesType: string | null;
}

/** One manifest slice's plan. */
export interface HierarchyPlan extends HierarchyPlanHeader {
  units: HierarchyUnit[];
}

export const hierarchyPlanKey = (tenantId: string, runId: string) =>
  `tenants/${tenantId}/runs/${runId}/hierarchy-plan.json`;

/** Jira hierarchy level of the issue type a source type is created as (standard when unknown). */
function levelOf(preflight: PreflightHeader, sourceType: string): number {
  return preflight.typeLevels[preflight.typeMap[sourceType]?.name ?? ''] ?? 0;
}

/** Whether Jira can hold `parentType` as the `parent` of `childType`: exactly one level up. */
export function parentFieldFits(preflight: PreflightHeader, childType: string, parentType: string): boolean {
  return levelOf(preflight, parentType) === levelOf(preflight, childType) + 1;
}

/** Whether Jira already shows the pair: as the parent field, or (where the field cannot) as a Relates link. */
function represented(
  preflight: PreflightHeader,
  relatesType: string | null,
  child: IdMapEntry,
  parent: IdMapEntry,
  state: IssueState,
): boolean {
  if (parentFieldFits(preflight, child.sourceType, parent.sourceType))
    return state.parentKey === parent.targetKey;
  return relatesType !== null && hasIssueLink(state, relatesType, parent.targetKey, true);
}

/**
 * One slice's units: its children mapped and not recorded as placed (a dry run created nothing, so it counts every
 * pair whose child would be created). Jira's state is not read here but by the units' blocks: the plan waits for
 * one id map read, not for the slowest of every child's search, and a pair found shown is confirmed by its unit.
 */
async function computePlan(
  { deps, run, preflight }: PhaseContext,
  from: number,
  to: number,
  linkTypes: () => Promise<{ name: string }[]>,
): Promise<HierarchyPlan> {
  const { store } = deps;
  const withParent = (await preflight.manifest.range(from, to)).filter(
    (m): m is ManifestItem & { parentId: number } => m.parentId !== null,
  );
  const [types, children] = await Promise.all([
    linkTypes(),
    store.idMap.getMany(
      run.tenantId,
      run.projectId,
      withParent.map((m) => m.id),
    ),
  ]);
  const relatesType = types.find((t) => t.name.toLowerCase() === RELATES.toLowerCase())?.name ?? null;
  // Not created (its own failure is recorded by phase 2), or placed by phase 2 or an earlier run: nothing to do.
  const units = withParent
    .filter((m) => {
      const child = children.get(m.id);
      return child ? !child.phasesDone.includes(PHASE) : run.options.dryRun;
    })
    .map((m) => ({ child: m.id, parent: m.parentId }));
  return { units, relatesType };
}

/**
 * Passes whose `prepare` call stored the plan (`preparePlanInSlices`' `onStored`: no other invocation had): no unit
 * of the phase was worked before them, since none can start without the plan. Keyed by the pass's context and
 * taken once, by its worker; a pass whose `prepare` found the plan stored (a resumed phase, the next invocation, a
 * chunk worked again after a crash) is not in it.
 */
const storedThePlan = new WeakSet<PhaseContext>();

/**
 * Slice by slice, across invocations if need be (see preparePlanInSlices); the link types read once for all. The
 * slices' parts are the plan's parts as they are: a pair is planned by its child's slice only.
 */
const preparePlan = (ctx: PhaseContext, remainingMs?: () => number) => {
  let linkTypes: ReturnType<PhaseContext['deps']['target']['linkTypes']> | undefined;
  const readLinkTypes = () => {
    linkTypes ??= ctx.deps.target.linkTypes();
    return linkTypes;
  };
  const plan: PlanInSlices<HierarchyPlan, HierarchyUnit, HierarchyPlanHeader> = {
    key: hierarchyPlanKey(ctx.run.tenantId, ctx.run.id),
    manifestLength: ctx.preflight.manifest.length,
    ...(ctx.deps.planSliceItems ? { sliceItems: ctx.deps.planSliceItems } : {}),
    compute: (from, to) => computePlan(ctx, from, to, readLinkTypes),
    async finish(parts, write) {
      let header: HierarchyPlanHeader | undefined;
      for await (const part of parts()) {
        header ??= { relatesType: part.relatesType };
        await write(part.units);
      }
      return header ?? { relatesType: null };
    },
  };
  return preparePlanInSlices(ctx.deps.artifacts, plan, ctx.invocation, remainingMs, () =>
    storedThePlan.add(ctx),
  );
};

/** The invocation's reader of the plan: its index, and the units by window, a part at a time. */
const planOf = async (ctx: PhaseContext) => {
  await preparePlan(ctx);
  return openPlan<HierarchyUnit, HierarchyPlanHeader>(
    ctx.deps.artifacts,
    hierarchyPlanKey(ctx.run.tenantId, ctx.run.id),
    ctx.invocation,
  );
};

/** The comment of a Relates link that stands for a parent: which end is the parent, and why not `parent`. */
function hierarchyNote(child: IdMapEntry, parent: IdMapEntry, why: string): string {
  return (
    `Azure DevOps hierarchy: ${parent.targetKey} (#${parent.sourceId}, ${parent.sourceType}) is the parent of ` +
    `${child.targetKey} (#${child.sourceId}, ${child.sourceType}). ${why} This link keeps the relationship.`
  );
}

/** The phase's units one at a time; id map entries and the children's Jira state read 50 pairs at a time. */
export async function openHierarchy(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run, preflight } = ctx;
  const { store, target } = deps;
  const plan = await planOf(ctx);
  const dryRun = run.options.dryRun;
  const journal = WriteJournal.of(ctx);
  /**
   * A child this run created (not one recovered after an interrupted create, which may hold its parent), in the
   * pass that stored the plan, shows in Jira only what phase 2 wrote: no parent (phase 2 records those it set, and
   * they are no units) and no link (phase 4 comes after), and no unit of the phase was worked before. Its state is
   * known without a search; every other child's is read.
   */
  const firstPass = storedThePlan.delete(ctx);
  const known = (child: IdMapEntry): IssueState | undefined =>
    firstPass && child.origin === 'created' && child.runId === run.id && !child.recovered
      ? { key: child.targetKey, parentKey: null, links: [] }
      : undefined;
  // Two blocks ahead: a unit here is one write, so the window passes a block in about a write's time, less than
  // a block's chain of reads (the id map, then a search) at its slower draws.
  const block = blockReads(
    async (from, to) => {
      // The block's units from the plan's part(s) they are in: the plan is never held whole.
      const units = await plan.range(from, to);
      const entries = await store.idMap.getMany(run.tenantId, run.projectId, [
        ...units.map((u) => u.child),
        ...units.map((u) => u.parent),
      ]);
      const states = new Map<string, IssueState>();
      const children = units.flatMap((u) => {
        const child = entries.get(u.child);
        if (!child || !entries.has(u.parent) || child.phasesDone.includes(PHASE)) return [];
        const state = known(child);
        if (state) states.set(child.targetId, state);
        return state ? [] : [child.targetId];
      });
      if (children.length)
        for (const [id, state] of await readIssueStates(target, children)) states.set(id, state);
      return { from, units, entries, states };
    },
    plan.length,
    2,
  );
  const fail = (out: UnitOutcome, sourceId: number, reason: string) => {
    out.failure++;
    out.log.push(`#${sourceId} hierarchy failed: ${reason}`);
    out.failures.push({ sourceId, reason });
  };
  // Not one id map write per unit on its way (a round trip in the window's time): a few at once.
  const unrecorded: IdMapEntry[] = [];
  const flush = () => markPhaseDone(store, run, unrecorded.splice(0), PHASE);
  const record = async (child: IdMapEntry) => {
    unrecorded.push(child);
    if (unrecorded.length >= RECORD_BATCH) await flush();
  };

  const work = async (index: number): Promise<UnitOutcome> => {
    const out = emptyOutcome();
    // The unit from its block's read, which holds the block's units.
    const { from, units, entries, states } = await block(index);
    const u = units[index - from] as HierarchyUnit;
    const child = entries.get(u.child);
    const parent = entries.get(u.parent);
    if (child?.phasesDone.includes(PHASE)) {
      out.success++;
      out.log.push(`#${u.child} under #${u.parent}: done before an interruption`);
      return out;
    }
    if (dryRun && (!child || !parent)) {
      const kept = child && parent && !parentFieldFits(preflight, child.sourceType, parent.sourceType);
      out.success++;
      out.log.push(`#${u.child} would be placed under #${u.parent}${kept ? ' (as a Relates link)' : ''}`);
      return out;
    }
    if (!child) {
      out.skipped++;
      out.log.push(`#${u.child} is not in Jira: nothing to place under #${u.parent}`);
      return out;
    }
    if (!parent) {
      fail(out, u.child, `its Azure DevOps parent #${u.parent} was not created in Jira`);
      return out;
    }
    const state = states.get(child.targetId);
    const pair = `#${child.sourceId} ${child.targetKey} under #${parent.sourceId} ${parent.targetKey}`;
    if (!state) {
      fail(out, child.sourceId, `${child.targetKey} no longer exists in Jira`);
      return out;
    }
    const fits = parentFieldFits(preflight, child.sourceType, parent.sourceType);
    if (represented(preflight, plan.header.relatesType, child, parent, state)) {
      // Written before an interruption, or placed since the id map was (an earlier run's item, updated by this one).
      out.success++;
      out.log.push(`${pair}: confirmed in Jira, nothing to write`);
      if (!dryRun) await record(child);
      return out;
    }
    if (dryRun) {
      out.success++;
      out.log.push(`${pair}: would be ${fits ? 'set as parent' : 'kept as a Relates link'}`);
      return out;
    }
    try {
      const jiraType = (t: string) => preflight.typeMap[t]?.name ?? t;
      let why =
        `Jira cannot place a ${jiraType(child.sourceType)} under a ${jiraType(parent.sourceType)}` +
        ' (its hierarchy is Epic > standard issue > sub-task).';
      if (fits) {
        const before = await journal.fieldsBefore(child, PHASE, {
          parent: state.parentKey ? { key: state.parentKey } : null,
        });
        const refused = await setParent(target, child, parent, levelOf(preflight, parent.sourceType) === 1);
        if (refused === undefined) {
          out.success++;
          out.log.push(`${pair}: parent set${state.parentKey ? ` (was under ${state.parentKey})` : ''}`);
          await record(child);
          return out;
        }
        // Both ways refused: the parent is as it was, nothing of it to take back.
        await journal.forget(before);
        why = `Jira refused it as the parent (${refused}).`;
        // After a refusal, the link may already be there from an attempt interrupted after it was written.
        if (plan.header.relatesType && hasIssueLink(state, plan.header.relatesType, parent.targetKey, true)) {
          out.success++;
          out.log.push(`${pair}: kept as a Relates link (${why})`);
          await record(child);
          return out;
        }
      }
      if (!plan.header.relatesType) {
        fail(out, child.sourceId, `${pair}: ${why} Jira has no Relates link type to keep it.`);
        return out;
      }
      const relatesType = plan.header.relatesType;
      const comment = hierarchyNote(child, parent, why);
      const records = await journal.issueLink(parent, child, PHASE, relatesType, comment);
      await journal.attempt(records, () =>
        writeIssueLink(target, {
          type: relatesType,
          subjectKey: parent.targetKey,
          objectKey: child.targetKey,
          comment,
        }),
      );
      out.success++;
      out.log.push(`${pair}: kept as a Relates link`);
      await record(child);
    } catch (err) {
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      fail(out, child.sourceId, `${pair}: ${reason}`);
    }
    return out;
  };
  return { work, close: async () => (unrecorded.length ? flush() : undefined) };
}

/**
 * Sets the parent field; for a standard issue under an epic whose `parent` Jira refuses (older
 * company-managed configurations), moves it into the epic by the Agile endpoint. Answers Jira's reason when
 * both refused, else undefined.
 */
async function setParent(
  target: PhaseContext['deps']['target'],
  child: IdMapEntry,
  parent: IdMapEntry,
  parentIsEpic: boolean,
): Promise<string | undefined> {
  try {
    await target.editIssue(child.targetKey, { fields: { parent: { key: parent.targetKey } } });
    return undefined;
  } catch (err) {
    const refused = refusalOf(err);
    if (refused === undefined) throw err;
    if (!parentIsEpic) return refused;
    try {
      await target.moveToEpic(parent.targetKey, [child.targetKey]);
      return undefined;
    } catch (err2) {
      const refused2 = refusalOf(err2);
      if (refused2 === undefined) throw err2;
      return `${refused}; epic endpoint: ${refused2}`;
    }
  }
}

/** Phase 3, for the runner's PHASE_MODULES. */
const hierarchyUnits = async (ctx: PhaseContext) => (await planOf(ctx)).length;

export const hierarchyPhase: PhaseModule = {
  prepare: preparePlan,
  units: hierarchyUnits,
  open: openHierarchy,
};
