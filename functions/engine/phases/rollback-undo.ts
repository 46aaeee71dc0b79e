/**
 * A rollback's side of the write journal (#domain/rollback/journal.ts), for an issue the run did not create (one it
 * found, or an earlier run's): the preview reads what Jira holds now of each write the run journalled there (reads
 * only: the issue's files and links, its comments, worklogs and remote links, its change history), and what a
 * plugin's add-on holds of the writes journalled there (a test's steps: through the plugin's client, built from
 * the tenant's stored configuration, plugin-phase.ts pluginUndo), and the domain decides; the rollback carries out
 * the preview's decisions (each thing the run added removed by its id, each field put back to its value before,
 * a plugin's through the same client), then forgets the records it carried out, so a block worked again after a
 * crash finds them undone and does nothing twice. A record kept (changed after the run, a status move, refused)
 * stays for a later pass.
 */
import {
  decideUndo,
  editValueOf,
  type FieldValue,
  fieldChangedAt,
  finds,
  goesWithIssue,
  goneWithIssue,
  JOURNAL_KINDS,
  type JournalRecord,
  journalRef,
  PLUGIN_OF_KIND,
  refusedUndo,
  settled,
  type UndoDecision,
  type UndoRules,
  undoneBefore,
  unreachableUndo,
  type WriteNow,
} from '#domain/rollback/journal.ts';
import type { PhaseContext } from '#phase-kit/context.ts';
import type { JournalOf } from '#store/write-journal.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { pluginUndo } from '../plugin-phase.ts';
import { refusalOf } from './links-jira.ts';

const journalOf = ({ run }: Pick<PhaseContext, 'run'>): JournalOf => ({
  tenantId: run.tenantId,
  projectId: run.projectId,
  runId: run.id,
});

/** A plugin's add-on the rollback cannot reach (disabled since the preview, its configuration unusable). */
class PluginUnreachable extends Error {
  override name = 'PluginUnreachable';
}

const isGone = (err: unknown) => err instanceof TrackerHttpError && err.status === 404;

/** The records in the list's order: by kind (comments first, fields, then the status), then by what they are. */
const ordered = (records: JournalRecord[]) =>
  [...records].sort(
    (a, b) =>
      JOURNAL_KINDS.indexOf(a.write.kind) - JOURNAL_KINDS.indexOf(b.write.kind) ||
      journalRef(a.write).localeCompare(journalRef(b.write)),
  );

interface Thing {
  id: string;
  changed?: string;
  body?: unknown;
}

/**
 * Matches a list Jira answers (comments, worklogs, one at a time) to the records of a kind: by the id a settled
 * record holds, else by the text it finds (an intent whose id was never recorded), each thing once.
 */
class Matcher {
  private readonly byId = new Map<string, JournalRecord>();
  private readonly open: JournalRecord[] = [];
  readonly now = new Map<string, WriteNow>();

  constructor(records: JournalRecord[]) {
    for (const r of records) {
      const id = 'id' in r.write ? r.write.id : null;
      if (id !== null) this.byId.set(id, r);
      else this.open.push(r);
    }
  }

  see(thing: Thing): void {
    const known = this.byId.get(thing.id);
    const record =
      known ??
      this.open.find(
        (r) =>
          !this.now.has(journalRef(r.write)) &&
          (r.write.kind === 'comment' || r.write.kind === 'worklog') &&
          finds(r.write.find, thing.body),
      );
    if (record)
      this.now.set(journalRef(record.write), {
        id: thing.id,
        ...(thing.changed !== undefined ? { changed: thing.changed } : {}),
      });
  }
}

/** The plugin's side of the rollback, its configuration opened once an invocation (a failed read made again). */
function undoOf(ctx: PhaseContext, plugin: string): ReturnType<typeof pluginUndo> {
  const name = `rollback.plugin-undo.${plugin}`;
  const made = ctx.invocation.keep(name, () => pluginUndo(ctx.deps, ctx.run.tenantId, plugin));
  made.catch(() => ctx.invocation.drop(name, made));
  return made;
}

/** The plugin whose add-on holds the record's write; undefined: Jira holds it. */
const pluginOf = (r: JournalRecord) => PLUGIN_OF_KIND[r.write.kind];

/**
 * What the plugins' add-ons hold now of the records written there (by journalRef), and the records whose plugin
 * cannot be reached (the plugin disabled, its configuration unusable): decided kept, with why.
 */
