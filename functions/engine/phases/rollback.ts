/**
 * Rollback of a run: the issues the run created deleted from Jira, and their id map entries with them, so the
 * project is as before the run and a later run creates them again; on the issues it did not create (found, or an
 * earlier run's), what it wrote taken back from its write journal (rollback-undo.ts: what it added removed, the
 * fields it changed restored). What stays and why is the domain's answer (#domain/rollback): an issue the run
 * found, one edited after the run (unless the admin includes those; one last changed while a later run of the
 * project was at work or being rolled back is listed as that run's), one with a sub-task that stays, another
 * run's; on an issue it did not create, a write changed in Jira after the run, and a status move.
 *
 * Two passes of the one phase shape (the runner's pool, checkpoints and pacing, DELETE's lane among them), its
 * units the run's migrated items with the lowest hierarchy level first:
 * - the preview reads each issue (reads only) and decides, keeping each block's decisions as an artifact;
 * - the rollback carries out the preview's decisions and reads nothing before: its own deletes move what it would
 *   read (a parent's `updated` moves when its child goes), and what the admin confirmed is the preview. Sub-tasks
 *   go before their parents (Jira deletes no issue while it has one, and this phase never asks it to take them
 *   along: `deleteSubtasks=false`); a parent Jira still refuses is kept, with the reason. Then, item by item, what
 *   the run wrote to the issues it did not create is taken back as the preview decided.
 * Safe to work again after a crash: an issue deleted already answers 404 and is counted gone, never anything
 * else deleted in its place (Jira does not reuse keys). `complete` takes back the sprints and components
 * the run made (its record, #phase-kit/made-in-jira) that no issue is left in: the preview counts
 * what each would hold once its deletes are done, the rollback asks Jira after them and deletes the empty ones
 * (one gone already answers 404); then it streams the blocks into the list (CSV) and keeps the counts.
 */

import { sourceIdFromLabel } from '#domain/mapping/index.ts';
import { emptyJournalSummary, journalCountsText, tallyUndo } from '#domain/rollback/journal.ts';
import type { LaterRun } from '#domain/rollback/later-runs.ts';
import {
  decideMade,
  type MadeDecision,
  type MadeInJira,
  refusedMade,
  tallyMade,
} from '#domain/rollback/made.ts';
import {
  decide,
  deletionOrder,
  emptyRollbackSummary,
  keptForSubtask,
  type RollbackDecision,
  type RollbackRules,
  rollbackCsv,
  tallyRollback,
} from '#domain/rollback/plan.ts';
import { madeIssues } from '#domain/rollback/request.ts';
import { CHUNK_SIZE } from '#domain/runs.ts';
import type { PhaseContext, PhaseModule, UnitOutcome } from '#phase-kit/context.ts';
import { emptyOutcome } from '#phase-kit/context.ts';
import { MadeInJiraRecord } from '#phase-kit/made-in-jira.ts';
import { blockUnits, ITEM_CONCURRENCY, inPool, runArtifactKey } from '#phase-kit/toolkit.ts';
import { journalled } from '#phase-kit/write-journal.ts';
import { nowIso } from '#platform/clock.ts';
import { artifactKeys } from '#store/artifact-store.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { carryOutUndo, planUndo } from './rollback-undo.ts';
import { jiraMessage } from './setup.ts';

const UNITS_ARTIFACT = 'rollback-units.json';

export interface RollbackOptions {
  /** Answer what would happen, write nothing. */
  preview: boolean;
  /** Delete issues edited after the run too. */
  includeEdited?: boolean;
}

/** The run's migrated items, lowest hierarchy level first (a slice of the manifest at a time), kept for the run. */
async function rollbackUnits(ctx: PhaseContext): Promise<number[]> {
  const { deps, run, preflight } = ctx;
  const key = runArtifactKey(run, UNITS_ARTIFACT);
  const saved = await deps.artifacts.get(key);
  if (saved) return JSON.parse(saved) as number[];
  const found: { id: number; level: number }[] = [];
  for await (const slice of preflight.manifest.slices()) {
    const known = await deps.store.idMap.getMany(
      run.tenantId,
      run.projectId,
      slice.map((m) => m.id),
    );
    for (const m of slice)
      if (known.has(m.id))
        found.push({ id: m.id, level: preflight.typeLevels[preflight.typeMap[m.type]?.name ?? ''] ?? 0 });
  }
  const units = deletionOrder(found).map((u) => u.id);
  await deps.artifacts.put(key, JSON.stringify(units));
  return units;
}

