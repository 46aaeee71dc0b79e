/**
 * Phase 2: create the issues, at most 50 a bulk call, each labelled `src-id-{N}`, with its parent when the
 * parent already exists. Never a duplicate:
 *  1. items the id map already knows are skipped;
 *  2. the rest are looked up in Jira by label; if an earlier attempt at this chunk may have written (the
 *     pending journal says so), "not found" is only believed once the search index has had time to catch up;
 *  3. found ones are recorded as skipped with their key; only the others are created;
 *  4. the journal is written before each bulk call (naming every item sent so far in the chunk) and cleared
 *     after the id map, so a crash anywhere in between is recovered by step 2 on resume.
 * Steps 1-2 (reads only) of the next block run while a block writes (`readsOf`); one bulk create at a time.
 * An issue created under its parent is recorded done for phase 3 as well: its hierarchy is in place.
 */
import { sourceIdFromLabel, sourceIdLabel } from '#domain/mapping/index.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import {
  type ChunkOutcome,
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { blockUnits, mapYielding, noteInto } from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry, PendingWrite } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import type { JiraIssue } from '#trackers/jira/client.ts';
import { descriptionContextFor } from './description-context.ts';
import { parentFieldFits } from './hierarchy.ts';
import { issueFieldsFor } from './issue-payload.ts';
import { completeSprints, PlacementIndex, SprintsAhead } from './sprints.ts';
import { updateKnownItems } from './update.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `startedAt + lag` so a label search can see what a write that began then created. */
async function waitForIndex(startedAt: string, lagMs: number): Promise<void> {
  const wait = Date.parse(startedAt) + lagMs - Date.now();
  if (wait > 0) await sleep(wait);
}

/**
 * The create phase's units are its items, worked by the runner's pool a block at a time (toolkit `blockUnits`):
 * one bulk call for a block's up to CHUNK_SIZE items. The pool's window is one block, so one bulk create is under
 * way at a time and a block's units finish (and are checkpointed) together. While a block is created, the sprint steps whose issues
 * all exist go on beside it (sprints.ts `SprintsAhead`: past sprints closed while later items are being created);
 * the lines of the steps taken so far go on the block's log. `close()` ends the steps under way with the pass.
 */
export function openCreate(ctx: PhaseContext): UnitWorker {
  const ahead = SprintsAhead.start(ctx);
  const readAhead = new Map<number, Promise<ChunkReads>>();
  const createBlock = async (index: number): Promise<UnitOutcome> => {
    ahead?.advance(index);
    let outcome: ChunkOutcome;
    try {
      outcome = await createItems(ctx, index, readsOf(ctx, readAhead, index));
    } catch (err) {
      await ahead?.settle().catch(() => {}); // no step goes on after a block that throws
      throw err;
    }
    if (ahead) {
      ahead.advance(index + outcome.processed);
      outcome.log.push(...ahead.take());
    }
    return outcome;
  };
  return {
    work: blockUnits(ctx.preflight.manifest.length, createBlock),
    close: async () => {
      await ahead?.release();
    },
  };
}

/** Phase 2, for the runner's PHASE_MODULES. */
export const createPhase: PhaseModule = {
  units: (ctx) => ctx.preflight.manifest.length,
  open: openCreate,
  complete: completeSprints,
};

/**
 * What a chunk reads before it writes: the id map's entries for its items, the pending journal, the label search
 * for the items the id map does not know, and those items from Azure DevOps (read beside the search).
 */
interface ChunkReads {
  known: Map<number, IdMapEntry>;
  pending: PendingWrite | undefined;
  labelled: JiraIssue[];
  items: AdoWorkItem[];
}

async function readChunk(ctx: PhaseContext, index: number): Promise<ChunkReads> {
  const { deps, run, preflight } = ctx;
  const { store, source, target } = deps;
  const chunk = await preflight.manifest.range(index, index + CHUNK_SIZE);
  const known = await store.idMap.getMany(
    run.tenantId,
    run.projectId,
    chunk.map((c) => c.id),
  );
  const todo = chunk.filter((c) => !known.has(c.id));
  if (todo.length === 0) return { known, pending: undefined, labelled: [], items: [] };
  const pending = await store.idMap.pending(run.tenantId, run.projectId, run.id, PHASES.create);
  const search = () =>
    target.findByLabels(
      preflight.projectKey,
      todo.map((t) => sourceIdLabel(t.id)),
    );
  const [firstSearch, items] = await Promise.all([
    search(),
    source.workItems(
      todo.map((t) => t.id),
      { expand: 'relations' },
    ),
  ]);
  let labelled = firstSearch;
  const written = new Set(pending?.sourceIds);
  const seen = bySourceId(labelled);
  const unseen = todo.filter((t) => written.has(t.id) && !seen.has(t.id));
  if (pending && unseen.length > 0) {
    // The interrupted write may have landed as late as its request timeout after it began; Jira's index lag
    // runs from there. Only after both is a "not found" by label to be believed. (Found, every item it sent:
    // it landed whole and nothing of it can land later, so there is nothing to wait for.)
    await waitForIndex(pending.startedAt, target.http.timeoutMs + deps.indexLagMs);
    labelled = await search();
  }
  return { known, pending, labelled, items };
}

