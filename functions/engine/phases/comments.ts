/**
 * Phase 7: each migrated item's Azure DevOps comments, oldest first, as Jira comments (see comments-format.ts
 * for the header and the marker).
 *
 * Never a duplicate: before posting an item's comments, the issue's comments are read and every ADO comment
 * whose marker is already there is left out; an item is recorded in the id map (`phasesDone` gets 7) only
 * when all its comments are in, and such an item is skipped without a call (except in INCREMENTAL runs, whose
 * items may have new comments). A crash between two posts therefore resumes with the first comment missing,
 * in order. Jira refusing a comment (after one try as plain text) stops that item there, so a later run
 * continues it in order; the item counts as a failure and the run goes on.
 *
 * A chunk takes at most 50 items and stops taking more once about COMMENT_BUDGET comments are to be posted
 * (from ADO's `System.CommentCount`), so a chunk holding long threads stays short; one item is always taken.
 */
import type { HtmlToAdfContext } from '#domain/adf/index.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoComment, AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import type { ChunkOutcome, PhaseContext, PhaseModule } from '../context.ts';
import { commentDocument, markerOf } from './comments-format.ts';
import { PeopleMap } from './comments-people.ts';
import {
  ChunkAbandoned,
  ITEM_CONCURRENCY,
  inPool,
  migratedUnits,
  refusalOf,
  runArtifactKey,
  tallyResults,
} from './transitions-shared.ts';

const UNITS_ARTIFACT = 'comments-units.json';
const PEOPLE_ARTIFACT = 'comments-people.json';
/** Comments a chunk sets out to post before it stops taking items. */
export const COMMENT_BUDGET = 400;
const JIRA_COMMENT_PAGE = 100;
/** Items read at a time (5 calls of 200) while gathering the people: memory stays flat on large projects. */
const PEOPLE_SLICE = 1000;

/** `#123` in text (not `&#39;`) and links to `/_workitems/edit/123`: the items an ADO text may refer to. */
const REFERENCE = /(?<![&\w])#(\d{1,9})(?!\d)|\/_workitems\/edit\/(\d{1,9})/gi;

/** The ADO comment ids already posted to the issue (read from the markers of its comments). */
export async function postedMarkers(jira: JiraClient, issueKey: string): Promise<Set<number>> {
  const markers = new Set<number>();
  for (let startAt = 0; ; ) {
    const res = await jira.http.request<{ comments?: { body?: unknown }[]; total?: number }>(
      'GET',
      `/rest/api/3/issue/${encodeURIComponent(issueKey)}/comment`,
      { query: { startAt, maxResults: JIRA_COMMENT_PAGE, orderBy: 'created' } },
    );
    const page = res.body.comments ?? [];
    for (const c of page) {
      const marker = markerOf(c.body);
      if (marker !== undefined) markers.add(marker);
    }
    startAt += page.length;
    if (page.length === 0 || startAt >= (res.body.total ?? 0)) return markers;
  }
}

async function adoComments(ctx: PhaseContext, id: number): Promise<AdoComment[]> {
  const all: AdoComment[] = [];
  for await (const c of ctx.deps.source.comments(id)) all.push(c);
  return all;
}

const migrateComments = (ctx: PhaseContext) => ctx.run.options.migrateComments !== false;

export async function commentsUnits(ctx: PhaseContext): Promise<number> {
  if (!migrateComments(ctx)) return 0;
  const units = await migratedUnits(ctx, UNITS_ARTIFACT);
  const peopleKey = runArtifactKey(ctx.run, PEOPLE_ARTIFACT);
  if (units.length > 0 && !(await ctx.deps.artifacts.get(peopleKey))) {
    // Once a run: the identities every migrated item names, so mentions of people who never commented on the
    // item at hand still resolve.
    const people = await PeopleMap.load(ctx.deps, peopleKey, ctx.preflight);
    for (let i = 0; i < units.length; i += PEOPLE_SLICE) {
      const items = await ctx.deps.source.workItems(units.slice(i, i + PEOPLE_SLICE), { expand: 'none' });
      await people.learn(items.flatMap((item) => Object.values(item.fields)));
    }
    await people.save();
  }
  return units.length;
}

type ItemResult = { kind: 'success' | 'skipped' | 'failure'; line: string; reason?: string };

const commentCountOf = (item: AdoWorkItem | undefined) => {
  const n = item?.fields['System.CommentCount'];
  return typeof n === 'number' ? n : undefined;
};

/** Warnings of an item's comments, each distinct message once, with how often it came. */
function summarise(messages: string[]): string {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  return [...counts].map(([m, n]) => (n > 1 ? `${m} (x${n})` : m)).join('; ');
}

