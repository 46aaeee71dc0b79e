/**
 * Phase 2 of an INCREMENTAL run, for items already in Jira: their mapped fields are set again from Azure
 * DevOps (summary, description, labels, priority, people, estimates, parent where Jira holds it as `parent`).
 * Fields the source no longer has are cleared (assignee, description, story points, the custom fields the
 * project's confirmed mappings write), so Jira matches the source rather than keeping stale values; fields
 * the migration does not map are left alone.
 *
 * Each updated item's id map entry then records the run (`updatedByRun`, so a resumed chunk does not edit it
 * twice) and forgets the later phases it had done, so phases 3 to 7 look at it again: each of them reads Jira
 * before writing, so they add only what is new (attachments, links, comments) and move the status if needed.
 * These issues are not this run's: each one's fields are read and journalled before the edit
 * (#phase-kit/write-journal.ts), so a rollback of the run puts them back as they were.
 */
import type { ManifestItem } from '#domain/manifest.ts';
import { PHASES } from '#domain/runs.ts';
import type { ChunkOutcome, PhaseContext } from '#phase-kit/context.ts';
import {
  ITEM_CONCURRENCY,
  type ItemResult,
  inPool,
  mapYielding,
  refusalOf,
  tallyResults,
} from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { descriptionContextFor } from './description-context.ts';
import { issueFieldsFor } from './issue-payload.ts';

/** Create-only fields: Jira refuses to edit them (a type change needs Jira's move, which has no REST API). */
const CREATE_ONLY = ['project', 'issuetype'];

export async function updateKnownItems(
  ctx: PhaseContext,
  entries: IdMapEntry[],
  manifest: ReadonlyMap<number, ManifestItem>,
  outcome: ChunkOutcome,
): Promise<void> {
  const { deps, run, preflight } = ctx;
  if (entries.length === 0) return;
  if (run.options.dryRun) {
    for (const e of entries)
      outcome.log.push(`#${e.sourceId} ${e.sourceType} would be updated in ${e.targetKey}`);
    return;
  }
  const items = await deps.source.workItems(
    entries.map((e) => e.sourceId),
    { expand: 'relations' },
  );
  const byId = new Map(items.map((i) => [i.id, i]));
  const parentIds = entries.flatMap((e) => manifest.get(e.sourceId)?.parentId ?? []);
  const parents = await deps.store.idMap.getMany(run.tenantId, run.projectId, parentIds);
  const describe = await descriptionContextFor(ctx, items);
  const updated: IdMapEntry[] = [];
  // Each item's fields built first, one at a time, the event loop given a turn between two (a description can
  // take a second or two of CPU): built as the edits start, they would hold the edits under way past their timeout.
  const builds = await mapYielding(entries, (entry) => {
    const m = manifest.get(entry.sourceId) as ManifestItem;
    const item = byId.get(entry.sourceId) as AdoWorkItem;
    const notes: string[] = [];
    const warnings: string[] = [];
    const { fields } = issueFieldsFor(
      preflight,
      item,
      m,
      m.parentId !== null ? parents.get(m.parentId) : undefined,
      (line, warning) => {
        notes.push(line);
        if (warning !== undefined) warnings.push(warning);
      },
      {},
      describe,
    );
    for (const f of CREATE_ONLY) delete fields[f];
    // A mapped custom field is cleared only when the source has no value (one it cannot read is left alone).
    const mapped = (preflight.mappings?.customFields ?? [])
      .filter(
        (c) =>
          item.fields[c.source] === undefined ||
          item.fields[c.source] === null ||
          item.fields[c.source] === '',
      )
      .map((c) => c.fieldId);
    for (const f of ['assignee', 'description', preflight.storyPointsFieldId ?? '', ...mapped]) {
      if (f && !(f in fields)) fields[f] = null;
    }
    return { entry, m, fields, notes, warnings };
  });
  const journal = WriteJournal.of(ctx);
  const results = await inPool(builds, ITEM_CONCURRENCY, async (built): Promise<ItemResult> => {
    const { entry, m, fields, notes, warnings } = built;
    if (m.type !== entry.sourceType)
      notes.push(`type changed in Azure DevOps from ${entry.sourceType} to ${m.type}: Jira keeps its type`);
    try {
      const before = await journal.readFieldsBefore(entry, PHASES.create, Object.keys(fields));
      await journal.attempt(before, () => deps.target.editIssue(entry.targetKey, { fields }));
    } catch (err) {
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      return {
        kind: 'failure',
        line: `#${entry.sourceId} ${m.type} update of ${entry.targetKey} failed: ${reason}`,
        reason,
      };
    }
    updated.push({
      ...entry,
      updatedByRun: run.id,
      phasesDone: [PHASES.create],
      updatedAt: nowIso(),
    });
    const suffix = notes.length ? ` (${notes.join('; ')})` : '';
    return {
      kind: 'success',
      line: `#${entry.sourceId} ${m.type} -> ${entry.targetKey} updated${suffix}`,
      warnings,
    };
  });
  await deps.store.idMap.putMany(run.tenantId, run.projectId, updated);
  tallyResults(
    entries.map((e) => e.sourceId),
    results,
    outcome,
  );
}
