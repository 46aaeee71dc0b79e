/**
 * Phase 2 of a run delivered by Jira's importer, in place of the create phase (docs/jira-import.md). Its
 * `prepare` builds and plans the import files (import-build.ts), then takes the batches in order, each file
 * written when the run reaches its batch (so it names the issues of the batches before by key): a batch Jira does not
 * hold whole yet pauses the run with the reason ("Waiting for the Jira import of batch 3 of 14 ..."), the
 * admin imports the file and resumes the run; a batch found whole by its label (`tms-import-{runId}-{n}`) has
 * each issue recorded in the id map (created by this run), the copies a second import made deleted (the first
 * kept: the one the id map names, else the lowest key), and its issues moved into their sprints. The phase's
 * units are the manifest's items, each told as imported, skipped (in Jira before the run) or failed (left out of
 * the files), so the run's counters read as the create phase's. `complete` brings the sprints to their states.
 * An INCREMENTAL run updates by REST the items an earlier run put in Jira, as the create phase does (update.ts):
 * their fields now, their status and new comments in the REST phases (`knownUnits`).
 */
import * as z from 'zod';
import { awaitingImport, type BatchCheck, checkBatch, type ImportIndex } from '#domain/jira-import/index.ts';
import type { ManifestItem } from '#domain/manifest.ts';
import { sourceIdFromLabel, sourceIdLabel } from '#domain/mapping/index.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import {
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { blockReads, noteInto, refusalOf, runArtifactKey } from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import type { JiraIssue } from '#trackers/jira/client.ts';
import { BULK_CREATE_MAX, SPRINT_ASSIGN_MAX } from '#trackers/jira/client.ts';
import { descriptionContextFor } from './description-context.ts';
import { buildImportFiles, builtBlock, SPRINTS_ARTIFACT, writeBatchFile } from './import-build.ts';
import { recordRestUnits } from './import-outside.ts';
import { issueFieldsFor } from './issue-payload.ts';
import { completeSprints, PlacementIndex } from './sprints.ts';
import { updateKnownItems } from './update.ts';

const PROGRESS_ARTIFACT = 'import-batches.json';
/** Below this much of the invocation's time, no batch is taken up: the next invocation goes on from it. */
const BATCH_BUDGET_MS = 20_000;

/** What the run made of its batches so far, kept as a run artifact (parsed on read). */
const ImportProgressSchema = z.object({
  /** Batches found whole and recorded, from 1. */
  verified: z.number().int().min(0),
  /** Second copies of an item: deleted, or left (Jira refused) and named for removal by hand. */
  copies: z.array(
    z.object({
      sourceId: z.number(),
      kept: z.string(),
      deleted: z.array(z.string()),
      left: z.array(z.object({ key: z.string(), reason: z.string() })),
    }),
  ),
  /** Every batch looked at again once the last was recorded (a file imported again meanwhile). */
  swept: z.boolean().optional(),
  /**
   * The sub-tasks no file holds, their parent in Jira before the run: created by REST (`outside.done`), and those
   * Jira refused, with its reason.
   */
  outside: z
    .object({
      done: z.boolean(),
      failed: z.array(z.object({ sourceId: z.number(), reason: z.string() })),
    })
    .optional(),
});
type ImportProgress = z.infer<typeof ImportProgressSchema>;

async function progressOf(ctx: PhaseContext): Promise<ImportProgress> {
  const text = await ctx.deps.artifacts.get(runArtifactKey(ctx.run, PROGRESS_ARTIFACT));
  return text ? ImportProgressSchema.parse(JSON.parse(text)) : { verified: 0, copies: [] };
}

/** Each imported item's sprint, as import-build.ts keeps it (source id -> sprint id). */
const SprintsSchema = z.array(z.tuple([z.number(), z.number()]));

async function indexOf(ctx: PhaseContext): Promise<ImportIndex> {
  const index = await new ImportFileArchive(ctx.deps.artifacts).index(ctx.run.tenantId, ctx.run.id);
  if (!index) throw new Error(`the import files of run ${ctx.run.id} are not built`);
  return index;
}

/** The issues Jira holds with the batch's label (labels, type: a sub-task's copy is deleted before its parent's). */
async function labelled(ctx: PhaseContext, label: string): Promise<JiraIssue[]> {
  const key = ctx.preflight.projectKey.replaceAll('"', '');
  return ctx.deps.target.search(`project = "${key}" AND labels = "${label.replaceAll('"', '')}"`, {
    fields: ['labels', 'issuetype'],
  });
}