export async function commentsChunk(ctx: PhaseContext, index: number): Promise<ChunkOutcome> {
  const { deps, run } = ctx;
  const { store, source, target } = deps;
  const outcome: ChunkOutcome = { processed: 0, success: 0, failure: 0, skipped: 0, log: [] };
  if (!migrateComments(ctx)) return outcome;
  const units = await migratedUnits(ctx, UNITS_ARTIFACT);
  const candidates = units.slice(index, index + CHUNK_SIZE);
  if (candidates.length === 0) return outcome;
  const dryRun = run.options.dryRun === true;
  const recheck = run.type === 'INCREMENTAL';

  const entries = await store.idMap.getMany(run.tenantId, run.projectId, candidates);
  const isDone = (id: number) => !recheck && (entries.get(id)?.phasesDone ?? []).includes(PHASES.comments);
  const items = new Map<number, AdoWorkItem>(
    (
      await source.workItems(
        candidates.filter((id) => !isDone(id)),
        { expand: 'none' },
      )
    ).map((i) => [i.id, i]),
  );
  // The chunk's extent: long threads make short chunks.
  let budget = 0;
  let take = 0;
  for (const id of candidates) {
    const cost = isDone(id) ? 0 : (commentCountOf(items.get(id)) ?? 1);
    if (take > 0 && budget + cost > COMMENT_BUDGET) break;
    budget += cost;
    take++;
  }
  const ids = candidates.slice(0, take);
  outcome.processed = ids.length;

  const people = await PeopleMap.load(deps, runArtifactKey(run, PEOPLE_ARTIFACT), ctx.preflight);
  const siteUrl = target.connection.baseUrl.replace(/\/+$/, '');

  const markDone = async (entry: IdMapEntry) => {
    if (dryRun) return;
    const phasesDone = [...new Set([...(entry.phasesDone ?? []), PHASES.comments])];
    await store.idMap.putMany(run.tenantId, run.projectId, [{ ...entry, phasesDone, updatedAt: nowIso() }]);
  };

  const one = async (id: number, stopped: () => boolean): Promise<ItemResult> => {
    const entry = entries.get(id);
    if (!entry) return { kind: 'skipped', line: `#${id}: not in the id map: skipped` };
    const label = `#${id} ${entry.targetKey}`;
    if (isDone(id)) return { kind: 'skipped', line: `${label}: comments already in Jira: skipped` };
    const item = items.get(id);
    if (!item) return { kind: 'skipped', line: `${label}: no longer in Azure DevOps: skipped` };
    let done = 0;
    let current: number | undefined;
    try {
      if (commentCountOf(item) === 0) {
        await markDone(entry);
        return { kind: 'skipped', line: `${label}: no comments` };
      }
      const comments = await adoComments(ctx, id);
      if (comments.length === 0) {
        await markDone(entry);
        return { kind: 'skipped', line: `${label}: no comments` };
      }
      const posted = await postedMarkers(target, entry.targetKey);
      const todo = comments.filter((c) => !posted.has(c.id));
      const already = comments.length - todo.length;
      if (todo.length === 0) {
        await markDone(entry);
        return {
          kind: 'skipped',
          line: `${label}: all ${comments.length} comments already in Jira: skipped`,
        };
      }
      if (dryRun)
        return {
          kind: 'success',
          line: `${label}: would post ${todo.length} comments${already ? ` (${already} already in Jira)` : ''}`,
        };

      // What the bodies name: the authors (for mentions) and the items they refer to.
      await people.learn([...Object.values(item.fields), ...comments.map((c) => c.createdBy)]);
      const referred = new Set<number>();
      for (const c of todo)
        for (const m of (c.text ?? '').matchAll(REFERENCE)) referred.add(Number(m[1] ?? m[2]));
      const keys = await store.idMap.getMany(run.tenantId, run.projectId, [...referred]);
      const adfContext: HtmlToAdfContext = {
        mention: ({ adoId, displayName }) => {
          const accountId = people.accountOf(adoId);
          return accountId ? { accountId, displayName } : undefined;
        },
        workItemKey: (ref) => keys.get(ref)?.targetKey,
        issueUrl: (key) => `${siteUrl}/browse/${encodeURIComponent(key)}`,
      };

      const warnings: string[] = [];
      for (const c of todo) {
        if (stopped()) throw new ChunkAbandoned(`${label}: stopped after ${done} comments`);
        current = c.id;
        const converted = commentDocument(c, adfContext);
        warnings.push(...converted.warnings.map((w) => w.message));
        if (converted.fellBackToText)
          warnings.push(`comment ${c.id} kept as plain text (${converted.fellBackToText})`);
        try {
          await target.addComment(entry.targetKey, converted.doc);
        } catch (err) {
          // Refused as converted (a limit the validator does not know): once more as its text. Only a 4xx
          // is sure to have written nothing; after a 5xx the comment may be there (the marker tells, later).
          const reason = refusalOf(err);
          const refused = err instanceof TrackerHttpError && err.status >= 400 && err.status < 500;
          if (reason === undefined || !refused || converted.fellBackToText) throw err;
          await target.addComment(entry.targetKey, converted.plain());
          warnings.push(`comment ${c.id} kept as plain text (${reason})`);
        }
        done++;
      }
      await markDone(entry);
      const notes = warnings.length ? `; warnings: ${summarise(warnings)}` : '';
      return {
        kind: 'success',
        line: `${label}: ${done} comments posted${already ? ` (${already} already in Jira)` : ''}${notes}`,
      };
    } catch (err) {
      if (err instanceof TrackerHttpError && err.tracker === 'source' && err.status === 404)
        return { kind: 'skipped', line: `${label}: no longer in Azure DevOps: skipped` };
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      const where = current === undefined ? '' : ` after ${done} posted, at Azure DevOps comment ${current}`;
      return { kind: 'failure', reason, line: `${label}: comments stopped${where}: ${reason}` };
    }
  };

  const results = await inPool(ids, ITEM_CONCURRENCY, one);
  await people.save();
  await tallyResults(ctx, PHASES.comments, ids, results, outcome);
  return outcome;
}

export const commentsPhase: PhaseModule = { units: commentsUnits, chunk: commentsChunk };
