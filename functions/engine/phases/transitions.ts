/**
 * Phase 6: each migrated issue to the Jira status its Azure DevOps state maps to.
 *
 * - Units: the manifest items the id map knows (created or found), in manifest order; in a run delivered by
 *   Jira's importer, only those it created by REST (import-outside.ts): an imported issue's status is its file's.
 * - The state map (`mapStates` over the ADO types' states and the project's statuses, with the run's state
 *   overrides over the project's confirmed states, and the site's resolutions) is computed once and kept as a run artifact, with each issue type's
 *   done statuses.
 * - Per item: its current ADO state (the chunk's items read in one call), the issue's current status read from
 *   Jira (so working a chunk again after a crash moves nothing twice), then the walk of `moveIssue`.
 * - Already there: skipped. Unreachable: a warning, skipped, never a failure. Jira refusing: a failure for the
 *   item; the run goes on. The issue type's resolution is sent on the last step only, when the mapping asks
 *   for one (Removed: "Won't Do") and the step enters a done status.
 * - An issue the run did not create has the move journalled first (#phase-kit/write-journal.ts): a rollback does
 *   not move it back (Jira's workflow decides the way, and its history stays), but lists it.
 */
import { mapStates, type StateMapping } from '#domain/mapping/index.ts';
import type { JournalRecord } from '#domain/rollback/journal.ts';
import { PHASES } from '#domain/runs.ts';
import type { PhaseContext, PhaseModule, UnitWorker } from '#phase-kit/context.ts';
import {
  blockReads,
  type ItemResult,
  manifestIdList,
  migratedUnits,
  refusalOf,
  runArtifactKey,
  unitResult,
} from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { deliveredByImport, restUnits } from './import-outside.ts';
import { currentStatus, moveIssue, WorkflowGraphs } from './transitions-graph.ts';

export interface StatePlan {
  mapping: StateMapping;
  /** Jira issue type name (lower case) -> its workflow's done-category status names. */
  doneStatuses: Record<string, string[]>;
}

const UNITS_ARTIFACT = 'transitions-units.json';
const STATE_MAP_ARTIFACT = 'state-map.json';
const GRAPH_ARTIFACT = 'transition-graphs.json';
/** What a unit reads of its item: its type and state, not its descriptions. */
const STATE_FIELDS = ['System.WorkItemType', 'System.State'] as const;

/** The site's resolution names; Jira Cloud's defaults (inside mapStates) when they cannot be read. */
async function siteResolutions(ctx: PhaseContext): Promise<string[] | undefined> {
  try {
    const names = (await ctx.deps.target.resolutions()).map((r) => r.name).filter(Boolean);
    return names.length ? names : undefined;
  } catch (err) {
    if (refusalOf(err) === undefined) throw err;
    return undefined;
  }
}

/** The run's state map, computed on first use and kept as an artifact. */
export async function statePlan(ctx: PhaseContext): Promise<StatePlan> {
  const { deps, run, preflight } = ctx;
  const key = runArtifactKey(run, STATE_MAP_ARTIFACT);
  const saved = await deps.artifacts.get(key);
  if (saved) return JSON.parse(saved) as StatePlan;
  const seen = new Set<string>();
  for await (const slice of preflight.manifest.slices()) for (const m of slice) seen.add(m.type);
  const types = [...seen].filter((t) => preflight.typeMap[t]);
  const states = await Promise.all(types.map(async (t) => [t, await deps.source.states(t)] as const));
  const statuses = await deps.target.projectStatuses(preflight.projectKey);
  const resolutions = await siteResolutions(ctx);
  const mapping = mapStates(Object.fromEntries(states), statuses, preflight.typeMap, {
    overrides: run.options.stateOverrides ?? {},
    ...(preflight.mappings ? { confirmed: preflight.mappings.states } : {}),
    ...(resolutions ? { resolutions } : {}),
  });
  const plan: StatePlan = {
    mapping,
    doneStatuses: Object.fromEntries(
      statuses.map((t) => [
        t.name.trim().toLowerCase(),
        t.statuses.filter((s) => s.statusCategory?.key === 'done').map((s) => s.name),
      ]),
    ),
  };
  await deps.artifacts.put(key, JSON.stringify(plan));
  return plan;
}

/**
 * The phase's units: the items in Jira; in a dry run every manifest item, as one it would create has no issue
 * yet but its state's mapping (and any state without a status) belongs in the preview all the same. A run
 * delivered by Jira's importer: only the items it writes by REST after the import (import-outside.ts), an
 * imported issue's status being its file's.
 */
const unitsOf = (ctx: PhaseContext): Promise<number[]> =>
  deliveredByImport(ctx)
    ? restUnits(ctx)
    : ctx.run.options.dryRun
      ? manifestIdList(ctx.preflight.manifest)
      : migratedUnits(ctx, UNITS_ARTIFACT);

export async function transitionsUnits(ctx: PhaseContext): Promise<number> {
  const units = await unitsOf(ctx);
  // Known before the first chunk: its warnings are logged there.
  if (units.length > 0) await statePlan(ctx);
  return units.length;
}