/**
 * The batch as Jira holds it (its labelled issues) against what the id map recorded of this run's items; with the
 * batch's id map entries and the keys this run recorded.
 */
async function checkedBatch(ctx: PhaseContext, batch: ImportIndex['batches'][number], issues: JiraIssue[]) {
  const { deps, run } = ctx;
  const entries = await deps.store.idMap.getMany(run.tenantId, run.projectId, batch.sourceIds);
  const recorded = new Map(
    [...entries.values()].filter((e) => e.runId === run.id).map((e) => [e.sourceId, e.targetKey]),
  );
  const check: BatchCheck = checkBatch(
    batch.sourceIds,
    issues.map((i) => ({ key: i.key, id: i.id, labels: (i.fields?.labels as string[] | undefined) ?? [] })),
    recorded,
  );
  return { check, entries, recorded };
}

/**
 * The copies a second import of the batch made, deleted by REST (the service's own account: they are the run's
 * issues, made through the admin's import), sub-tasks before their parents. A copy Jira refuses to delete is
 * kept in the list with the reason, for the run's report: never left silently.
 */
async function removeCopies(
  ctx: PhaseContext,
  check: BatchCheck,
  issues: readonly JiraIssue[],
): Promise<ImportProgress['copies']> {
  const subtask = new Set(
    issues
      .filter((i) => (i.fields?.issuetype as { subtask?: boolean } | undefined)?.subtask)
      .map((i) => i.key),
  );
  const all = check.duplicates.flatMap((d) => d.extra.map((e) => ({ sourceId: d.sourceId, key: e.key })));
  const ordered = [...all.filter((c) => subtask.has(c.key)), ...all.filter((c) => !subtask.has(c.key))];
  const done = new Map<string, string | undefined>();
  for (const copy of ordered) {
    try {
      await ctx.deps.target.deleteIssue(copy.key);
      done.set(copy.key, undefined);
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal === undefined) throw err;
      done.set(copy.key, refusal);
    }
  }
  return check.duplicates.map((d) => ({
    sourceId: d.sourceId,
    kept: d.kept,
    deleted: d.extra.filter((e) => done.get(e.key) === undefined).map((e) => e.key),
    left: d.extra.flatMap((e) => {
      const reason = done.get(e.key);
      return reason === undefined ? [] : [{ key: e.key, reason }];
    }),
  }));
}

/** The batch's issues into their sprints (the file names none), at most 50 a call; a refusal is a line. */
async function placeInSprints(
  ctx: PhaseContext,
  found: BatchCheck['found'],
  sprintOf: ReadonlyMap<number, number>,
): Promise<string[]> {
  const bySprint = new Map<number, string[]>();
  for (const f of found) {
    const sprint = sprintOf.get(f.sourceId);
    if (sprint !== undefined) bySprint.set(sprint, [...(bySprint.get(sprint) ?? []), f.key]);
  }
  const lines: string[] = [];
  for (const [sprint, keys] of bySprint)
    for (let i = 0; i < keys.length; i += SPRINT_ASSIGN_MAX) {
      const part = keys.slice(i, i + SPRINT_ASSIGN_MAX);
      try {
        await ctx.deps.target.moveToSprint(sprint, part);
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal === undefined) throw err;
        const name = ctx.preflight.sprints.find((s) => s.id === sprint)?.name ?? String(sprint);
        lines.push(`sprint "${name}" took none of ${part.join(', ')}: ${refusal}`);
      }
    }
  return lines;
}

/**
 * Takes the batches not yet recorded, in order. A batch Jira does not hold whole pauses the run (the interrupt's
 * `import-awaited`: engine/control.ts); a whole one is recorded. True once every batch is; false when the
 * invocation's time runs low first.
 */
