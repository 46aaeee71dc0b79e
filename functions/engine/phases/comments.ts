/**
 * Phase 7: each migrated item's Azure DevOps comments, oldest first, as Jira comments (see comments-format.ts
 * for the header and the marker).
 *
 * Never a duplicate: before posting, the issue's comments are read and every ADO comment whose marker is
 * already there is left out, as is one a Jira import carried (no marker: the comment of the same date and author,
 * comments-format.ts `matchImported`); an item is recorded in the id map (`phasesDone` gets 7) only when all its
 * comments are in, and such an item is skipped without a call (except in INCREMENTAL runs, whose items may
 * have new comments). A crash between two posts therefore resumes with the first comment missing, in order.
 * Jira refusing a comment (after one try as plain text) stops that item there, so a later run continues it in
 * order; the item counts as a failure and the run goes on.
 *
 * Units: the migrated items (in the order scheduleUnits gives: long threads' parts spread over the chunks), a long thread split into parts of COMMENTS_PER_UNIT (from ADO's
 * `System.CommentCount` when the phase starts; the list is kept as a run artifact). An item's comments go in
 * one after another, so a part bounds how long one unit writes. Part k posts the item's comments not yet in
 * Jira up to its end (k x COMMENTS_PER_UNIT; the last part, all of them): normally its own slice, and after a
 * crash only what is missing. A part that finds earlier comments missing posts them first, unless an earlier
 * part of this run failed on them: then the item stays stopped there. Only the last part records the item.
 *
 * A comment over Jira's 32,767-character limit is cut at a block boundary with a note (comments-format.ts),
 * its whole HTML attached to the issue first as `comment-<ADO comment id>.html` (skipped when the issue already
 * has a file of that name: a resume after the upload posts the comment only). Should Jira refuse the file, the
 * cut comment is posted anyway with a warning, so the thread goes on.
 *
 * A chunk takes at most 50 units and stops taking more once about COMMENT_BUDGET comments are to be posted,
 * so a chunk holding long threads stays short; one unit is always taken, and two parts of one thread never
 * share a chunk (units of a chunk run side by side).
 *
 * On an issue the run did not create, the comments a unit is about to post (and a long one's file) are journalled
 * first by their markers, then settled with Jira's ids (#phase-kit/write-journal.ts), for a rollback to take back;
 * a unit that finds one of them posted already (an interrupted pass) settles its record with that comment's id.
 */
import { Readable } from 'node:stream';
import type { HtmlToAdfContext } from '#domain/adf/index.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import type { PhaseContext, PhaseModule, UnitOutcome, UnitWorker } from '#phase-kit/context.ts';
import {
  blockReads,
  ChunkAbandoned,
  ITEM_BUDGET_MS,
  ITEM_CONCURRENCY,
  type ItemResult,
  keysOnce,
  migratedUnits,
  refusalOf,
  runArtifactKey,
  unitResult,
  withinItemBudget,
} from '#phase-kit/toolkit.ts';
import { WriteJournal, writeRefused } from '#phase-kit/write-journal.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoComment, AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import {
  type CommentDocument,
  commentDocument,
  markerOf,
  markerText,
  matchImported,
  type UnmarkedComment,
} from './comments-format.ts';
import { PeopleMap } from './comments-people.ts';
import { deliveredByImport, restUnits } from './import-outside.ts';
import { loadOrComputePlan } from './links-jira.ts';

const ITEMS_ARTIFACT = 'comments-units.json';
const PLAN_ARTIFACT = 'comments-plan.json';
const PEOPLE_ARTIFACT = 'comments-people.json';
/**
 * Most comments one unit posts. A chunk's units run ITEM_CONCURRENCY side by side, each posting in order, so a
 * chunk's time is about its longest run of posts: a part's worth, whether the chunk holds many short threads or
 * one part of a long one. At Jira's per-issue limit (100 writes in 30 s) a part is about 30 s.
 */
export const COMMENTS_PER_UNIT = 100;
/** Comments a chunk sets out to post before it stops taking units: a part's worth for each unit side by side. */
export const COMMENT_BUDGET = COMMENTS_PER_UNIT * ITEM_CONCURRENCY;
/** Items read at a time (5 calls of 200) while planning: memory stays flat on large projects. */
const ITEM_SLICE = 1000;