interface ReadIssue {
  updated: string;
  subtasks: string[];
  /** Its sprints' and components' ids, as `sprint 12`, `component 10001` (holdsKey). */
  holds: string[];
  /** The item it was migrated from (its `src-id-{N}` label), if any. */
  sourceId: number | undefined;
}

/** The issue as Jira answers it now; undefined: no such issue (deleted). */
async function readIssue(ctx: PhaseContext, key: string): Promise<ReadIssue | undefined> {
  const sprintField = ctx.preflight.sprintFieldId;
  try {
    const issue = await ctx.deps.target.getIssue(key, [
      'updated',
      'subtasks',
      'labels',
      'components',
      ...(sprintField ? [sprintField] : []),
    ]);
    const fields = (issue.fields ?? {}) as {
      updated?: string;
      subtasks?: { key: string }[];
      labels?: string[];
      components?: { id: string }[];
    } & Record<string, unknown>;
    const sprints =
      sprintField && Array.isArray(fields[sprintField]) ? (fields[sprintField] as unknown[]) : [];
    return {
      updated: String(fields.updated ?? ''),
      subtasks: (fields.subtasks ?? []).map((s) => s.key),
      holds: [
        ...sprints.map((s) => holdsKey('sprint', typeof s === 'object' && s ? (s as { id: unknown }).id : s)),
        ...(fields.components ?? []).map((c) => holdsKey('component', c.id)),
      ],
      sourceId: (fields.labels ?? []).map(sourceIdFromLabel).find((id) => id !== undefined),
    };
  } catch (err) {
    if (err instanceof TrackerHttpError && err.status === 404) return undefined;
    throw err;
  }
}

/** How a decision names a thing the issue is in: `sprint 12`. */
const holdsKey = (kind: MadeInJira['kind'], id: unknown) => `${kind} ${String(id)}`;

/**
 * The project's runs after this one that wrote to Jira, each from its start to its last write: its last checkpoint
 * (`updatedAt`; rolled back before this one, the checkpoint after its rollback's last block, whose writes come
 * before it). A change one of them made on this run's issues is told apart from a person's edit.
 */
async function laterRunsOf(ctx: PhaseContext): Promise<LaterRun[]> {
  const { deps, run } = ctx;
  const runs = await deps.store.runs.listByProject(run.tenantId, run.projectId);
  return runs
    .filter((r) => r.id !== run.id && r.createdAt > run.createdAt && madeIssues(r))
    .map((r) => ({
      id: r.id,
      from: r.startedAt ?? r.createdAt,
      to: r.updatedAt ?? r.finishedAt ?? nowIso(),
    }));
}

/** The preview's decisions for one block: read the block's issues (reads only), decide each item. */
async function planBlock(
  ctx: PhaseContext,
  ids: number[],
  entries: Map<number, IdMapEntry>,
  options: RollbackOptions,
): Promise<RollbackDecision[]> {
  const { run } = ctx;
  const rules: RollbackRules = {
    runId: run.id,
    endedAt: run.finishedAt ?? run.updatedAt ?? nowIso(),
    ...(options.includeEdited ? { includeEdited: true } : {}),
    laterRuns: await laterRunsOf(ctx),
  };
  const present = ids.flatMap((id) => entries.get(id) ?? []);
  const read = await inPool(present, ITEM_CONCURRENCY, (e) =>
    e.runId === run.id && e.origin === 'created' ? readIssue(ctx, e.targetKey) : Promise.resolve(undefined),
  );
  const withRead = present.map((e, i) => ({ e, issue: read[i] }));
  return inPool(withRead, ITEM_CONCURRENCY, async ({ e, issue }) => {
    const d = decide(e, issue, rules);
    // An issue the run did not create stays: what the run wrote to it is what there is to take back.
    if (journalled(run, e)) {
      const changes = await planUndo(ctx, e, rules, (key) => rolledBackToo(ctx, key, rules));
      return changes.length ? { ...d, changes } : d;
    }
    // Jira deletes no issue while it has a sub-task, and the rollback never takes one along: a sub-task the
    // rollback would not delete itself (somebody's, another run's, edited) keeps its parent.
    if (d.action !== 'delete') return d;
    for (const subtask of issue?.subtasks ?? [])
      if (!(await rolledBackToo(ctx, subtask, rules))) return keptForSubtask(d, subtask);
    return issue?.holds.length ? { ...d, holds: issue.holds } : d;
  });
}