async function verifyBatches(ctx: PhaseContext, remainingMs: () => number): Promise<boolean> {
  const { deps, run, invocation } = ctx;
  const index = await indexOf(ctx);
  const progress = await progressOf(ctx);
  const total = index.batches.length;
  let sprintOf: Map<number, number> | undefined;
  let typeOf: Map<number, string> | undefined;
  for (let n = progress.verified + 1; n <= total; n++) {
    if (remainingMs() < BATCH_BUDGET_MS) return false;
    const batch = index.batches[n - 1] as ImportIndex['batches'][number];
    // The batch's file, written now that the batches before are in Jira: it names their issues by key.
    await writeBatchFile(ctx, index, n);
    const issues = await labelled(ctx, batch.label);
    const { check, entries, recorded } = await checkedBatch(ctx, batch, issues);
    if (check.missing.length > 0) {
      invocation.interrupt.abort({
        kind: 'import-awaited',
        batch: n,
        message: awaitingImport(run.id, n, total, check.missing, batch.sourceIds.length),
      });
      invocation.interrupt.throwIfVoided();
    }
    typeOf ??= await manifestTypes(ctx);
    const types = typeOf;
    await deps.store.idMap.putMany(
      run.tenantId,
      run.projectId,
      check.found
        .filter((f) => recorded.get(f.sourceId) !== f.key)
        .map((f) => ({
          sourceId: f.sourceId,
          targetKey: f.key,
          targetId: f.id,
          sourceType: types.get(f.sourceId) ?? entries.get(f.sourceId)?.sourceType ?? '',
          origin: 'created' as const,
          runId: run.id,
          phasesDone: [PHASES.create],
          updatedAt: nowIso(),
        })),
    );
    deps.crash?.('after-id-map');
    const copies = await removeCopies(ctx, check, issues);
    sprintOf ??= new Map(
      SprintsSchema.parse(
        JSON.parse((await deps.artifacts.get(runArtifactKey(run, SPRINTS_ARTIFACT))) ?? '[]'),
      ),
    );
    const sprintLines = await placeInSprints(ctx, check.found, sprintOf);
    progress.verified = n;
    progress.copies.push(...copies);
    deps.crash?.('before-checkpoint');
    await deps.artifacts.put(runArtifactKey(run, PROGRESS_ARTIFACT), JSON.stringify(progress));
    // The batch is in Jira: its file's copies are needed no more (a crash before this leaves them to the end).
    await new ImportFileArchive(deps.artifacts).removeCopies(run.tenantId, run.id, n);
    const deleted = copies.flatMap((c) => c.deleted);
    const left = copies.flatMap((c) => c.left.map((l) => l.key));
    await deps.journal.log(
      run,
      `Batch ${n} of ${total} is in Jira: ${check.found.length} issues recorded` +
        (deleted.length ? `; imported twice: second copies ${deleted.join(', ')} deleted` : '') +
        (left.length ? `; second copies ${left.join(', ')} could not be deleted: remove them in Jira` : '') +
        (check.strangers.length
          ? `; ${check.strangers.join(', ')} carry the label but no item of the batch`
          : '') +
        sprintLines.map((l) => `; ${l}`).join(''),
    );
  }
  if (progress.swept || total === 0) return true;
  if (!(await sweepBatches(ctx, index, progress, remainingMs))) return false;
  progress.swept = true;
  await deps.artifacts.put(runArtifactKey(run, PROGRESS_ARTIFACT), JSON.stringify(progress));
  return true;
}

/**
 * Once the last batch is recorded, every batch is searched once more by its label: a file imported again after its
 * batch was checked (during a later batch's pause) left copies no earlier check saw, deleted now as the check
 * deletes them. A copy Jira already refused to delete is named already, not tried again. Idempotent: a search
 * after a deletion finds the copy gone. False when the invocation's time runs low first.
 */
async function sweepBatches(
  ctx: PhaseContext,
  index: ImportIndex,
  progress: ImportProgress,
  remainingMs: () => number,
): Promise<boolean> {
  const { deps, run } = ctx;
  const total = index.batches.length;
  const named = new Set(progress.copies.flatMap((c) => c.left.map((l) => l.key)));
  for (const batch of index.batches) {
    if (remainingMs() < BATCH_BUDGET_MS) return false;
    const issues = await labelled(ctx, batch.label);
    if (issues.length <= batch.sourceIds.length) continue;
    const { check } = await checkedBatch(ctx, batch, issues);
    check.duplicates = check.duplicates
      .map((d) => ({ ...d, extra: d.extra.filter((e) => !named.has(e.key)) }))
      .filter((d) => d.extra.length > 0);
    if (check.duplicates.length === 0) continue;
    const copies = await removeCopies(ctx, check, issues);
    for (const copy of copies) {
      const known = progress.copies.find((c) => c.sourceId === copy.sourceId);
      if (!known) progress.copies.push(copy);
      else {
        known.deleted.push(...copy.deleted);
        known.left.push(...copy.left);
      }
    }
    const deleted = copies.flatMap((c) => c.deleted);
    const left = copies.flatMap((c) => c.left.map((l) => l.key));
    await deps.journal.log(
      run,
      `Batch ${batch.number} of ${total} was imported again after its check` +
        (deleted.length ? `: second copies ${deleted.join(', ')} deleted` : '') +
        (left.length ? `; second copies ${left.join(', ')} could not be deleted: remove them in Jira` : ''),
    );
  }
  return true;
}

