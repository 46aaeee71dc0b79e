/**
 * What phases 3 (hierarchy) and 4 (links) share: reading the issues' current state before writing (so a chunk
 * worked again after a crash writes nothing twice), writing an issue link the right way round, the issues'
 * remote links, and telling a refusal by Jira (the unit fails, the run goes on) from a fault (the chunk is
 * worked again).
 */
import { textToAdf } from '#domain/adf/index.ts';
import type { Run } from '#domain/runs.ts';
import type { InvocationScope } from '#phase-kit/invocation.ts';
import { inPool, isRefusal } from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { Store } from '#store/index.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraClient, JiraIssue } from '#trackers/jira/client.ts';

/** One entry of an issue's `issuelinks`: the other end is `outwardIssue` when this issue is the subject. */
export interface IssueLinkView {
  type?: { name?: string };
  inwardIssue?: { key?: string };
  outwardIssue?: { key?: string };
}

export interface IssueState {
  key: string;
  parentKey: string | null;
  links: IssueLinkView[];
}

/** Jira's search takes at most this many ids for read-after-write consistency (`reconcileIssues`). */
const RECONCILE_MAX = 50;
/** Searches of issue states in flight at once (each reads up to RECONCILE_MAX issues). */
const STATE_READS_IN_FLIGHT = 8;

/**
 * The current parent and issue links of these issues (by Jira id), read so that our own recent writes show:
 * one search per 50 issues naming them in `reconcileIssues`. Should the search be refused (an issue deleted
 * since, which JQL reports as an error), each issue is read on its own; a missing one is left out.
 */
export async function readIssueStates(target: JiraClient, ids: string[]): Promise<Map<string, IssueState>> {
  const states = new Map<string, IssueState>();
  const unique = [...new Set(ids)];
  const put = (issue: JiraIssue) => {
    const f = issue.fields ?? {};
    const parent = f.parent as { key?: string } | undefined;
    states.set(String(issue.id), {
      key: issue.key,
      parentKey: parent?.key ?? null,
      links: (f.issuelinks as IssueLinkView[] | undefined) ?? [],
    });
  };
  const slices: string[][] = [];
  for (let i = 0; i < unique.length; i += RECONCILE_MAX) slices.push(unique.slice(i, i + RECONCILE_MAX));
  // Side by side: a phase's plan reads every migrated issue, and one search after another made a 2,000-item
  // plan a chain of 40 round trips; the HTTP layer holds the search endpoint to what Jira takes.
  await inPool(slices, STATE_READS_IN_FLIGHT, async (slice) => {
    try {
      const found = await target.search(`id in (${slice.join(', ')})`, {
        fields: ['parent', 'issuelinks'],
        reconcileIssues: slice.map(Number),
      });
      for (const issue of found) put(issue);
    } catch (err) {
      if (!(err instanceof TrackerHttpError) || err.status !== 400) throw err;
      for (const id of slice) {
        try {
          put(await target.getIssue(id, ['parent', 'issuelinks']));
        } catch (e) {
          if (!(e instanceof TrackerHttpError) || e.status !== 404) throw e;
        }
      }
    }
  });
  return states;
}

/** Whether `subjectKey` already reads "`subjectKey` <type's outward phrase> `objectKey`" (either way if symmetric). */
export function hasIssueLink(
  subject: IssueState,
  type: string,
  objectKey: string,
  symmetric: boolean,
): boolean {
  const wanted = type.toLowerCase();
  return subject.links.some(
    (l) =>
      l.type?.name?.toLowerCase() === wanted &&
      (l.outwardIssue?.key === objectKey || (symmetric && l.inwardIssue?.key === objectKey)),
  );
}

/**
 * Writes "`subjectKey` <outward phrase> `objectKey`" ("A blocks B"): Jira takes the subject as `inwardIssue`.
 * The ADO link's comment travels in the same request, so the link and its comment are written together or
 * not at all and a retried chunk never adds the comment twice.
 */
export async function writeIssueLink(
  target: JiraClient,
  link: { type: string; subjectKey: string; objectKey: string; comment?: string },
): Promise<void> {
  await target.createIssueLink({
    type: link.type,
    inwardKey: link.subjectKey,
    outwardKey: link.objectKey,
    ...(link.comment ? { comment: textToAdf(link.comment) } : {}),
  });
}

/** The `globalId`s of an issue's remote links. */
export async function remoteLinkIds(target: JiraClient, key: string): Promise<Set<string>> {
  return new Set((await target.remoteLinks(key)).flatMap((r) => (r.globalId ? [r.globalId] : [])));
}

/**
 * Jira's reason when it refused a write for good (a 4xx other than 401 and 429), else undefined: throttling,
 * authentication, 5xx and dropped connections are faults, thrown on so the chunk is worked again.
 */
export function refusalOf(err: unknown): string | undefined {
  if (!isRefusal(err)) return undefined;
  const body = err.body as { errorMessages?: string[]; errors?: Record<string, string> } | string | undefined;
  const parts =
    body && typeof body === 'object'
      ? [...(body.errorMessages ?? []), ...Object.entries(body.errors ?? {}).map(([k, v]) => `${k}: ${v}`)]
      : typeof body === 'string' && body
        ? [body.slice(0, 200)]
        : [];
  return `${err.status} ${parts.join('; ') || 'refused by Jira'}`;
}

/** Adds `phase` to the entries' `phasesDone` (the per-item checkpoint). */
export async function markPhaseDone(
  store: Store,
  run: Run,
  entries: IdMapEntry[],
  phase: number,
): Promise<void> {
  const changed = entries
    .filter((e) => !e.phasesDone.includes(phase))
    .map((e) => ({ ...e, phasesDone: [...e.phasesDone, phase].sort((a, b) => a - b), updatedAt: nowIso() }));
  if (changed.length) await store.idMap.putMany(run.tenantId, run.projectId, changed);
}

/** Where an invocation keeps a plan it read (InvocationScope): the plan dies with the invocation. */
const heldPlan = (key: string) => `plan:${key}`;

/**
 * A phase's plan held whole (the comments phase's units; the hierarchy and links plans are stored in parts,
 * #phase-kit/plan-slices.ts): the stored one, else computed now and stored. Computed only at the phase's start
 * (the runner asks for the units before any chunk), and re-read just before storing so that two invocations
 * racing at the start end up with the same plan. Read once per invocation and kept in its scope, not in the
 * process: a plan holds the phase's units over the whole project, and a warm container's next invocation (a
 * later phase, another run) must not find it still held.
 */
export async function loadOrComputePlan<T>(
  artifacts: { get(key: string): Promise<string | undefined>; put(key: string, body: string): Promise<void> },
  key: string,
  compute: () => Promise<T>,
  invocation: InvocationScope,
): Promise<T> {
  const held = invocation.held<T>(heldPlan(key));
  if (held !== undefined) return held;
  let body = await artifacts.get(key);
  if (body === undefined) {
    const plan = await compute();
    body = await artifacts.get(key);
    if (body === undefined) {
      body = JSON.stringify(plan);
      await artifacts.put(key, body);
    }
  }
  const plan = JSON.parse(body) as T;
  return invocation.keep(heldPlan(key), () => plan);
}