/** Whether this rollback deletes the sub-task too: an issue of this run's creating (its label and id map). */
async function rolledBackToo(ctx: PhaseContext, key: string, rules: RollbackRules): Promise<boolean> {
  const { deps, run } = ctx;
  const issue = await readIssue(ctx, key);
  if (!issue) return true;
  const id = issue.sourceId;
  const entry =
    id === undefined
      ? undefined
      : (await deps.store.idMap.getMany(run.tenantId, run.projectId, [id])).get(id);
  if (!entry || entry.targetKey !== key) return false;
  return decide(entry, issue, rules).action === 'delete';
}

/** The rollback of one block as its preview planned it: level by level, sub-tasks before their parents. */
async function carryOut(
  ctx: PhaseContext,
  planned: RollbackDecision[],
  entries: Map<number, IdMapEntry>,
): Promise<RollbackDecision[]> {
  const { deps, preflight } = ctx;
  const levelOf = (id: number) =>
    preflight.typeLevels[preflight.typeMap[entries.get(id)?.sourceType ?? '']?.name ?? ''] ?? 0;
  const done = new Map(planned.map((d) => [d.sourceId, d]));
  const levels = [...new Set(planned.map((d) => levelOf(d.sourceId)))].sort((a, b) => a - b);
  for (const level of levels) {
    const toDelete = planned.filter((d) => d.action === 'delete' && levelOf(d.sourceId) === level);
    await inPool(toDelete, ITEM_CONCURRENCY, async (d) => {
      try {
        if ((await deps.target.deleteIssue(d.key)) === 'gone')
          done.set(d.sourceId, { ...d, action: 'gone', reason: 'no longer in Jira' });
      } catch (err) {
        // Jira keeps an issue while it has a sub-task: one somebody added, or one this rollback keeps.
        if (
          err instanceof TrackerHttpError &&
          err.status === 400 &&
          /subtask/i.test(JSON.stringify(err.body))
        ) {
          const subtask = (await readIssue(ctx, d.key))?.subtasks[0] ?? 'a sub-task';
          done.set(d.sourceId, keptForSubtask(d, subtask));
          return;
        }
        throw err;
      }
    });
  }
  // Then what the run wrote to the issues it did not create, item by item, as the preview decided.
  await inPool(
    planned.filter((d) => d.changes?.length),
    ITEM_CONCURRENCY,
    async (d) => {
      done.set(d.sourceId, { ...d, changes: await carryOutUndo(ctx, d.sourceId, d.changes ?? []) });
    },
  );
  return planned.map((d) => done.get(d.sourceId) ?? d);
}

/** An item's changes in a few words, for its log line: `3 comments would be removed, 1 field restored`. */
function changesText(d: RollbackDecision, preview: boolean): string {
  if (!d.changes?.length) return '';
  const counts = emptyJournalSummary();
  for (const c of d.changes) tallyUndo(counts, c);
  return journalCountsText(counts, preview, 'on it');
}

/**
 * Works the block of units starting at `from`. The preview decides from the issues as they are; the rollback
 * carries out the preview's decisions and reads nothing first: its own deletes change what it would read (a
 * parent's `updated` moves when its child goes), and what the admin confirmed is the preview.
 */
async function rollbackBlock(
  ctx: PhaseContext,
  units: number[],
  from: number,
  options: RollbackOptions,
): Promise<UnitOutcome> {
  const { deps, run } = ctx;
  const ids = units.slice(from, from + CHUNK_SIZE);
  const n = Math.floor(from / CHUNK_SIZE);
  const outcome = emptyOutcome();
  const entries = await deps.store.idMap.getMany(run.tenantId, run.projectId, ids);
  let decisions: RollbackDecision[];
  if (options.preview) decisions = await planBlock(ctx, ids, entries, options);
  else {
    const saved = await deps.artifacts.get(artifactKeys.rollbackBlock(run.tenantId, run.id, n, true));
    if (!saved) throw new Error(`rollback of run ${run.id}: no preview of block ${n} to carry out`);
    decisions = await carryOut(ctx, JSON.parse(saved) as RollbackDecision[], entries);
  }
  const forget: number[] = [];
  for (const d of decisions) {
    if (d.action === 'delete') {
      outcome.success++;
      outcome.log.push(`#${d.sourceId} ${d.key}: ${options.preview ? 'would delete' : 'deleted'}`);
    } else {
      outcome.skipped++;
      outcome.log.push(`#${d.sourceId} ${d.key}: ${d.reason ?? d.action}${changesText(d, options.preview)}`);
    }
    const entry = entries.get(d.sourceId);
    const ours = entry?.runId === run.id && entry.origin === 'created';
    if (!options.preview && ours && (d.action === 'delete' || d.action === 'gone')) forget.push(d.sourceId);
  }
  // After the deletes: a crash before this works the block again, and the deleted issues answer 404 (gone).
  if (forget.length > 0) await deps.store.idMap.deleteMany(run.tenantId, run.projectId, forget);
  await deps.artifacts.put(
    artifactKeys.rollbackBlock(run.tenantId, run.id, n, options.preview),
    JSON.stringify(decisions),
  );
  return outcome;
}