/** A unit: an item's comments, or one part of a long thread (`part` of `parts`, from 1). */
export interface CommentUnit {
  id: number;
  part?: number;
  parts?: number;
}

/** `#123` in text (not `&#39;`) and links to `/_workitems/edit/123`: the items an ADO text may refer to. */
export const REFERENCE = /(?<![&\w])#(\d{1,9})(?!\d)|\/_workitems\/edit\/(\d{1,9})/gi;

/**
 * The issue's thread as the phase reads it: the ADO comment ids already posted (read from the markers of its
 * comments), each with its Jira id, and the comments with no marker (an import's, found by `matchImported`).
 */
export async function postedComments(
  jira: JiraClient,
  issueKey: string,
): Promise<{ markers: Map<number, string>; unmarked: UnmarkedComment[] }> {
  const markers = new Map<number, string>();
  const unmarked: UnmarkedComment[] = [];
  for await (const c of jira.comments(issueKey)) {
    const marker = markerOf(c.body);
    if (marker !== undefined) markers.set(marker, String(c.id));
    else {
      const created = Date.parse(c.created ?? '');
      if (!Number.isNaN(created))
        unmarked.push({ id: String(c.id), created, ...(c.author ? { authorId: c.author.accountId } : {}) });
    }
  }
  return { markers, unmarked };
}

/** The file names attached to an issue. */
async function attachedNames(jira: JiraClient, issueKey: string): Promise<Set<string>> {
  const issue = await jira.getIssue(issueKey, ['attachment']);
  const files = (issue.fields?.attachment as { filename?: string }[] | undefined) ?? [];
  return new Set(files.flatMap((f) => (f.filename ? [f.filename] : [])));
}

/**
 * Attaches the whole of an over-long comment unless the issue has it already (`names`, read once a unit).
 * Undefined when it is there; a warning when Jira refused the file (the cut comment still goes in).
 */
async function attachFullComment(
  jira: JiraClient,
  issue: { entry: IdMapEntry; journal: WriteJournal },
  full: NonNullable<CommentDocument['full']>,
  names: () => Promise<Set<string>>,
): Promise<string | undefined> {
  const present = await names();
  if (present.has(full.fileName)) return undefined;
  const { entry, journal } = issue;
  try {
    // No file of that name on the issue: none of that name to tell from the run's.
    const records = await journal.intend(entry, PHASES.comments, [
      { kind: 'attachment', name: full.fileName, id: null, had: [] },
    ]);
    const [attached] = await journal.attempt(records, () =>
      jira.attach(entry.targetKey, full.fileName, async () => ({
        stream: Readable.from([Buffer.from(full.html, 'utf8')]),
        contentType: 'text/html',
      })),
    );
    await journal.settle(records, () => (attached ? String(attached.id) : undefined));
    present.add(full.fileName);
    return undefined;
  } catch (err) {
    const reason = refusalOf(err);
    if (reason === undefined) throw err;
    return `${full.fileName} not attached (${reason}): the comment's full text is not in Jira`;
  }
}

/** The next `count` comments of a thread read from `rest`, oldest first (fewer where it ends). */
async function readOn(rest: AsyncIterator<AdoComment>, count: number): Promise<AdoComment[]> {
  const read: AdoComment[] = [];
  while (read.length < count) {
    const next = await rest.next();
    if (next.done) break;
    read.push(next.value);
  }
  return read;
}

/**
 * Where a long thread's reads stand after its part `part` left every comment up to its end in Jira: how many of
 * ADO's comments were read, the rest of ADO's thread (its reader, on its current page), and the markers Jira's
 * thread holds (those read, and those posted since). The next part goes on from there.
 */
interface ThreadCursor {
  part: number;
  read: number;
  rest: AsyncIterator<AdoComment>;
  /** ADO comment id -> Jira comment id. */
  posted: Map<number, string>;
  /** Jira's comments with no marker that no ADO comment read so far stands for (matchImported). */
  unmarked: UnmarkedComment[];
}

const migrateComments = (ctx: PhaseContext) => ctx.run.options.migrateComments !== false;

/** ` (part 2/3)` for a part of a long thread; nothing for a whole one. */
const partLabel = (unit: CommentUnit) =>
  (unit.parts ?? 1) > 1 ? ` (part ${unit.part ?? 1}/${unit.parts})` : '';