async function readPluginsNow(
  ctx: PhaseContext,
  key: string,
  records: JournalRecord[],
): Promise<{ now: Map<string, WriteNow>; unreachable: Map<string, string> }> {
  const now = new Map<string, WriteNow>();
  const unreachable = new Map<string, string>();
  for (const plugin of new Set(records.flatMap((r) => pluginOf(r) ?? []))) {
    const of = records.filter((r) => pluginOf(r) === plugin);
    const opened = await undoOf(ctx, plugin);
    if ('reason' in opened) {
      for (const r of of) unreachable.set(journalRef(r.write), opened.reason);
      continue;
    }
    for (const [ref, found] of await opened.undo.now(key, of)) now.set(ref, found);
  }
  return { now, unreachable };
}

/** What Jira holds now of each journalled write on the issue (by journalRef); undefined: the issue is gone. */
async function readNow(
  ctx: PhaseContext,
  key: string,
  records: JournalRecord[],
): Promise<Map<string, WriteNow> | undefined> {
  const { target } = ctx.deps;
  const of = (kind: JournalRecord['write']['kind']) => records.filter((r) => r.write.kind === kind);
  const now = new Map<string, WriteNow>();
  let fields: Record<string, unknown>;
  try {
    fields =
      (
        await target.getIssue(key, [
          'updated',
          ...(of('status').length ? ['status'] : []),
          ...(of('attachment').length ? ['attachment'] : []),
          ...(of('issueLink').length ? ['issuelinks'] : []),
        ])
      ).fields ?? {};
  } catch (err) {
    if (isGone(err)) return undefined;
    throw err;
  }

  const files = (fields.attachment ?? []) as { id: string | number; filename?: string }[];
  const claimed = new Set<string>();
  for (const r of of('attachment')) {
    if (r.write.kind !== 'attachment') continue;
    const { id, name, had } = r.write;
    const file =
      id !== null
        ? files.find((f) => String(f.id) === id)
        : files.find((f) => f.filename === name && !had.includes(String(f.id)) && !claimed.has(String(f.id)));
    if (file) {
      claimed.add(String(file.id));
      now.set(journalRef(r.write), { id: String(file.id) });
    }
  }

  const links = (fields.issuelinks ?? []) as {
    id: string;
    type?: { name?: string };
    outwardIssue?: { key?: string };
    inwardIssue?: { key?: string };
  }[];
  for (const r of of('issueLink')) {
    if (r.write.kind !== 'issueLink') continue;
    const { type, subjectKey, objectKey } = r.write;
    // On its subject the link shows its object as the outward issue; on its object, its subject as the inward one.
    const link = links.find(
      (l) =>
        l.type?.name?.toLowerCase() === type.toLowerCase() &&
        (key === subjectKey ? l.outwardIssue?.key === objectKey : l.inwardIssue?.key === subjectKey),
    );
    if (link) now.set(journalRef(r.write), { id: String(link.id) });
  }

  if (of('comment').length) {
    const comments = new Matcher(of('comment'));
    for await (const c of target.comments(key))
      comments.see({ id: String(c.id), body: c.body, ...(c.updated ? { changed: c.updated } : {}) });
    for (const [ref, found] of comments.now) now.set(ref, found);
  }
  if (of('worklog').length) {
    const worklogs = new Matcher(of('worklog'));
    for await (const w of target.worklogs(key))
      worklogs.see({ id: String(w.id), body: w.comment, ...(w.updated ? { changed: w.updated } : {}) });
    for (const [ref, found] of worklogs.now) now.set(ref, found);
  }

  if (of('remoteLink').length) {
    const globalIds = new Set(
      (await target.remoteLinks(key)).flatMap((l) => (l.globalId ? [l.globalId] : [])),
    );
    for (const r of of('remoteLink'))
      if (r.write.kind === 'remoteLink' && globalIds.has(r.write.globalId))
        now.set(journalRef(r.write), { id: r.write.globalId });
  }

  const status = (fields.status as { name?: string } | undefined)?.name;
  for (const r of of('status')) if (status !== undefined) now.set(journalRef(r.write), { status });

  const changed = of('field');
  if (changed.length) {
    // Only the entries' dates and the fields they touched are kept: an issue's history may be long.
    const histories: { created?: string; items?: { field?: string; fieldId?: string }[] }[] = [];
    for await (const h of target.changelog(key))
      histories.push({
        ...(h.created ? { created: h.created } : {}),
        items: (h.items ?? []).map((i) => ({
          ...(i.field !== undefined ? { field: i.field } : {}),
          ...(i.fieldId !== undefined ? { fieldId: i.fieldId } : {}),
        })),
      });
    for (const r of changed) {
      if (r.write.kind !== 'field') continue;
      const at = fieldChangedAt(r.write.field, histories);
      now.set(journalRef(r.write), at ? { changed: at } : {});
    }
  }
  return now;
}

/**
 * The preview's decisions for what the run journalled on the item's issue (none: it wrote nothing there), from
 * what Jira holds now (reads only).
 */
