/**
 * Phase 3: every in-scope ADO parent/child pair made visible in Jira, checkpointed per item.
 *
 * Jira takes a `parent` only one hierarchy level up (Epic > standard issue > sub-task); phase 2 set it at
 * creation when the parent already existed. The units are the items whose in-scope parent is not yet shown in
 * Jira when the phase starts (computed once and kept as a run artifact, so the order is stable across resumes):
 *  - levels allow it (e.g. parent and child created in the same chunk): `parent` is set by editing the child;
 *    should Jira refuse the field for an epic's child, the Agile epic endpoint is tried; should both refuse,
 *    the pair is kept as below, with Jira's reason in the comment;
 *  - levels do not allow it (a Task under a Story: both standard; a Feature under an Epic: both epics, since
 *    features become epics): a "Relates" link from parent to child whose comment says which one is the ADO
 *    parent and why Jira cannot hold it as such. The relationship is never dropped silently: without a
 *    Relates type, or when Jira refuses, the item is a recorded failure.
 * Idempotent: the children's current parent and links are read (read-after-write) before writing (by the block,
 * or by the plan when the same pass stored it: no unit writes before its plan is stored), and each
 * item gets phase 3 in its id map entry's `phasesDone` after its write (10 items at a time, and the rest when the
 * pass ends), so a resumed run neither redoes a recorded item nor writes twice an item whose write was not yet
 * recorded (the read finds it). The checkpoint does not depend on it: the record spares a later run's plan.
 */