/** Each manifest item's ADO type (ids and type names: small beside the manifest's slices). */
async function manifestTypes(ctx: PhaseContext): Promise<Map<number, string>> {
  const types = new Map<number, string>();
  for await (const slice of ctx.preflight.manifest.slices()) for (const m of slice) types.set(m.id, m.type);
  return types;
}

/** The ids it set out to create: found by their label after a crash, they are the run's own. */
const OUTSIDE_INTENT_ARTIFACT = 'import-outside-intent.json';

/**
 * The sub-tasks no file can hold because their parent is not among the run's issues, but in Jira before the run
 * (the id map names it: an earlier run's), created by REST under that parent as the create phase creates them
 * (issueFieldsFor: their fields, description and `parent`), once every batch is in. The importer creates no
 * sub-task without its parent in the same file, and a parent already in Jira cannot be in one. Their status and
 * comments then come from the transitions and comments phases, which a run delivered by import works for these
 * items (and those an incremental run updates: `knownUnits`) only (`restUnits`). A sub-task whose parent is not
 * in Jira either is not tried: it fails with the reason the files left it out (a REST run's create of it is
 * refused for the same reason: Jira takes no sub-task without its parent); one Jira refuses fails with Jira's
 * reason. Idempotent: the intent is written before the
 * create, and an intended item found by its `src-id-N` label after a crash is recorded as the run's own; one
 * found by its label and never intended was in Jira before the run (recorded as found, and skipped).
 */
async function createOutsideParents(ctx: PhaseContext, progress: ImportProgress): Promise<void> {
  const { deps, run, preflight } = ctx;
  if (progress.outside?.done) return;
  const index = await indexOf(ctx);
  const leftOut = new Set(index.leftOut.map((l) => l.sourceId));
  const failed: { sourceId: number; reason: string }[] = [];
  const created: number[] = [];
  if (leftOut.size > 0) {
    const items: ManifestItem[] = [];
    for await (const slice of preflight.manifest.slices())
      for (const m of slice) if (leftOut.has(m.id)) items.push(m);
    const entries = await deps.store.idMap.getMany(run.tenantId, run.projectId, [
      ...items.map((m) => m.id),
      ...items.flatMap((m) => (m.parentId === null ? [] : [m.parentId])),
    ]);
    // Those recorded already (an invocation before this one) are done.
    for (const m of items) {
      const known = entries.get(m.id);
      if (known?.runId === run.id && known.origin === 'created') created.push(m.id);
    }
    const todo = items.filter((m) => !entries.has(m.id) && m.parentId !== null && entries.has(m.parentId));
    const intentKey = runArtifactKey(run, OUTSIDE_INTENT_ARTIFACT);
    const intended = new Set<number>(JSON.parse((await deps.artifacts.get(intentKey)) ?? '[]') as number[]);
    for (let i = 0; i < todo.length; i += BULK_CREATE_MAX) {
      const part = todo.slice(i, i + BULK_CREATE_MAX);
      const labelled = await deps.target.findByLabels(
        preflight.projectKey,
        part.map((m) => sourceIdLabel(m.id)),
      );
      const found = new Map<number, JiraIssue>();
      for (const issue of labelled)
        for (const label of (issue.fields?.labels as string[] | undefined) ?? []) {
          const id = sourceIdFromLabel(label);
          if (id !== undefined && !found.has(id)) found.set(id, issue);
        }
      const entry = (m: ManifestItem, issue: { key: string; id: string }, origin: 'created' | 'found') => ({
        sourceId: m.id,
        targetKey: issue.key,
        targetId: issue.id,
        sourceType: m.type,
        origin,
        runId: run.id,
        phasesDone: origin === 'created' ? [PHASES.create, PHASES.hierarchy] : [PHASES.create],
        updatedAt: nowIso(),
      });
      await deps.store.idMap.putMany(
        run.tenantId,
        run.projectId,
        part.flatMap((m) => {
          const hit = found.get(m.id);
          return hit ? [entry(m, hit, intended.has(m.id) ? 'created' : 'found')] : [];
        }),
      );
      for (const m of part) if (found.has(m.id) && intended.has(m.id)) created.push(m.id);
      const make = part.filter((m) => !found.has(m.id));
      if (make.length === 0) continue;
      const sources = new Map(
        (
          await deps.source.workItems(
            make.map((m) => m.id),
            { expand: 'relations' },
          )
        ).map((w) => [w.id, w]),
      );
      const describe = await descriptionContextFor(ctx, [...sources.values()]);
      const placement = new PlacementIndex(preflight);
      const notes = emptyOutcome();
      const payloads = make.map((m) =>
        issueFieldsFor(
          preflight,
          sources.get(m.id) as AdoWorkItem,
          m,
          entries.get(m.parentId as number),
          noteInto(notes, m.id),
          placement.of(sources.get(m.id) as AdoWorkItem, () => undefined),
          describe,
        ),
      );
      for (const m of make) intended.add(m.id);
      await deps.artifacts.put(intentKey, JSON.stringify([...intended]));
      const result = await deps.target.bulkCreate(payloads.map((p) => ({ fields: p.fields })));
      const refused = new Map(result.errors.map((e) => [e.failedElementNumber, e]));
      let next = 0;
      const made: ReturnType<typeof entry>[] = [];
      make.forEach((m, at) => {
        const error = refused.get(at);
        if (error) {
          const reason =
            [
              ...(error.elementErrors?.errorMessages ?? []),
              ...Object.entries(error.elementErrors?.errors ?? {}).map(([k, v]) => `${k}: ${v}`),
            ].join('; ') || 'rejected by Jira';
          failed.push({ sourceId: m.id, reason });
          return;
        }
        const issue = result.issues[next++];
        if (issue) made.push(entry(m, issue, 'created'));
      });
      await deps.store.idMap.putMany(run.tenantId, run.projectId, made);
      created.push(...made.map((e) => e.sourceId));
    }
  }
  await recordRestUnits(ctx, await knownUnits(ctx, new Set(created)));
  progress.outside = { done: true, failed };
  await deps.artifacts.put(runArtifactKey(run, PROGRESS_ARTIFACT), JSON.stringify(progress));
  if (created.length + failed.length > 0)
    await deps.journal.log(
      run,
      `Sub-tasks whose parent was in Jira before the run: ${created.length} created by REST under it` +
        (failed.length ? `, ${failed.length} refused by Jira` : ''),
    );
}