export async function planUndo(
  ctx: PhaseContext,
  item: { sourceId: number; targetKey: string },
  rules: UndoRules,
  deletedToo: (key: string) => Promise<boolean>,
): Promise<UndoDecision[]> {
  const records = ordered(await ctx.deps.store.writeJournal.ofItem(journalOf(ctx), item.sourceId));
  if (records.length === 0) return [];
  const jira = records.filter((r) => !pluginOf(r));
  const now = await readNow(ctx, item.targetKey, jira);
  // Gone with the issue: what an add-on held of it too.
  if (!now) return records.map(goneWithIssue);
  const plugins = await readPluginsNow(
    ctx,
    item.targetKey,
    records.filter((r) => pluginOf(r)),
  );
  for (const [ref, found] of plugins.now) now.set(ref, found);
  return Promise.all(
    records.map(async (r) => {
      const why = plugins.unreachable.get(journalRef(r.write));
      if (why !== undefined) return unreachableUndo(r, why);
      const d = decideUndo(r, now.get(journalRef(r.write)), rules);
      // A link to an issue this rollback deletes goes with it: nothing to take back here.
      const { write } = r;
      if (d.action !== 'remove' || write.kind !== 'issueLink') return d;
      const other = write.subjectKey === item.targetKey ? write.objectKey : write.subjectKey;
      return (await deletedToo(other)) ? goesWithIssue(d, other) : d;
    }),
  );
}

/** Takes one write back as decided; `gone` when Jira no longer had it. */
async function undoOne(ctx: PhaseContext, record: JournalRecord, d: UndoDecision): Promise<'done' | 'gone'> {
  const { target, artifacts } = ctx.deps;
  const { key, write } = record;
  if (d.action === 'restore' && write.kind === 'field') {
    const before = write.beforeFile
      ? (JSON.parse((await artifacts.get(write.beforeFile)) ?? 'null') as FieldValue)
      : write.before;
    try {
      await target.editIssue(key, { fields: { [write.field]: editValueOf(write.field, before) } });
      return 'done';
    } catch (err) {
      if (isGone(err)) return 'gone';
      throw err;
    }
  }
  const id = d.id;
  if (id === undefined) return 'gone';
  const plugin = pluginOf(record);
  if (plugin) {
    const opened = await undoOf(ctx, plugin);
    if ('reason' in opened) throw new PluginUnreachable(opened.reason);
    return (await opened.undo.remove(record, id)) === 'gone' ? 'gone' : 'done';
  }
  let answer: 'deleted' | 'gone';
  switch (write.kind) {
    case 'comment':
      answer = await target.deleteComment(key, id);
      break;
    case 'worklog':
      answer = await target.deleteWorklog(key, id);
      break;
    case 'attachment':
      answer = await target.deleteAttachment(id);
      break;
    case 'issueLink':
      answer = await target.deleteIssueLink(id);
      break;
    case 'remoteLink':
      answer = await target.deleteRemoteLink(key, id);
      break;
    default:
      return 'gone';
  }
  return answer === 'gone' ? 'gone' : 'done';
}

/**
 * The rollback of what the run journalled on one item's issue, as the preview decided (`changes`), one write after
 * another; then the records carried out (or gone) are forgotten. A record no longer there was carried out before
 * a crash: gone, not done again. Jira refusing one (no permission, a field off the edit screen) keeps it, in
 * Jira's words.
 */
export async function carryOutUndo(
  ctx: PhaseContext,
  sourceId: number,
  changes: UndoDecision[],
): Promise<UndoDecision[]> {
  if (!changes.some((c) => c.action === 'remove' || c.action === 'restore')) return changes;
  const journal = ctx.deps.store.writeJournal;
  const records = new Map(
    (await journal.ofItem(journalOf(ctx), sourceId)).map((r) => [journalRef(r.write), r]),
  );
  const done: UndoDecision[] = [];
  for (const c of changes) {
    if (c.action !== 'remove' && c.action !== 'restore') {
      done.push(c);
      continue;
    }
    const record = records.get(c.ref);
    if (!record) {
      done.push(undoneBefore(c));
      continue;
    }
    try {
      const answer = await undoOne(ctx, record, c);
      done.push(answer === 'gone' ? { ...c, action: 'gone', reason: 'no longer in Jira' } : c);
    } catch (err) {
      if (err instanceof PluginUnreachable) {
        done.push(unreachableUndo(record, err.message));
        continue;
      }
      const reason = refusalOf(err);
      if (reason === undefined) throw err;
      done.push(refusedUndo(c, reason));
    }
  }
  await journal.forget(
    journalOf(ctx),
    done.filter(settled).flatMap((c) => records.get(c.ref) ?? []),
  );
  return done;
}
