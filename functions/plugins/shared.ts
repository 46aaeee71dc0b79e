/**
 * What the plugins share: the unit worker around their per-item work (block reads, id map), the run's kept list of
 * units, an issue's Jira worklogs read and posted (`adjustEstimate=leave`), the run's people, and a refusal
 * turned into an item's reason.
 */
import { type PhaseContext, UnitFailed, type UnitWorker } from '#phase-kit/context.ts';
import { blockReads, type ItemResult, refusalOf, runArtifactKey, unitResult } from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { JiraClient } from '#trackers/jira/client.ts';

/** Jira's largest worklog page. */
const WORKLOG_PAGE = 5000;

/** A Jira worklog as far as the plugins read it. */
export interface IssueWorklog {
  comment?: unknown;
  started?: string;
  timeSpentSeconds?: number;
}

/** Every worklog of an issue, page after page; null when Jira has no such issue. */
export async function issueWorklogs(jira: JiraClient, key: string): Promise<IssueWorklog[] | null> {
  const all: IssueWorklog[] = [];
  for (let startAt = 0; ; ) {
    const res = await jira.http.request<{ worklogs?: IssueWorklog[]; total?: number }>(
      'GET',
      `/rest/api/3/issue/${encodeURIComponent(key)}/worklog`,
      { query: { startAt, maxResults: WORKLOG_PAGE }, accept: [404] },
    );
    if (res.status === 404) return null;
    const page = res.body.worklogs ?? [];
    all.push(...page);
    startAt += page.length;
    if (page.length === 0 || startAt >= (res.body.total ?? 0)) return all;
  }
}

/** Posts one worklog leaving the remaining estimate alone (the Jira client's addWorklog cannot say so). */
export async function postWorklog(
  jira: JiraClient,
  key: string,
  worklog: { started: string; timeSpentSeconds: number; comment: unknown },
): Promise<{ id: string }> {
  const res = await jira.http.request<{ id: string }>(
    'POST',
    `/rest/api/3/issue/${encodeURIComponent(key)}/worklog`,
    { query: { adjustEstimate: 'leave' }, body: worklog, notIdempotent: true },
  );
  return { id: String(res.body.id) };
}

/**
 * Posts a worklog to the item's issue (`post`), journalled first when the run did not create the issue
 * (#phase-kit/write-journal.ts), by the marker its comment carries (`find`), and settled with its id after: a
 * rollback of the run removes it. A post Jira refused (it answered a 4xx: nothing was written) forgets its intent
 * (WriteJournal.attempt), so the rollback's list names no worklog the run never added; one whose answer never
 * came keeps it.
 */
export async function postJournalled(
  ctx: PhaseContext,
  item: MigratedItem,
  find: string,
  post: () => Promise<{ id: string }>,
): Promise<void> {
  const journal = WriteJournal.of(ctx);
  const records = await journal.intend(item.entry, ctx.run.cursor.phase, [
    { kind: 'worklog', find, id: null },
  ]);
  const { id } = await journal.attempt(records, post);
  await journal.settle(records, () => id);
}

/** The run's people: lower-case e-mail -> Jira accountId (confirmed mappings first, then preflight's). */
export function peopleOf(ctx: PhaseContext): Map<string, string> {
  const people = new Map<string, string>();
  for (const [email, id] of Object.entries(ctx.preflight.mappings?.users ?? {})) {
    if (id) people.set(email.toLowerCase(), id);
  }
  for (const [email, id] of Object.entries(ctx.preflight.users)) people.set(email.toLowerCase(), id);
  return people;
}

/**
 * Why the target refused (`explain`, Jira's refusal by default) as an item's reason; anything else (a service
 * unreachable, a bug) is thrown on, so the engine records the unit's item failed.
 */
export function refusalReason(
  err: unknown,
  explain: (err: unknown) => string | undefined = refusalOf,
): string {
  const reason = explain(err);
  if (reason === undefined) throw err;
  return reason;
}

/**
 * The run's units: `candidates` (in manifest order) that the id map knows, read once and kept as an artifact,
 * so a resume sees the same list.
 */
export async function keptUnits(
  ctx: PhaseContext,
  artifactName: string,
  candidates: () => Promise<number[]>,
): Promise<number[]> {
  const { deps, run } = ctx;
  const key = runArtifactKey(run, artifactName);
  const saved = await deps.artifacts.get(key);
  if (saved) return JSON.parse(saved) as number[];
  const ids = await candidates();
  const known = ids.length ? await deps.store.idMap.getMany(run.tenantId, run.projectId, ids) : new Map();
  const units = ids.filter((id) => known.has(id));
  await deps.artifacts.put(key, JSON.stringify(units));
  return units;
}

/** One migrated item a unit works on: its ADO id, Jira key and the label its lines start with. */
export interface MigratedItem {
  id: number;
  key: string;
  label: string;
  /** Its id map entry: whether the run created the issue (a write to one it did not is journalled). */
  entry: IdMapEntry;
}

/**
 * The worker of a plugin whose units are `units` (source ids): `prepare` reads what a block of up to CHUNK_SIZE
 * items needs in one go (with the block's id map entries, once, when its first unit asks) and returns the work for
 * one item; an item the id map lacks is skipped. A unit that throws names its item (UnitFailed), so the engine
 * records the failure against it.
 */
export function itemsWorker(
  ctx: PhaseContext,
  units: number[],
  prepare: (ids: number[]) => Promise<(item: MigratedItem, stopped: () => boolean) => Promise<ItemResult>>,
): UnitWorker {
  const { deps, run } = ctx;
  // No read ahead (0): a block read past the invocation's last unit would be a call for nothing.
  const block = blockReads(
    async (from, to) => {
      const ids = units.slice(from, to);
      const [entries, work] = await Promise.all([
        deps.store.idMap.getMany(run.tenantId, run.projectId, ids),
        prepare(ids),
      ]);
      return { entries, work };
    },
    units.length,
    0,
  );
  return {
    work: async (index, stopped) => {
      const id = units[index] as number;
      try {
        const { entries, work } = await block(index);
        const entry = entries.get(id);
        if (!entry) return unitResult(id, { kind: 'skipped', line: `#${id}: not in the id map: skipped` });
        const key = entry.targetKey;
        return unitResult(id, await work({ id, key, label: `#${id} ${key}`, entry }, stopped));
      } catch (err) {
        throw new UnitFailed([id], err);
      }
    },
  };
}