/** Whether the run updates the item an earlier run put in Jira (an incremental run), as the create phase does. */
const updatesKnown = (run: PhaseContext['run'], entry: { runId: string } | undefined): boolean =>
  run.type === 'INCREMENTAL' && entry !== undefined && entry.runId !== run.id;

/**
 * The items the run writes by REST after its import, in manifest order: those it created (`created`), and, in an
 * INCREMENTAL run, those an earlier run put in Jira (the id map names them by another run), which the phase's
 * units update and the transitions and comments phases then bring up to date (the status, the comments added
 * since: those the import carried are found by their date and author, comments-format.ts `matchImported`).
 */
async function knownUnits(ctx: PhaseContext, created: ReadonlySet<number>): Promise<number[]> {
  const { deps, run, preflight } = ctx;
  if (run.type !== 'INCREMENTAL') return [...created];
  const ids: number[] = [];
  for await (const slice of preflight.manifest.slices()) {
    const entries = await deps.store.idMap.getMany(
      run.tenantId,
      run.projectId,
      slice.map((m) => m.id),
    );
    for (const m of slice) if (created.has(m.id) || updatesKnown(run, entries.get(m.id))) ids.push(m.id);
  }
  return ids;
}

/** Builds the files, then (not in a dry run: nothing is imported) takes the batches as the admin imports them. */
async function prepareImport(ctx: PhaseContext, remainingMs: () => number): Promise<boolean> {
  if (!(await buildImportFiles(ctx, remainingMs))) return false;
  if (ctx.run.options.dryRun) return true;
  if (!(await verifyBatches(ctx, remainingMs))) return false;
  await createOutsideParents(ctx, await progressOf(ctx));
  return true;
}