async function* keptDecisions(
  ctx: PhaseContext,
  blocks: number,
  preview: boolean,
): AsyncGenerator<RollbackDecision> {
  for (let n = 0; n < blocks; n++) {
    const saved = await ctx.deps.artifacts.get(
      artifactKeys.rollbackBlock(ctx.run.tenantId, ctx.run.id, n, preview),
    );
    if (saved) yield* JSON.parse(saved) as RollbackDecision[];
  }
}

/** How many issues a thing the run made holds now; undefined: it is no longer in Jira. */
async function issuesIn(ctx: PhaseContext, m: MadeInJira & { id: string }): Promise<number | undefined> {
  const { target } = ctx.deps;
  if (m.kind === 'sprint') return (await target.sprintIssueKeys(Number(m.id)))?.length;
  return target.componentIssueCount(m.id);
}

async function deleteMade(ctx: PhaseContext, m: MadeInJira & { id: string }): Promise<'deleted' | 'gone'> {
  const { target } = ctx.deps;
  if (m.kind === 'sprint') return target.deleteSprint(Number(m.id));
  return target.deleteComponent(m.id);
}

/**
 * The sprints and components the run made, each decided (and, in the rollback, removed once empty).
 * The preview counts how many of each one's issues its deletes take out (`holds` on its delete decisions); the
 * rollback, after its deletes, asks Jira what each holds now. One the record holds without an id (its create's
 * answer never recorded, the preflight never worked again) is not known to be there, and is left alone.
 */
async function takeBackMade(ctx: PhaseContext, blocks: number, preview: boolean): Promise<MadeDecision[]> {
  const { run } = ctx;
  const record = await MadeInJiraRecord.open(ctx.deps.artifacts, { tenantId: run.tenantId, runId: run.id });
  const made = record.entries.filter((m): m is MadeInJira & { id: string } => m.id !== null);
  if (made.length === 0) return [];
  const leaving = new Map<string, number>();
  if (preview)
    for await (const d of keptDecisions(ctx, blocks, true))
      if (d.action === 'delete') for (const h of d.holds ?? []) leaving.set(h, (leaving.get(h) ?? 0) + 1);
  return inPool(made, ITEM_CONCURRENCY, async (m) => {
    const d = decideMade(m, await issuesIn(ctx, m), leaving.get(holdsKey(m.kind, m.id)) ?? 0);
    if (preview || d.action !== 'remove') return d;
    try {
      return (await deleteMade(ctx, m)) === 'gone'
        ? { ...d, action: 'gone', reason: 'no longer in Jira' }
        : d;
    } catch (err) {
      // Refused (no permission to manage sprints, say): the issues are deleted already; this one is kept, said.
      if (err instanceof TrackerHttpError && [400, 403].includes(err.status))
        return refusedMade(d, jiraMessage(err));
      throw err;
    }
  });
}

export function rollbackPhase(options: RollbackOptions): PhaseModule {
  return {
    units: async (ctx) => (await rollbackUnits(ctx)).length,
    open: async (ctx) => {
      const units = await rollbackUnits(ctx);
      const work = blockUnits(units.length, (from) => rollbackBlock(ctx, units, from, options));
      return { work: (index) => work(index) };
    },
    complete: async (ctx) => {
      const { deps, run } = ctx;
      const blocks = Math.ceil((await rollbackUnits(ctx)).length / CHUNK_SIZE);
      const summary = emptyRollbackSummary();
      const made = await takeBackMade(ctx, blocks, options.preview);
      for (const m of made) tallyMade(summary, m);
      async function* counted(): AsyncGenerator<RollbackDecision> {
        for await (const d of keptDecisions(ctx, blocks, options.preview)) {
          tallyRollback(summary, d);
          yield d;
        }
      }
      await deps.artifacts.putStream(
        artifactKeys.rollbackList(run.tenantId, run.id, options.preview),
        rollbackCsv(counted(), options.preview, made),
      );
      await deps.artifacts.put(
        artifactKeys.rollbackSummary(run.tenantId, run.id, options.preview),
        JSON.stringify({ preview: options.preview, ...summary }),
      );
    },
  };
}
