/**
 * What the plugins share: the chunk around their per-item work (id map, pool, tally), the run's kept list of
 * units, an issue's Jira worklogs read and posted (`adjustEstimate=leave`), the run's people, and a refusal
 * turned into an item's reason.
 */
import { CHUNK_SIZE } from '#domain/runs.ts';
import { type ChunkOutcome, type ChunkScope, emptyOutcome, type PhaseContext } from '#phase-kit/context.ts';
import {
  ITEM_CONCURRENCY,
  type ItemResult,
  inPool,
  refusalOf,
  runArtifactKey,
  tallyResults,
} from '#phase-kit/toolkit.ts';
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
): Promise<void> {
  await jira.http.request('POST', `/rest/api/3/issue/${encodeURIComponent(key)}/worklog`, {
    query: { adjustEstimate: 'leave' },
    body: worklog,
    notIdempotent: true,
  });
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
 * unreachable, a bug) is thrown on, so the engine works the chunk again.
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

/** A thrown chunk's scope: its own units, not the manifest's first items. */
export function unitsScope(units: (ctx: PhaseContext) => Promise<number[]>) {
  return async (ctx: PhaseContext, index: number): Promise<ChunkScope> => {
    const items = (await units(ctx)).slice(index, index + CHUNK_SIZE);
    return { processed: items.length, items };
  };
}

/** One migrated item a chunk works on: its ADO id, Jira key and the label its lines start with. */
export interface MigratedItem {
  id: number;
  key: string;
  label: string;
}

/**
 * One chunk of `units`: `prepare` reads what the chunk's items need in one go and returns the work for one
 * item; items the id map lacks are skipped; a few items go side by side and the results are tallied.
 */
export async function itemsChunk(
  ctx: PhaseContext,
  units: number[],
  index: number,
  prepare: (ids: number[]) => Promise<(item: MigratedItem, stopped: () => boolean) => Promise<ItemResult>>,
): Promise<ChunkOutcome> {
  const { deps, run } = ctx;
  const outcome: ChunkOutcome = { processed: 0, ...emptyOutcome() };
  const ids = units.slice(index, index + CHUNK_SIZE);
  if (ids.length === 0) return outcome;
  outcome.processed = ids.length;
  const entries = await deps.store.idMap.getMany(run.tenantId, run.projectId, ids);
  const work = await prepare(ids);
  const one = async (id: number, stopped: () => boolean): Promise<ItemResult> => {
    const entry = entries.get(id);
    if (!entry) return { kind: 'skipped', line: `#${id}: not in the id map: skipped` };
    const key = entry.targetKey;
    return work({ id, key, label: `#${id} ${key}` }, stopped);
  };
  const results = await inPool(ids, ITEM_CONCURRENCY, one);
  tallyResults(ids, results, outcome);
  return outcome;
}