/** Each manifest item told once every batch is recorded: imported (with its batch), skipped, or failed. */
async function openImport(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run, preflight } = ctx;
  const index = await indexOf(ctx);
  const batchOf = new Map<number, number>();
  for (const b of index.batches) for (const id of b.sourceIds) batchOf.set(id, b.number);
  const leftOut = new Map(index.leftOut.map((l) => [l.sourceId, l.reason]));
  const progress = await progressOf(ctx);
  const copies = new Map(progress.copies.map((c) => [c.sourceId, c]));
  const refused = new Map((progress.outside?.failed ?? []).map((f) => [f.sourceId, f.reason]));
  const block = blockReads(async (from, to) => {
    const slice = await preflight.manifest.range(from, to);
    const [entries, built] = await Promise.all([
      deps.store.idMap.getMany(
        run.tenantId,
        run.projectId,
        slice.map((m) => m.id),
      ),
      // The import's blocks are the manifest's blocks of 50, as these reads are.
      builtBlock(ctx, Math.floor(from / CHUNK_SIZE)),
    ]);
    const warnings = new Map<number, string[]>();
    for (const [id, w] of built?.warnings ?? []) warnings.set(id, [...(warnings.get(id) ?? []), w]);
    return { slice, entries, from, warnings };
  }, preflight.manifest.length);
  return {
    async work(i): Promise<UnitOutcome> {
      const { slice, entries, from, warnings } = await block(i);
      const m = slice[i - from];
      const outcome = emptyOutcome();
      if (!m) return outcome;
      // What the item's file could not carry as it is (a person without an account, a text cut ...).
      const noted = warnings.get(m.id) ?? [];
      outcome.warnings.push(...noted.map((w) => `#${m.id}: ${w}`));
      const notes = noted.map((w) => `; warning: ${w}`).join('');
      const entry = entries.get(m.id);
      const batch = batchOf.get(m.id);
      if (entry && entry.runId === run.id && entry.origin === 'created' && batch === undefined) {
        outcome.success++;
        outcome.log.push(
          `#${m.id} ${m.type} -> ${entry.targetKey} (created by REST: its parent was in Jira before the run, and no import file holds a sub-task without its parent)${notes}`,
        );
      } else if (entry && entry.runId === run.id && entry.origin === 'created') {
        const copy = copies.get(m.id);
        outcome.success++;
        outcome.log.push(
          `#${m.id} ${m.type} -> ${entry.targetKey} (imported in batch ${batch ?? '?'})` +
            (copy?.deleted.length ? `; second copy ${copy.deleted.join(', ')} deleted` : '') +
            notes,
        );
        if (copy?.left.length) {
          const reason = `imported twice: ${copy.left.map((l) => `${l.key} (${l.reason})`).join(', ')} could not be deleted; remove it in Jira, ${entry.targetKey} is the one kept`;
          outcome.failure++;
          outcome.failures.push({ sourceId: m.id, reason });
        }
      } else if (entry && updatesKnown(run, entry) && entry.updatedByRun === run.id) {
        outcome.success++;
        outcome.log.push(`#${m.id} ${m.type} -> ${entry.targetKey} updated`);
      } else if (entry && updatesKnown(run, entry)) {
        // In Jira from an earlier run: its fields set again from Azure DevOps, as an incremental REST run does.
        const updated = { processed: 1, ...emptyOutcome() };
        await updateKnownItems(ctx, [entry], new Map([[m.id, m]]), updated);
        return updated;
      } else if (entry) {
        outcome.skipped++;
        outcome.log.push(`#${m.id} ${m.type} already in Jira as ${entry.targetKey}: skipped`);
      } else if (run.options.dryRun && batch !== undefined) {
        outcome.log.push(`#${m.id} ${m.type} would be imported in batch ${batch}${notes}`);
      } else if (refused.has(m.id)) {
        const reason = `its parent was in Jira before the run; created by REST, Jira refused it: ${refused.get(m.id)}`;
        outcome.failure++;
        outcome.failures.push({ sourceId: m.id, reason });
        outcome.log.push(`#${m.id} ${m.type} failed: ${reason}`);
      } else {
        const reason = leftOut.get(m.id) ?? 'not in Jira after its batch was imported';
        outcome.failure++;
        outcome.failures.push({ sourceId: m.id, reason: `left out of the Jira import: ${reason}` });
        outcome.log.push(`#${m.id} ${m.type} failed: left out of the Jira import: ${reason}`);
      }
      return outcome;
    },
  };
}

/**
 * Once every batch is in: the sprints to their states, and the run's copies for the importer removed (those of
 * items no file carried, or a batch whose removal a crash cut short, included).
 */
async function completeImport(ctx: PhaseContext): Promise<void> {
  await completeSprints(ctx);
  await new ImportFileArchive(ctx.deps.artifacts).removeAllCopies(ctx.run.tenantId, ctx.run.id);
}

/** Phase 2 of a run delivered by Jira's importer, for the runner (in place of the create phase). */
export const importPhase: PhaseModule = {
  prepare: prepareImport,
  units: (ctx) => ctx.preflight.manifest.length,
  open: openImport,
  complete: completeImport,
};