const commentCountOf = (item: AdoWorkItem | undefined) => {
  const n = item?.fields['System.CommentCount'];
  return typeof n === 'number' ? n : undefined;
};

/**
 * The threads in the order chunks should take them: chunk by chunk as the chunker will cut them (at most 50 units
 * and COMMENT_BUDGET comments, one part of a thread per chunk), the longest threads first in every chunk. So each
 * chunk carries the next part of every long thread beside as many short threads as fit: the longest thread's parts
 * go one chunk after another, everything else alongside, and the phase takes about as long as that thread allows.
 */
export function scheduleUnits(threads: readonly { id: number; count: number }[]): CommentUnit[] {
  const open = [...threads]
    .sort((a, b) => b.count - a.count) // stable: ties keep manifest order
    .map((t) => ({ ...t, parts: Math.max(1, Math.ceil(t.count / COMMENTS_PER_UNIT)), next: 1 }));
  const units: CommentUnit[] = [];
  while (open.length > 0) {
    let taken = 0;
    let budget = 0;
    for (const t of open) {
      if (taken >= CHUNK_SIZE) break;
      const cost =
        t.next < t.parts ? COMMENTS_PER_UNIT : Math.max(1, t.count - (t.parts - 1) * COMMENTS_PER_UNIT);
      if (taken > 0 && budget + cost > COMMENT_BUDGET) continue;
      units.push(t.parts === 1 ? { id: t.id } : { id: t.id, part: t.next, parts: t.parts });
      t.next++;
      taken++;
      budget += cost;
    }
    open.splice(0, open.length, ...open.filter((t) => t.next <= t.parts));
  }
  return units;
}

/**
 * The phase's units, computed once when it starts: every migrated item, long threads in parts. The same pass
 * learns, once a run, the identities every migrated item names, so mentions of people who never commented on
 * the item at hand still resolve.
 */
async function computeUnits(ctx: PhaseContext): Promise<CommentUnit[]> {
  const { deps, run, preflight } = ctx;
  // A run delivered by Jira's importer: only the items it writes by REST after the import (an imported issue's
  // comments are its file's), those it created and, in an incremental run, those an earlier run put in Jira.
  const ids = deliveredByImport(ctx) ? await restUnits(ctx) : await migratedUnits(ctx, ITEMS_ARTIFACT);
  const peopleKey = runArtifactKey(run, PEOPLE_ARTIFACT);
  const people = (await deps.artifacts.get(peopleKey))
    ? undefined
    : await PeopleMap.load(deps, peopleKey, preflight);
  const threads: { id: number; count: number }[] = [];
  for (let i = 0; i < ids.length; i += ITEM_SLICE) {
    const slice = ids.slice(i, i + ITEM_SLICE);
    const items = await deps.source.workItems(slice, { expand: 'none' });
    await people?.learn(items.flatMap((item) => Object.values(item.fields)));
    const byId = new Map(items.map((item) => [item.id, item]));
    for (const id of slice) threads.push({ id, count: commentCountOf(byId.get(id)) ?? 0 });
  }
  await people?.save();
  return scheduleUnits(threads);
}

const unitsOf = (ctx: PhaseContext) =>
  loadOrComputePlan(
    ctx.deps.artifacts,
    runArtifactKey(ctx.run, PLAN_ARTIFACT),
    () => computeUnits(ctx),
    ctx.invocation,
  );

export async function commentsUnits(ctx: PhaseContext): Promise<number> {
  if (!migrateComments(ctx)) return 0;
  return (await unitsOf(ctx)).length;
}

/** Warnings of an item's comments, each distinct message once, with how often it came. */
function summarise(messages: string[]): string {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  return [...counts].map(([m, n]) => (n > 1 ? `${m} (x${n})` : m)).join('; ');
}

/**
 * The phase's units one at a time; id map entries and ADO items read 50 units at a time. A part of a thread
 * starts once the thread's previous part, if this pass worked it, has ended: an issue's comments go in order.
 */