/** The phase's units one at a time; the ADO states and id map entries read 50 items a call (blockReads). */
export async function openTransitions(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run } = ctx;
  const { store, source, target } = deps;
  const units = await unitsOf(ctx);
  const plan = await statePlan(ctx);
  const graphs = await WorkflowGraphs.load(deps.artifacts, runArtifactKey(run, GRAPH_ARTIFACT));
  const dryRun = run.options.dryRun === true;
  const journal = WriteJournal.of(ctx);
  const block = blockReads(async (from, to) => {
    const ids = units.slice(from, to);
    const entries = await store.idMap.getMany(run.tenantId, run.projectId, ids);
    const items = new Map<number, AdoWorkItem>(
      (await source.workItems(ids, { fields: STATE_FIELDS })).map((i) => [i.id, i]),
    );
    return { entries, items };
  }, units.length);

  const one = async (index: number, id: number): Promise<ItemResult> => {
    const { entries, items } = await block(index);
    const entry = entries.get(id);
    if (!entry && !dryRun) return { kind: 'skipped', line: `#${id}: not in the id map: skipped` };
    const label = `#${id} ${entry?.targetKey ?? '(new issue)'}`;
    const item = items.get(id);
    if (!item) return { kind: 'skipped', line: `${label}: no longer in Azure DevOps: skipped` };
    const type = String(item.fields['System.WorkItemType'] ?? entry?.sourceType);
    const state = String(item.fields['System.State'] ?? '');
    const wanted = plan.mapping.map[type]?.[state];
    if (!wanted) {
      const warning = `"${type}" state "${state}" has no Jira status: left as it is (skipped)`;
      return { kind: 'skipped', line: `${label}: warning: ${warning}`, warnings: [warning] };
    }
    // A dry run's new issue: its workflow can only be learnt on an issue, so the target status is the answer.
    if (!entry) return { kind: 'success', line: `${label} ${state}: would move to "${wanted.status.name}"` };
    const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
    // The move's record, and the status it is from: forgotten when the issue never left it.
    let intent = { records: [] as JournalRecord[], from: '' };
    try {
      const issue = await target.getIssue(entry.targetKey, ['status', 'issuetype']);
      const from = String((issue.fields?.status as { name?: string } | undefined)?.name ?? '');
      const issueType = String((issue.fields?.issuetype as { name?: string } | undefined)?.name ?? '');
      if (!same(from, wanted.status.name))
        intent = {
          records: await journal.intend(entry, PHASES.transitions, [
            { kind: 'status', from, to: wanted.status.name },
          ]),
          from,
        };
      const moved = await moveIssue(target, graphs, {
        issueKey: entry.targetKey,
        issueType,
        from,
        target: wanted,
        doneStatuses: plan.doneStatuses[issueType.trim().toLowerCase()] ?? [],
        dryRun,
      });
      const notes = moved.warnings.map((w) => `; warning: ${w}`).join('');
      const resolution = wanted.resolution ? ` (resolution ${wanted.resolution})` : '';
      if (moved.outcome === 'already')
        return { kind: 'skipped', line: `${label} ${state}: already "${from}": skipped` };
      if (moved.outcome === 'unreachable') {
        const warning = `"${wanted.status.name}" is unreachable from "${from}" in the ${issueType} workflow: left in "${moved.status}"${moved.path.length > 1 ? ` after exploring ${moved.path.join(' -> ')}` : ''} (skipped)`;
        return {
          kind: 'skipped',
          line: `${label} ${state}: warning: ${warning}${notes}`,
          warnings: [warning, ...moved.warnings],
        };
      }
      return {
        kind: 'success',
        line: `${label} ${state}: ${dryRun ? 'would move ' : ''}${moved.path.join(' -> ')}${dryRun && moved.path.length === 1 ? ` -> "${wanted.status.name}"` : ''}${resolution}${notes}`,
        warnings: moved.warnings,
      };
    } catch (err) {
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      // Where it stopped, for the report (best effort: the issue may be what Jira refused).
      const at = await currentStatus(target, entry.targetKey).catch(() => undefined);
      // Refused before any move (the issue still in its status before): no move to list.
      if (at !== undefined && same(at, intent.from)) await journal.forget(intent.records);
      return {
        kind: 'failure',
        reason,
        line: `${label} ${state}: failed on the way to "${wanted.status.name}"${at ? ` (now "${at}")` : ''}: ${reason}`,
      };
    }
  };

  return {
    work: async (index) => {
      const id = units[index] as number;
      const out = unitResult(id, await one(index, id));
      // Known before the first unit: the state map's warnings are logged there.
      if (index === 0) {
        out.log.unshift(...plan.mapping.warnings.map((w) => `warning: ${w}`));
        out.warnings.unshift(...plan.mapping.warnings);
      }
      return out;
    },
    close: () => graphs.save(),
  };
}

export const transitionsPhase: PhaseModule = {
  units: transitionsUnits,
  open: openTransitions,
};