import type { ManifestItem } from '#domain/manifest.ts';
import { PHASES } from '#domain/runs.ts';
import {
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type Preflight,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { blockReads, chunkFromUnits } from '#phase-kit/toolkit.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import {
  hasIssueLink,
  type IssueState,
  loadOrComputePlan,
  markPhaseDone,
  preparePlanInSlices,
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

export interface HierarchyPlan {
  units: HierarchyUnit[];
  /** The site's name of the Relates link type, for parents Jira cannot hold as `parent`; null if it has none. */
  relatesType: string | null;
}

export const hierarchyPlanKey = (tenantId: string, runId: string) =>
  `tenants/${tenantId}/runs/${runId}/hierarchy-plan.json`;

/** Jira hierarchy level of the issue type a source type is created as (standard when unknown). */
function levelOf(preflight: Preflight, sourceType: string): number {
  return preflight.typeLevels[preflight.typeMap[sourceType]?.name ?? ''] ?? 0;
}

/** Whether Jira can hold `parentType` as the `parent` of `childType`: exactly one level up. */
export function parentFieldFits(preflight: Preflight, childType: string, parentType: string): boolean {
  return levelOf(preflight, parentType) === levelOf(preflight, childType) + 1;
}

/** Whether Jira already shows the pair: as the parent field, or (where the field cannot) as a Relates link. */
function represented(
  preflight: Preflight,
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
 * What one `prepare` call's plan slices read: the id map entries of their pairs and their children's Jira state.
 * Handed to the blocks of the same pass when that call stored the plan (see `handedReads`).
 */
interface PlanReads {
  /** The children of the slices this call computed: their pair's entries and state are below. */
  children: Set<number>;
  entries: Map<number, IdMapEntry>;
  states: Map<string, IssueState>;
}

/**
 * The plan's reads, handed to the pass that follows the `prepare` call which read them and stored the plan, so
 * that the pass's blocks need not read the same entries and states again (the first block's read was the phase's
 * first units' wait: an id map read, then a search). They are as good as a block's read: no unit of the phase
 * writes before its plan is stored, and the plan was stored by this call (an invocation that finds it stored, a
 * resumed phase, a second pass, reads again). Keyed by the pass's context and taken once, by its worker.
 */
const handedReads = new WeakMap<PhaseContext, PlanReads>();

async function computePlan(
  { deps, run, preflight }: PhaseContext,
  from: number,
  to: number,
  reads?: PlanReads,
): Promise<HierarchyPlan> {
  const { store, target } = deps;
  const withParent = preflight.manifest
    .slice(from, to)
    .filter((m): m is ManifestItem & { parentId: number } => m.parentId !== null);
  // The link types are wanted only to judge the states: the searches go out beside their read, not after it.
  const readStates = async () => {
    const entries = await store.idMap.getMany(run.tenantId, run.projectId, [
      ...withParent.map((m) => m.id),
      ...withParent.map((m) => m.parentId),
    ]);
    // Not created (its own failure is recorded by phase 2) or already done by an earlier run: nothing to do.
    // A dry run created nothing, so it counts every pair whose child would be created.
    const open = withParent.filter((m) => {
      const child = entries.get(m.id);
      return child ? !child.phasesDone.includes(PHASE) : run.options.dryRun;
    });
    const mapped = open.filter((m) => entries.has(m.id) && entries.has(m.parentId));
    const states = await readIssueStates(
      target,
      mapped.map((m) => (entries.get(m.id) as IdMapEntry).targetId),
    );
    return { entries, open, states };
  };
  const [linkTypes, { entries, open, states }] = await Promise.all([target.linkTypes(), readStates()]);
  const relatesType = linkTypes.find((t) => t.name.toLowerCase() === RELATES.toLowerCase())?.name ?? null;
  const units = open
    .filter((m) => {
      const child = entries.get(m.id);
      const parent = entries.get(m.parentId);
      const state = child && states.get(child.targetId);
      return !(child && parent && state && represented(preflight, relatesType, child, parent, state));
    })
    .map((m) => ({ child: m.id, parent: m.parentId }));
  if (reads) {
    for (const m of withParent) reads.children.add(m.id);
    for (const [id, entry] of entries) reads.entries.set(id, entry);
    for (const [id, state] of states) reads.states.set(id, state);
  }
  return { units, relatesType };
}

/** Slice by slice, across invocations if need be (see preparePlanInSlices); hands its reads over if it stored it. */
const preparePlan = (ctx: PhaseContext, remainingMs?: () => number) => {
  const reads: PlanReads = { children: new Set(), entries: new Map(), states: new Map() };
  return preparePlanInSlices(
    ctx.deps.artifacts,
    hierarchyPlanKey(ctx.run.tenantId, ctx.run.id),
    ctx.preflight.manifest.length,
    (from, to) => computePlan(ctx, from, to, reads),
    (parts) => ({ units: parts.flatMap((p) => p.units), relatesType: parts[0]?.relatesType ?? null }),
    remainingMs,
    () => handedReads.set(ctx, reads),
  );
};

const planOf = async (ctx: PhaseContext) => {
  await preparePlan(ctx);
  return loadOrComputePlan<HierarchyPlan>(
    ctx.deps.artifacts,
    hierarchyPlanKey(ctx.run.tenantId, ctx.run.id),
    () => {
      throw new Error('the hierarchy plan was not stored');
    },
  );
};

/** The comment of a Relates link that stands for a parent: which end is the parent, and why not `parent`. */
function hierarchyNote(child: IdMapEntry, parent: IdMapEntry, why: string): string {
  return (
    `Azure DevOps hierarchy: ${parent.targetKey} (#${parent.sourceId}, ${parent.sourceType}) is the parent of ` +
    `${child.targetKey} (#${child.sourceId}, ${child.sourceType}). ${why} This link keeps the relationship.`
  );
}

/**
 * The phase's units one at a time; id map entries and the children's Jira state read 50 pairs at a time, or taken
 * from the plan's reads when this pass's `prepare` read them and stored the plan.
 */
export async function openHierarchy(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run, preflight } = ctx;
  const { store, target } = deps;
  const plan = await planOf(ctx);
  const handed = handedReads.get(ctx);
  handedReads.delete(ctx);
  const dryRun = run.options.dryRun;
  const block = blockReads(async (from, to) => {
    const units = plan.units.slice(from, to);
    if (handed && units.every((u) => handed.children.has(u.child)))
      return { entries: handed.entries, states: handed.states };
    const entries = await store.idMap.getMany(run.tenantId, run.projectId, [
      ...units.map((u) => u.child),
      ...units.map((u) => u.parent),
    ]);
    const children = units.flatMap((u) => {
      const child = entries.get(u.child);
      return child && entries.has(u.parent) && !child.phasesDone.includes(PHASE) ? [child.targetId] : [];
    });
    const states = children.length ? await readIssueStates(target, children) : new Map<string, IssueState>();
    return { entries, states };
  }, plan.units.length);
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
    const u = plan.units[index] as HierarchyUnit;
    const out = emptyOutcome();
    const { entries, states } = await block(index);
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
    if (represented(preflight, plan.relatesType, child, parent, state)) {
      // Not shown when the phase started: written by this run before an interruption.
      out.success++;
      out.log.push(`${pair}: confirmed in Jira after an interruption`);
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
        const refused = await setParent(target, child, parent, levelOf(preflight, parent.sourceType) === 1);
        if (refused === undefined) {
          out.success++;
          out.log.push(`${pair}: parent set${state.parentKey ? ` (was under ${state.parentKey})` : ''}`);
          await record(child);
          return out;
        }
        why = `Jira refused it as the parent (${refused}).`;
        // After a refusal, the link may already be there from an attempt interrupted after it was written.
        if (plan.relatesType && hasIssueLink(state, plan.relatesType, parent.targetKey, true)) {
          out.success++;
          out.log.push(`${pair}: kept as a Relates link (${why})`);
          await record(child);
          return out;
        }
      }
      if (!plan.relatesType) {
        fail(out, child.sourceId, `${pair}: ${why} Jira has no Relates link type to keep it.`);
        return out;
      }
      await writeIssueLink(target, {
        type: plan.relatesType,
        subjectKey: parent.targetKey,
        objectKey: child.targetKey,
        comment: hierarchyNote(child, parent, why),
      });
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
const hierarchyUnits = async (ctx: PhaseContext) => (await planOf(ctx)).units.length;

export const hierarchyPhase: PhaseModule = {
  prepare: preparePlan,
  units: hierarchyUnits,
  open: openHierarchy,
  chunk: chunkFromUnits(openHierarchy, hierarchyUnits),
};