export async function openComments(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run } = ctx;
  const { store, source, target } = deps;
  const all = migrateComments(ctx) ? await unitsOf(ctx) : [];
  const dryRun = run.options.dryRun === true;
  const recheck = run.type === 'INCREMENTAL';
  const isDone = (entry: IdMapEntry | undefined) =>
    !recheck && (entry?.phasesDone ?? []).includes(PHASES.comments);
  const block = blockReads(async (from, to) => {
    const ids = [...new Set(all.slice(from, to).map((u) => u.id))];
    const entries = await store.idMap.getMany(run.tenantId, run.projectId, ids);
    const open = ids.filter((id) => !isDone(entries.get(id)));
    const items = new Map<number, AdoWorkItem>(
      (open.length ? await source.workItems(open, { expand: 'none' }) : []).map((i) => [i.id, i]),
    );
    return { entries, items };
  }, all.length);

  const people = await PeopleMap.load(deps, runArtifactKey(run, PEOPLE_ARTIFACT), ctx.preflight);
  const journal = WriteJournal.of(ctx);
  /** The item's journalled comments whose post an interrupted pass made: settled with the ids Jira shows now. */
  const settleFound = async (entry: IdMapEntry, posted: Map<number, string>) => {
    if (!journal.covers(entry) || posted.size === 0) return;
    const ids = new Map([...posted].map(([marker, id]) => [markerText(marker), id]));
    const waiting = (await journal.unsettled(entry)).filter((r) => r.write.kind === 'comment');
    await journal.settle(waiting, ({ write }) =>
      write.kind === 'comment' ? ids.get(write.find) : undefined,
    );
  };
  const siteUrl = target.connection.baseUrl.replace(/\/+$/, '');
  // The Jira keys of the items comments refer to: each looked up once in the pass, the units' lookups together.
  const referredKeys = keysOnce((ids) => store.idMap.getMany(run.tenantId, run.projectId, ids));

  /** The item's entry recorded as done, written with the checkpoint's move over its unit (UnitOutcome.marks). */
  const doneMark = (entry: IdMapEntry): IdMapEntry | undefined =>
    dryRun
      ? undefined
      : {
          ...entry,
          phasesDone: [...new Set([...(entry.phasesDone ?? []), PHASES.comments])],
          updatedAt: nowIso(),
        };
  // Items whose comments this run already stopped at a refusal: recorded by an earlier checkpoint (read only
  // when a part finds a gap), or by this pass (not recorded yet: the runner records failures as it checkpoints).
  let stoppedItems: Promise<Set<number>> | undefined;
  const stoppedNow = new Set<number>();
  const stoppedEarlier = async (id: number) => {
    if (stoppedNow.has(id)) return true;
    stoppedItems ??= store.runFailures
      .list(run.tenantId, run.projectId, run.id)
      .then(
        (failures) => new Set(failures.filter((f) => f.phase === PHASES.comments).map((f) => f.sourceId)),
      );
    return (await stoppedItems).has(id);
  };

  // Long threads' reads from one part to the next in this worker (one invocation's pass): part k reads its own
  // slice of ADO's thread and nothing of Jira's, where reading both threads from their start made a thread of n
  // parts read each n(n+1)/2 parts' worth. Kept only when a part left its whole slice in Jira; any other end
  // drops it, and so does the worker's end (a crash, a new invocation): both threads are then read again.
  const cursors = new Map<number, ThreadCursor>();
  const cursorFor = (id: number, part: number) => {
    const cursor = cursors.get(id);
    cursors.delete(id);
    return cursor && cursor.part === part - 1 && !stoppedNow.has(id) ? cursor : undefined;
  };

  /** A unit's result, and its item's entry to record as done (its thread all in Jira, or none to post). */
  type PartResult = ItemResult & { mark?: IdMapEntry | undefined };
  const one = async (index: number, unit: CommentUnit, stopped: () => boolean): Promise<PartResult> => {
    const { id } = unit;
    const { entries, items } = await block(index);
    const part = unit.part ?? 1;
    const parts = unit.parts ?? 1;
    const last = part === parts;
    // A thread of several parts is the phase's longest chain of writes (one post after another, the floor of
    // the phase): its posts go ahead of the other threads' on the comment endpoint.
    const urgent = parts > 1;
    const partOf = partLabel(unit);
    const entry = entries.get(id);
    if (!entry) return { kind: 'skipped', line: `#${id}${partOf}: not in the id map: skipped` };
    const label = `#${id} ${entry.targetKey}${partOf}`;
    if (isDone(entry)) return { kind: 'skipped', line: `${label}: comments already in Jira: skipped` };
    const item = items.get(id);
    if (!item) return { kind: 'skipped', line: `${label}: no longer in Azure DevOps: skipped` };
    // This unit's slice of the thread: [start, end), the last part to the end whatever the count is now.
    const start = (part - 1) * COMMENTS_PER_UNIT;
    const end = last ? Number.POSITIVE_INFINITY : part * COMMENTS_PER_UNIT;
    let done = 0;
    let current: number | undefined;
    try {
      if (commentCountOf(item) === 0)
        return { kind: 'skipped', line: `${label}: no comments`, mark: doneMark(entry) };
      // The thread's comments read now (from `offset`, its position in the thread) up to this part's end.
      const cursor = cursorFor(id, part);
      const offset = cursor?.read ?? 0;
      const rest = cursor?.rest ?? source.comments(id)[Symbol.asyncIterator]();
      const comments = await readOn(rest, end - offset);
      const count = offset + comments.length;
      if (count === 0) return { kind: 'skipped', line: `${label}: no comments`, mark: doneMark(entry) };
      let posted = cursor?.posted;
      let unmarked = cursor?.unmarked;
      if (!posted || !unmarked) {
        const held = await postedComments(target, entry.targetKey);
        posted = held.markers;
        unmarked = held.unmarked;
        await settleFound(entry, posted);
      }
      // Comments a Jira import carried have no marker: found by their original date and author.
      if (unmarked.length > 0 && comments.some((c) => !posted.has(c.id))) {
        await people.learn(comments.map((c) => c.createdBy));
        matchImported(comments, posted, unmarked, (c) => people.accountOf(c.createdBy?.id));
      }
      const missing = comments.flatMap((c, at) => (posted.has(c.id) ? [] : [{ c, at: offset + at }]));
      const earlier = missing.filter((m) => m.at < start);
      const own = missing.length - earlier.length;
      const already = Math.max(0, count - start) - own;
      // The next part goes on from here once this one has left its whole slice in Jira.
      const keepCursor = () => {
        if (!last) cursors.set(id, { part, read: count, rest, posted, unmarked });
      };
      const alreadyNote = already ? ` (${already} already in Jira)` : '';
      // A gap before this part: an earlier part stopped at a refusal (the item stays stopped there), or the
      // thread shrank in ADO since the phase started (the gap is filled first, in order).
      const first = earlier[0];
      if (first && !dryRun && (await stoppedEarlier(id)))
        return {
          kind: 'skipped',
          line: `${label}: not posted: the thread stopped earlier, at Azure DevOps comment ${first.c.id} (skipped)`,
        };
      const todo = dryRun ? missing.filter((m) => m.at >= start) : missing;
      if (todo.length === 0) {
        if (!last) {
          keepCursor();
          return {
            kind: 'skipped',
            line: `${label}: comments ${start + 1}-${count} already in Jira: skipped`,
          };
        }
        return {
          kind: 'skipped',
          line: `${label}: all ${count} comments already in Jira: skipped`,
          mark: doneMark(entry),
        };
      }
      if (dryRun) {
        keepCursor();
        return { kind: 'success', line: `${label}: would post ${todo.length} comments${alreadyNote}` };
      }

      // What the bodies name: the authors (for mentions) and the items they refer to.
      await people.learn([...Object.values(item.fields), ...comments.map((c) => c.createdBy)]);
      const referred = new Set<number>();
      for (const { c } of todo)
        for (const m of (c.text ?? '').matchAll(REFERENCE)) referred.add(Number(m[1] ?? m[2]));
      const keys = await referredKeys(referred);
      const adfContext: HtmlToAdfContext = {
        mention: ({ adoId, displayName }) => {
          const accountId = people.accountOf(adoId);
          return accountId ? { accountId, displayName } : undefined;
        },
        workItemKey: (ref) => keys.get(ref),
        issueUrl: (key) => `${siteUrl}/browse/${encodeURIComponent(key)}`,
      };

      const warnings: string[] = [];
      let names: Promise<Set<string>> | undefined;
      const attached = () => {
        names ??= attachedNames(target, entry.targetKey);
        return names;
      };
      // Journalled before the first post (an issue the run did not create), settled with their ids after the last;
      // those not posted for sure (refused with a 4xx, or never sent: the part stopped before them) are forgotten.
      const unsent = new Set(todo.map(({ c }) => markerText(c.id)));
      const records = await journal.intend(
        entry,
        PHASES.comments,
        todo.map(({ c }) => ({ kind: 'comment' as const, find: markerText(c.id), id: null })),
      );
      const settle = async () => {
        await journal.settle(records, ({ write }) =>
          write.kind === 'comment'
            ? posted.get(todo.find(({ c }) => markerText(c.id) === write.find)?.c.id ?? -1)
            : undefined,
        );
        await journal.forget(
          records.filter(({ write }) => write.kind === 'comment' && unsent.has(write.find)),
        );
      };
      try {
        for (const { c } of todo) {
          if (stopped()) throw new ChunkAbandoned(`${label}: stopped after ${done} comments`);
          current = c.id;
          const converted = commentDocument(c, adfContext, id);
          // Over Jira's limit, or not converted at all (the converter's warning says so): the whole comment goes
          // in as a file first, then the comment that names it.
          if (converted.full) {
            if (converted.full.measured !== undefined)
              warnings.push(
                `comment ${c.id} measures ${converted.full.measured} characters as ADF, over Jira's limit: cut, the full text attached as ${converted.full.fileName}`,
              );
            const refused = await attachFullComment(target, { entry, journal }, converted.full, attached);
            if (refused) warnings.push(`comment ${c.id}: ${refused}`);
          }
          warnings.push(...converted.warnings.map((w) => w.message));
          if (converted.fellBackToText)
            warnings.push(`comment ${c.id} kept as plain text (${converted.fellBackToText})`);
          const post = async () => {
            try {
              return await target.addComment(entry.targetKey, converted.doc, { urgent });
            } catch (err) {
              // Refused as converted (a limit the validator does not know): once more as its text. Only a 4xx
              // is sure to have written nothing; after a 5xx the comment may be there (the marker tells, later).
              const reason = refusalOf(err);
              const refused = err instanceof TrackerHttpError && err.status >= 400 && err.status < 500;
              if (reason === undefined || !refused || converted.fellBackToText) throw err;
              const plain = await target.addComment(entry.targetKey, converted.plain(), { urgent });
              warnings.push(`comment ${c.id} kept as plain text (${reason})`);
              return plain;
            }
          };
          let comment: { id: string };
          unsent.delete(markerText(c.id));
          try {
            comment = await post();
          } catch (err) {
            // Its last try refused: not in Jira.
            if (writeRefused(err)) unsent.add(markerText(c.id));
            throw err;
          }
          posted.set(c.id, String(comment.id));
          done++;
        }
      } finally {
        await settle();
      }
      if (!last) keepCursor();
      const notes = warnings.length ? `; warnings: ${summarise(warnings)}` : '';
      return {
        kind: 'success',
        line: `${label}: ${done} comments posted${alreadyNote}${notes}`,
        ...(last ? { mark: doneMark(entry) } : {}),
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

  // The thread's last part under way in this pass, by item: its next part waits for it.
  const threads = new Map<number, Promise<unknown>>();
  // Past its time budget a part stops before its next post and fails its item, as a refusal does.
  const budgetMs = deps.itemBudgetMs ?? ITEM_BUDGET_MS;
  const work = async (index: number, stopped: () => boolean): Promise<UnitOutcome> => {
    const unit = all[index] as CommentUnit;
    const before = threads.get(unit.id);
    const late = (reason: string): PartResult => ({
      kind: 'failure',
      reason,
      line: `#${unit.id}${partLabel(unit)}: comments stopped: ${reason}`,
    });
    const result = (async () => {
      await before?.catch(() => undefined);
      const r = await withinItemBudget(budgetMs, stopped, (s) => one(index, unit, s), late);
      if (r.kind === 'failure') stoppedNow.add(unit.id);
      return r;
    })();
    threads.set(unit.id, result);
    try {
      const { mark, ...r } = await result;
      // The item recorded as done with the checkpoint's move over the unit: an entry a crash lost before the
      // move only has the unit worked again, and the unit reads Jira's markers before it posts.
      return { ...unitResult(unit.id, r), ...(mark ? { marks: [mark] } : {}) };
    } finally {
      if (threads.get(unit.id) === result) threads.delete(unit.id);
    }
  };
  return {
    work,
    close: () => {
      cursors.clear();
      return people.save();
    },
  };
}

export const commentsPhase: PhaseModule = {
  units: commentsUnits,
  open: openComments,
};