/** Issues found by label, by the source id of their `src-id-{N}` label. */
function bySourceId(issues: JiraIssue[]): Map<number, { key: string; id: string }> {
  const found = new Map<number, { key: string; id: string }>();
  for (const issue of issues)
    for (const label of (issue.fields?.labels as string[] | undefined) ?? []) {
      const sourceId = sourceIdFromLabel(label);
      if (sourceId !== undefined) found.set(sourceId, { key: issue.key, id: issue.id });
    }
  return found;
}

/**
 * The next block's reads, started as a block begins (kept by the pass's worker). Safe to read early: no block
 * writes another's items, and an interrupted attempt at a block is always the first one a resume works (the
 * checkpoint is at it), so its journal is read when that block is read. Only one bulk create is ever in flight.
 */
function readsOf(
  ctx: PhaseContext,
  ahead: Map<number, Promise<ChunkReads>>,
  index: number,
): Promise<ChunkReads> {
  const reads = ahead.get(index) ?? readChunk(ctx, index);
  ahead.clear();
  const next = index + CHUNK_SIZE;
  if (next < ctx.preflight.manifest.length) {
    const early = readChunk(ctx, next);
    early.catch(() => {}); // the block that takes it sees the failure (or reads again in a new invocation)
    ahead.set(next, early);
  }
  return reads;
}

async function createItems(
  ctx: PhaseContext,
  index: number,
  reading: Promise<ChunkReads>,
): Promise<ChunkOutcome> {
  const { deps, run, preflight } = ctx;
  const { store, target } = deps;
  const chunk = await preflight.manifest.range(index, index + CHUNK_SIZE);
  const outcome: ChunkOutcome = { processed: chunk.length, ...emptyOutcome() };
  const reads = await reading;
  const { known } = reads;
  let todo = chunk.filter((c) => !known.has(c.id));
  // Known ones: written by this run before an interruption (created), or by an earlier run (skipped; an
  // incremental run updates them from their source instead).
  const incremental = run.type === 'INCREMENTAL';
  const toUpdate: IdMapEntry[] = [];
  for (const entry of known.values()) {
    if (entry.runId === run.id && entry.origin === 'created') {
      outcome.success++;
      outcome.log.push(`#${entry.sourceId} ${entry.sourceType} -> ${entry.targetKey}`);
    } else if (incremental && entry.updatedByRun !== run.id) {
      toUpdate.push(entry);
    } else if (incremental) {
      outcome.success++;
      outcome.log.push(`#${entry.sourceId} ${entry.sourceType} -> ${entry.targetKey} updated`);
    } else {
      outcome.skipped++;
      outcome.log.push(
        `#${entry.sourceId} ${entry.sourceType} already in Jira as ${entry.targetKey}: skipped`,
      );
    }
  }
  await updateKnownItems(ctx, toUpdate, new Map(chunk.map((c) => [c.id, c])), outcome);
  if (todo.length === 0) return outcome;

  const ourWrite = new Set(reads.pending?.sourceIds ?? []);
  const foundBySource = bySourceId(reads.labelled);
  const found: IdMapEntry[] = todo
    .filter((t) => foundBySource.has(t.id))
    .map((t) => {
      const hit = foundBySource.get(t.id) as { key: string; id: string };
      // Found after our own interrupted write: ours. Otherwise it was in Jira before this run.
      const recovered = ourWrite.has(t.id);
      return {
        sourceId: t.id,
        targetKey: hit.key,
        targetId: hit.id,
        sourceType: t.type,
        origin: recovered ? 'created' : 'found',
        runId: run.id,
        phasesDone: [PHASES.create],
        updatedAt: nowIso(),
        ...(recovered ? { recovered: true } : {}),
      };
    });
  if (found.length) {
    await store.idMap.putMany(run.tenantId, run.projectId, found);
    for (const f of found) {
      if (f.recovered) {
        outcome.success++;
        outcome.log.push(
          `#${f.sourceId} ${f.sourceType} -> ${f.targetKey} (confirmed by its label after an interruption)`,
        );
      } else {
        outcome.skipped++;
        outcome.log.push(`#${f.sourceId} ${f.sourceType} already in Jira as ${f.targetKey}: skipped`);
      }
    }
  }
  todo = todo.filter((t) => !foundBySource.has(t.id));
  if (todo.length === 0) {
    await store.idMap.clearPending(run.tenantId, run.projectId, run.id, PHASES.create);
    return outcome;
  }

  const items = reads.items.filter((i) => !foundBySource.has(i.id));
  const byId = new Map(items.map((i) => [i.id, i]));
  const parentIds = todo.map((t) => t.parentId).filter((p): p is number => p !== null);
  const parents = await store.idMap.getMany(run.tenantId, run.projectId, parentIds);
  // Phase 1's sprint and component of each item (sprints.ts).
  const placement = new PlacementIndex(preflight, index);
  // Mentions and references to items already in Jira resolve now; phase 5 writes the final description.
  const describe = await descriptionContextFor(ctx, items);
  const payloadOf = (t: (typeof todo)[number]) =>
    issueFieldsFor(
      preflight,
      byId.get(t.id) as AdoWorkItem,
      t,
      t.parentId !== null ? parents.get(t.parentId) : undefined,
      noteInto(outcome, t.id),
      placement.of(byId.get(t.id) as AdoWorkItem, (w) => outcome.log.push(w)),
      describe,
    );
  // What could not be carried over (a person without an account, a priority the scheme lacks ...), on the
  // item's own line: the dry run's preview collects these.
  const noteOf = (t: (typeof todo)[number], warnings: string[]) => {
    outcome.warnings.push(...warnings.map((w) => `#${t.id}: ${w}`));
    return warnings.map((w) => `; warning: ${w}`).join('');
  };
  if (run.options.dryRun) {
    const payloads = await mapYielding(todo, payloadOf);
    for (const [i, t] of todo.entries())
      outcome.log.push(
        `#${t.id} ${t.type} would be created as ${preflight.typeMap[t.type]?.name ?? t.type}${noteOf(t, payloads[i]?.warnings ?? [])}`,
      );
    return outcome;
  }

  // Waves: an item whose parent this chunk creates, and Jira can hold as its parent, waits for it in a later bulk
  // create (Jira needs the parent's key, and a sub-task cannot be created without one; a parent Jira cannot hold
  // is phase 3's Relates link, so no wait). The manifest is parents first: one pass numbers them.
  const typeOf = new Map(todo.map((t) => [t.id, t.type]));
  const wave = new Map<number, number>();
  for (const t of todo) {
    const parentType = t.parentId !== null ? typeOf.get(t.parentId) : undefined;
    const waits = parentType !== undefined && parentFieldFits(preflight, t.type, parentType);
    wave.set(t.id, waits ? (wave.get(t.parentId as number) as number) + 1 : 0);
  }
  const waves = Math.max(...wave.values()) + 1;

  const created: IdMapEntry[] = [];
  for (let w = 0; w < waves; w++) {
    const batch = todo.filter((t) => wave.get(t.id) === w);
    // The journal names what has been sent, this wave included, from this wave's start (at most the chunk's 50
    // items are created and not yet recorded): a crash between two waves leaves the later waves' items out of it,
    // so a resume that finds every sent item by its label waits for nothing.
    await store.idMap.markPending(run.tenantId, run.projectId, run.id, PHASES.create, {
      sourceIds: todo.filter((t) => (wave.get(t.id) as number) <= w).map((t) => t.id),
      startedAt: nowIso(),
    });
    // One at a time, the event loop given a turn between two: a description can take a second or two of CPU.
    const payloads = await mapYielding(batch, payloadOf);
    const notes = batch.map((t, i) => noteOf(t, payloads[i]?.warnings ?? []));
    deps.crash?.('before-bulk-create');
    const result = await target.bulkCreate(payloads.map((p) => ({ fields: p.fields })));
    deps.crash?.('after-bulk-create');

    // Jira answers the created issues in the order of the elements that did not fail.
    const failed = new Map(result.errors.map((e) => [e.failedElementNumber, e]));
    let next = 0;
    for (const [i, t] of batch.entries()) {
      const error = failed.get(i);
      if (error) {
        const reason =
          [
            ...(error.elementErrors?.errorMessages ?? []),
            ...Object.entries(error.elementErrors?.errors ?? {}).map(([k, v]) => `${k}: ${v}`),
          ].join('; ') || 'rejected by Jira';
        outcome.failures.push({ sourceId: t.id, reason });
        outcome.failure++;
        outcome.log.push(`#${t.id} ${t.type} failed: ${reason}`);
        continue;
      }
      const issue = result.issues[next++];
      if (!issue) continue;
      const entry: IdMapEntry = {
        sourceId: t.id,
        targetKey: issue.key,
        targetId: issue.id,
        sourceType: t.type,
        origin: 'created',
        runId: run.id,
        // Created under its parent: phase 3 has nothing to do for it, and its plan need not read it from Jira.
        phasesDone: payloads[i]?.fields.parent ? [PHASES.create, PHASES.hierarchy] : [PHASES.create],
        updatedAt: nowIso(),
      };
      created.push(entry);
      parents.set(t.id, entry); // for its children in the next wave
      outcome.success++;
      outcome.log.push(`#${t.id} ${t.type} -> ${issue.key}${notes[i]}`);
    }
  }
  await store.idMap.putMany(run.tenantId, run.projectId, created);
  deps.crash?.('after-id-map');
  await store.idMap.clearPending(run.tenantId, run.projectId, run.id, PHASES.create);
  return outcome;
}
