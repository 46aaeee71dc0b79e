/**
 * Phases 6 (transitions) and 7 (comments) over the sandboxes. Phases 1-2 run through the real runner, which
 * is stopped once it moves past create; the two modules are then worked chunk by chunk here, as the runner
 * would. Checked against Jira: every issue in its mapped status (or left where it was, with a warning, when
 * the workflow offers no way), Removed ones Won't Do; every item's comments there once, in ADO's order, with
 * the original author and date and Jira mentions for people with accounts; a second pass writes nothing; a
 * worker killed between two posts resumes without a duplicate; a dry run writes nothing; a thread of over a
 * thousand comments is worked in parts over many chunks, resumes mid-thread without a duplicate, and stops
 * at a refusal until a later run continues it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdfNode, adfLength, JIRA_TEXT_LIMIT, validateAdf } from '../../functions/domain/adf/index.ts';
import type { RunOptions, RunType } from '../../functions/domain/runs.ts';
import { PHASES } from '../../functions/domain/runs.ts';
import { COMMENTS_PER_UNIT, commentsPhase } from '../../functions/engine/phases/comments.ts';
import { commentDocument, markerOf as markerInBody } from '../../functions/engine/phases/comments-format.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { transitionsPhase } from '../../functions/engine/phases/transitions.ts';
import { runBatch } from '../../functions/engine/runner.ts';
import {
  type ChunkOutcome,
  type EngineDeps,
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  SimulatedCrash,
} from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import type { AdoComment } from '../../functions/trackers/ado/client.ts';
import { TrackerHttpError } from '../../functions/trackers/http.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { adoSandboxState } from '../../local/sandbox/ado/index.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { workChunks } from '../support/phase-driver.ts';
import { createRun, recordFailures } from '../support/runs.ts';

const SEED = 11;
const ITEMS = 60;
let h: EngineHarness;

/** A Jira client that counts its writes and can die right after one (the write done, nothing recorded). */
class WatchedJira extends JiraClient {
  transitionsMade = 0;
  commentsPosted = 0;
  afterTransition?: (n: number) => void;
  afterComment?: (n: number, key: string) => void;

  override async transition(key: string, id: string, fields?: Record<string, unknown>) {
    await super.transition(key, id, fields);
    this.transitionsMade++;
    this.afterTransition?.(this.transitionsMade);
  }

  /** The comments read back, by issue. */
  commentsRead = new Map<string, number>();
  override async *comments(key: string) {
    for await (const c of super.comments(key)) {
      this.commentsRead.set(key, (this.commentsRead.get(key) ?? 0) + 1);
      yield c;
    }
  }

  /** Comments posted ahead of their endpoint's queue (a long thread's), by issue. */
  urgentPosts = new Map<string, number>();
  override async addComment(key: string, body: unknown, opts: { urgent?: boolean } = {}) {
    const out = await super.addComment(key, body, opts);
    if (opts.urgent) this.urgentPosts.set(key, (this.urgentPosts.get(key) ?? 0) + 1);
    this.commentsPosted++;
    this.afterComment?.(this.commentsPosted, key);
    return out;
  }
}

function watched(): WatchedJira {
  return new WatchedJira(
    { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
    { initialDelayMs: 20 },
  );
}

/** Phases 1-2 with the real runner, stopped once the run moves past create (whatever is registered later). */
async function createIssues(projectName: string, options: Partial<RunOptions> = {}, type: RunType = 'FULL') {
  const project =
    (await h.app.store.projects.list(h.tenant.tenantId)).find((p) => p.name === projectName) ??
    (await h.newProject(projectName));
  const run = await createRun(h.app.store, h.tenant.tenantId, project.id, type, options);
  const deps = h.deps();
  for (let calls = 0; calls < 100; calls++) {
    const answer = await runBatch(
      deps,
      { tenantId: h.tenant.tenantId, runId: run.id },
      () => 900_000,
      h.config.jira.projectKey,
    );
    const now = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    if (answer === 'failed') throw new Error(`run failed: ${now?.failureReason}`);
    if (answer === 'done' || (now?.cursor.phase ?? 0) > PHASES.create) return { project, runId: run.id };
  }
  throw new Error('phases 1-2 did not finish');
}

async function contextOf(runId: string, deps: EngineDeps): Promise<PhaseContext> {
  const run = (await h.app.store.runs.get(h.tenant.tenantId, runId))!;
  return { deps, run, preflight: await loadPreflight(deps, run), invocation: new InvocationScope() };
}

interface Totals extends Omit<ChunkOutcome, 'processed'> {
  units: number;
  chunks: number;
}

/**
 * Works a phase as the runner does: units once, then chunks from the checkpoint with one worker (a pass); a crash
 * loses the chunk under way and its worker, and a new pass works on from the last chunk done. `afterChunk` sees each
 * chunk's outcome once it is done (as the runner would checkpoint it).
 */
async function work(
  module: PhaseModule,
  ctx: PhaseContext,
  onCrash?: (index: number) => void,
  afterChunk?: (outcome: ChunkOutcome) => Promise<void>,
) {
  const units = await module.units(ctx);
  const totals: Totals = { units, chunks: 0, ...emptyOutcome() };
  let index = 0;
  const chunkDone = async (outcome: ChunkOutcome) => {
    expect(outcome.processed).toBeGreaterThan(0);
    expect(outcome.processed).toBeLessThanOrEqual(50);
    expect(outcome.success + outcome.skipped + outcome.failure).toBe(outcome.processed);
    // As the runner does: the failures the units carried are recorded with the checkpoint.
    await recordFailures(ctx, module === commentsPhase ? PHASES.comments : PHASES.transitions, outcome);
    await afterChunk?.(outcome);
    totals.chunks++;
    totals.failures.push(...outcome.failures);
    totals.success += outcome.success;
    totals.failure += outcome.failure;
    totals.skipped += outcome.skipped;
    totals.log.push(...outcome.log);
    index += outcome.processed;
  };
  while (index < units) {
    try {
      await workChunks(module, ctx, index, chunkDone);
    } catch (err) {
      if (!(err instanceof SimulatedCrash)) throw err;
      onCrash?.(index);
    }
  }
  expect(await module.units(ctx)).toBe(units); // stable for the run
  return totals;
}

interface Migrated {
  sourceId: number;
  targetKey: string;
  state: string;
  type: string;
}

async function migratedItems(projectId: string): Promise<Migrated[]> {
  const entries = await h.app.store.idMap.all(h.tenant.tenantId, projectId);
  const items = await h.deps().source.workItems(
    entries.map((e) => e.sourceId),
    { expand: 'none' },
  );
  const byId = new Map(items.map((i) => [i.id, i]));
  return entries.map((e) => ({
    sourceId: e.sourceId,
    targetKey: e.targetKey,
    state: String(byId.get(e.sourceId)?.fields['System.State']),
    type: String(byId.get(e.sourceId)?.fields['System.WorkItemType']),
  }));
}

async function adoComments(id: number): Promise<AdoComment[]> {
  const all: AdoComment[] = [];
  for await (const c of h.deps().source.comments(id)) all.push(c);
  return all;
}

interface JiraComment {
  id: string;
  body: { content: AdfNode[] };
}
const commentsOf = (issue: JiraIssueDump) =>
  ((issue.fields.comment as { comments?: JiraComment[] } | undefined)?.comments ?? []) as JiraComment[];
const nameOf = (issue: JiraIssueDump, field: string) =>
  (issue.fields[field] as { name?: string } | null | undefined)?.name ?? null;

function textOf(node: AdfNode | undefined): string {
  return node ? (node.text ?? '') + (node.content ?? []).map(textOf).join('') : '';
}
function nodesOf(node: AdfNode, type: string): AdfNode[] {
  return [...(node.type === type ? [node] : []), ...(node.content ?? []).flatMap((n) => nodesOf(n, type))];
}

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
function expectedHeader(c: AdoComment): string {
  const d = new Date(c.createdDate!);
  const hm = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  const date = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hm} UTC`;
  return `Originally posted by ${c.createdBy?.displayName} on ${date} (Azure DevOps comment ${c.id})`;
}

/** Units an item of `n` comments makes in phase 7: long threads come in parts. */
const partsOf = (n: number) => Math.max(1, Math.ceil(n / COMMENTS_PER_UNIT));

const markerOf = (c: JiraComment) => {
  const m = /\(Azure DevOps comment (\d+)\)$/.exec(textOf(c.body.content[0]));
  return m ? Number(m[1]) : undefined;
};

/** Every migrated item's comments in Jira: the same as ADO's, in order, headed, mentions resolved. */
async function checkComments(items: Migrated[]) {
  const issues = new Map((await h.jiraIssues()).map((i) => [i.key, i]));
  const people = sandboxPeople(SEED);
  let total = 0;
  let mentions = 0;
  let plainMentions = 0;
  let longest = 0;
  for (const item of items) {
    const ado = await adoComments(item.sourceId);
    const jira = commentsOf(issues.get(item.targetKey)!);
    expect(jira.map(markerOf), `comments of #${item.sourceId}`).toEqual(ado.map((c) => c.id));
    total += ado.length;
    longest = Math.max(longest, ado.length);
    for (const [i, c] of ado.entries()) {
      const body = jira[i]!.body;
      expect(textOf(body.content[0])).toBe(expectedHeader(c));
      const accounts = nodesOf(body as AdfNode, 'mention').map((m) => m.attrs?.id);
      for (const m of (c.text ?? '').matchAll(/data-vss-mention="version:2\.0,([0-9a-f-]+)"/g)) {
        const person = people.find((p) => p.adoId === m[1])!;
        if (person.on === 'both') {
          expect(accounts, `mention of ${person.displayName} in ${c.id}`).toContain(person.jiraAccountId);
          mentions++;
        } else {
          expect(textOf(body as AdfNode)).toContain(`@${person.displayName}`);
          plainMentions++;
        }
      }
    }
  }
  return { total, mentions, plainMentions, longest };
}

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: SEED });
});
afterAll(async () => {
  await h?.close();
});

/** Where the default workflows put each ADO state (the spec's table, not the engine's code). */
const DEFAULT_TARGET: Record<string, string> = {
  New: 'To Do',
  Design: 'To Do',
  Active: 'In Progress',
  Ready: 'In Progress',
  Resolved: 'In Review',
  Closed: 'Done',
  Removed: "Won't Do",
};

describe('transitions and comments with the default workflows', () => {
  let projectId: string;
  let runId: string;
  let items: Migrated[];
  let withComments: number;
  let units: number;

  it("moves every issue to its mapped status, Removed ones to Won't Do", async () => {
    const created = await createIssues('Default');
    projectId = created.project.id;
    runId = created.runId;
    items = await migratedItems(projectId);
    expect(items.length).toBeGreaterThan(40);
    const jira = watched();
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const calls = jira.http.stats.calls;
    const totals = await work(transitionsPhase, ctx);

    const issues = new Map((await h.jiraIssues()).map((i) => [i.key, i]));
    const states = new Set(items.map((i) => i.state));
    expect([...states].sort()).toEqual(
      expect.arrayContaining(['Active', 'Closed', 'New', 'Removed', 'Resolved']),
    );
    for (const item of items) {
      const issue = issues.get(item.targetKey)!;
      expect(nameOf(issue, 'status'), `#${item.sourceId} ${item.type} ${item.state}`).toBe(
        DEFAULT_TARGET[item.state],
      );
      const resolution = item.state === 'Removed' ? "Won't Do" : item.state === 'Closed' ? 'Done' : null;
      expect(nameOf(issue, 'resolution'), `#${item.sourceId}`).toBe(resolution);
    }
    const moving = items.filter((i) => DEFAULT_TARGET[i.state] !== 'To Do').length;
    expect(totals).toMatchObject({ units: items.length, success: moving, failure: 0 });
    expect(totals.skipped).toBe(items.length - moving);
    expect(totals.log.filter((l) => /^#\d+ /.test(l))).toHaveLength(items.length);
    console.log(
      `transitions: ${items.length} issues, ${moving} moved, ${jira.transitionsMade} transitions, ` +
        `${((jira.http.stats.calls - calls) / items.length).toFixed(2)} Jira calls per item`,
    );
  });

  it('posts every comment once, in order, headed, with mentions', async () => {
    const jira = watched();
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const calls = jira.http.stats.calls;
    const totals = await work(commentsPhase, ctx);
    const figures = await checkComments(items);
    expect(figures.longest).toBeGreaterThanOrEqual(200); // the long threads came through whole
    expect(figures.mentions).toBeGreaterThan(0);
    expect(jira.commentsPosted).toBe(figures.total);
    const counts = (await Promise.all(items.map((i) => adoComments(i.sourceId)))).map((c) => c.length);
    withComments = counts.filter((n) => n > 0).length;
    units = counts.reduce((sum, n) => sum + partsOf(n), 0);
    // The long threads came in parts, each its own unit.
    expect(units).toBeGreaterThan(items.length);
    const posting = counts.filter((n) => n > 0).reduce((sum, n) => sum + partsOf(n), 0);
    expect(totals).toMatchObject({ units, success: posting, failure: 0 });
    // A thread of several parts is the phase's chain: each of its posts, and no other, goes ahead of the queue.
    const long = items.flatMap((item, i) => ((counts[i] ?? 0) > COMMENTS_PER_UNIT ? [item] : []));
    expect(long.length).toBeGreaterThan(0);
    expect(Object.fromEntries(jira.urgentPosts)).toEqual(
      Object.fromEntries(long.map((item) => [item.targetKey, counts[items.indexOf(item)]])),
    );
    expect(totals.skipped).toBe(items.length - withComments);
    const entries = await h.app.store.idMap.all(h.tenant.tenantId, projectId);
    expect(entries.every((e) => e.phasesDone.includes(PHASES.comments))).toBe(true);
    console.log(
      `comments: ${figures.total} over ${withComments} of ${items.length} items (longest ${figures.longest}), ` +
        `${figures.mentions} mentions resolved, ${figures.plainMentions} kept as text (no Jira account), ` +
        `${totals.chunks} chunks, ${((jira.http.stats.calls - calls) / items.length).toFixed(2)} Jira calls per item`,
    );
  });

  it('a second pass writes nothing', async () => {
    const before = await h.jiraIssues();
    const jira = watched();
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const moves = await work(transitionsPhase, ctx);
    const comments = await work(commentsPhase, ctx);
    expect(jira.transitionsMade).toBe(0);
    expect(jira.commentsPosted).toBe(0);
    expect(moves).toMatchObject({ success: 0, failure: 0, skipped: items.length });
    expect(comments).toMatchObject({ units, success: 0, failure: 0, skipped: units });
    expect(await h.jiraIssues()).toEqual(before);

    // A new run of the project: its own units and state map, the same answer.
    const again = await createIssues('Default');
    const ctx2 = await contextOf(again.runId, h.deps({ target: jira }));
    expect(await work(transitionsPhase, ctx2)).toMatchObject({
      success: 0,
      failure: 0,
      skipped: items.length,
    });
    expect(await work(commentsPhase, ctx2)).toMatchObject({ success: 0, failure: 0, skipped: units });
    expect(jira.transitionsMade + jira.commentsPosted).toBe(0);
    expect(await h.jiraIssues()).toEqual(before);

    // An incremental run trusts no record: it reads each issue's comments and finds every one there already.
    const incremental = await createIssues('Default', {}, 'INCREMENTAL');
    const ctx3 = await contextOf(incremental.runId, h.deps({ target: jira }));
    const reads = jira.http.stats.calls;
    const rechecked = await work(commentsPhase, ctx3);
    expect(rechecked).toMatchObject({ success: 0, failure: 0, skipped: units });
    expect(rechecked.log.filter((l) => /: all \d+ comments already in Jira: skipped$/.test(l)).length).toBe(
      withComments,
    );
    expect(jira.http.stats.calls - reads).toBeGreaterThanOrEqual(withComments);
    expect(jira.commentsPosted).toBe(0);
    // Its phase 2 refreshes the issues from ADO (fields, parents): what phases 6 and 7 own is as it was.
    const owned = (issues: JiraIssueDump[]) =>
      issues.map((i) => ({ key: i.key, status: nameOf(i, 'status'), comments: commentsOf(i) }));
    expect(owned(await h.jiraIssues())).toEqual(owned(before));
  });
});

describe('a worker killed between two writes', () => {
  it('resumes without a duplicate comment or a wrong status', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    // Tasks and Bugs (21 of the 60 items, 538 comments, threads of 200): crashes enough, at half the traffic.
    const { project, runId } = await createIssues('Crashes', { typeFilter: ['Task', 'Bug'] });
    const items = await migratedItems(project.id);
    const adoCount = new Map(
      await Promise.all(
        items.map(async (i) => [i.targetKey, (await adoComments(i.sourceId)).length] as const),
      ),
    );
    const jira = watched();
    const crashes = { transitions: 0, comments: 0, midThread: 0 };
    // Killed after every 7th transition and every 41st comment: the write done, nothing else recorded.
    jira.afterTransition = (n) => {
      if (n % 7 !== 3) return;
      crashes.transitions++;
      throw new SimulatedCrash('after a transition');
    };
    const posted = new Map<string, number>();
    jira.afterComment = (n, key) => {
      posted.set(key, (posted.get(key) ?? 0) + 1);
      if (n % 41 !== 17) return;
      crashes.comments++;
      if ((posted.get(key) ?? 0) < (adoCount.get(key) ?? 0)) crashes.midThread++;
      throw new SimulatedCrash('after a comment');
    };
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const moves = await work(transitionsPhase, ctx);
    const comments = await work(commentsPhase, ctx);
    expect(crashes.transitions).toBeGreaterThan(0);
    expect(crashes.comments).toBeGreaterThan(2);
    expect(crashes.midThread).toBeGreaterThan(0);
    expect(moves.failure + comments.failure).toBe(0);

    const issues = new Map((await h.jiraIssues()).map((i) => [i.key, i]));
    for (const item of items)
      expect(nameOf(issues.get(item.targetKey)!, 'status'), `#${item.sourceId}`).toBe(
        DEFAULT_TARGET[item.state],
      );
    const figures = await checkComments(items); // exactly once each, in order
    expect(jira.commentsPosted).toBe(figures.total);
    console.log(
      `crash test: ${crashes.transitions} crashes after a transition, ${crashes.comments} after a comment ` +
        `(${crashes.midThread} inside an item's thread), ${figures.total} comments, none twice`,
    );
  });

  it('a thread cut after some of its comments is completed from where it stopped, its journal settled', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    // Tasks only (10 items, the longest thread 201 comments): the cut needs one long thread, not all 60 items.
    const { project, runId } = await createIssues('Cut', { typeFilter: ['Task'] });
    const items = await migratedItems(project.id);
    const counts = await Promise.all(items.map(async (i) => (await adoComments(i.sourceId)).length));
    const long = items[counts.indexOf(Math.max(...counts))]!;
    // The long thread's issue is one the run found (its id map entry says so): its comments are journalled for a
    // rollback, each before its post, each settled with its Jira id after.
    const of = { tenantId: h.tenant.tenantId, projectId: project.id, runId };
    const entry = (await h.app.store.idMap.getMany(of.tenantId, of.projectId, [long.sourceId])).get(
      long.sourceId,
    )!;
    await h.app.store.idMap.putMany(of.tenantId, of.projectId, [{ ...entry, origin: 'found' }]);
    const jira = watched();
    let postedToLong = 0;
    jira.afterComment = (_n, key) => {
      if (key === long.targetKey && ++postedToLong === 120) throw new SimulatedCrash('mid-thread');
    };
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const crashedAt: number[] = [];
    await work(commentsPhase, ctx, (index) => crashedAt.push(index));
    expect(crashedAt).toHaveLength(1);
    const thread = commentsOf((await h.jiraIssues()).find((i) => i.key === long.targetKey)!);
    const ado = await adoComments(long.sourceId);
    expect(thread.map(markerOf)).toEqual(ado.map((c) => c.id));
    // Every comment journalled with its Jira id: the 120th's post answered nothing to the phase (the crash came
    // first), and the part worked again found it by its marker and settled its record
    const idOf = new Map(thread.map((c) => [markerOf(c), c.id]));
    const journal = await h.app.store.writeJournal.ofItem(of, long.sourceId);
    expect(
      journal.map((r) => r.write).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ).toEqual(
      ado
        .map((c) => ({ kind: 'comment', find: `(Azure DevOps comment ${c.id})`, id: idOf.get(c.id) }))
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    expect(new Set(journal.map((r) => r.key))).toEqual(new Set([long.targetKey]));
  });
});

describe('a thread of more than a thousand comments', () => {
  const LONG = 1234;
  /** The Bugs only (11 items, 55 comments): the long thread is the work, the other items' threads are not. */
  const SCOPE = { typeFilter: ['Bug'] };

  /**
   * Gives one migrated item a thread of LONG comments in the ADO sandbox's world (ids after every other
   * comment, none deleted), for the time of `body`.
   */
  async function withLongThread<T>(itemId: number, body: () => Promise<T>): Promise<T> {
    const world = adoSandboxState(h.sandboxes.ado.app).world;
    const item = world.workItems[itemId - 1]!;
    const saved = {
      commentTotal: item.commentTotal,
      commentCount: item.commentCount,
      commentIdBase: item.commentIdBase,
    };
    item.commentIdBase = Math.max(...world.workItems.map((w) => w.commentIdBase + w.commentTotal));
    item.commentTotal = LONG;
    item.commentCount = LONG;
    try {
      return await body();
    } finally {
      Object.assign(item, saved);
    }
  }

  const linesOf = (log: string[], item: Migrated) => log.filter((l) => l.startsWith(`#${item.sourceId} `));
  const partNumber = (line: string) => Number(/\(part (\d+)\/\d+\)/.exec(line)?.[1]);

  it('is worked in parts, each comment posted once and in order, through crashes mid-thread', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { project, runId } = await createIssues('Long thread', SCOPE);
    const items = await migratedItems(project.id);
    const long = items[Math.floor(items.length / 2)]!;
    await withLongThread(long.sourceId, async () => {
      expect((await adoComments(long.sourceId)).length).toBe(LONG);
      const parts = Math.ceil(LONG / COMMENTS_PER_UNIT);
      const jira = watched();
      // Killed three times on the long thread: inside a part, right after a part's last comment (before
      // its chunk is recorded), and inside the last part.
      const crashAt = new Set([150, 7 * COMMENTS_PER_UNIT, LONG - 4]);
      let postedToLong = 0;
      const crashes: number[] = [];
      jira.afterComment = (_n, key) => {
        if (key !== long.targetKey || !crashAt.has(++postedToLong)) return;
        crashes.push(postedToLong);
        throw new SimulatedCrash('mid-thread');
      };
      const ctx = await contextOf(runId, h.deps({ target: jira }));
      const calls = jira.http.stats.calls;
      // After each chunk: the item is recorded done only once its last part is in.
      const chunksWithLong: string[][] = [];
      let chunkStarted = Date.now();
      let slowestMs = 0;
      const totals = await work(commentsPhase, ctx, undefined, async (outcome) => {
        const lines = linesOf(outcome.log, long);
        if (lines.length > 0) {
          slowestMs = Math.max(slowestMs, Date.now() - chunkStarted);
          chunksWithLong.push(lines);
          const entries = await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, [long.sourceId]);
          const lastIn = lines.some((l) => partNumber(l) === parts);
          expect(entries.get(long.sourceId)?.phasesDone.includes(PHASES.comments), lines.join(' | ')).toBe(
            lastIn,
          );
        }
        chunkStarted = Date.now();
      });

      expect(crashes).toEqual([...crashAt]);
      // One unit per part, in order (a part waits for the one before it, in a chunk or across chunks); none
      // posted more than a part's worth.
      expect(chunksWithLong.flat().map(partNumber)).toEqual(Array.from({ length: parts }, (_, k) => k + 1));
      const posted = chunksWithLong.flat().map((l) => Number(/: (\d+) comments posted/.exec(l)?.[1] ?? 0));
      expect(Math.max(...posted)).toBeLessThanOrEqual(COMMENTS_PER_UNIT);
      // The part whose chunk died after its last comment found it all there when worked again.
      expect(chunksWithLong.flat()[6]).toMatch(/\(part 7\/13\): comments 601-700 already in Jira: skipped$/);
      expect(totals.failure).toBe(0);
      expect(totals.units).toBe(
        (await Promise.all(items.map((i) => adoComments(i.sourceId)))).reduce(
          (sum, c) => sum + partsOf(c.length),
          0,
        ),
      );

      // Every comment of every item once, in ADO's order, headed; none posted twice despite the crashes.
      const figures = await checkComments(items);
      expect(figures.longest).toBe(LONG);
      expect(jira.commentsPosted).toBe(figures.total);
      console.log(
        `long thread: ${LONG} comments in ${parts} parts over ${chunksWithLong.length} chunks ` +
          `(${totals.chunks} chunks in all), crashes after its comments ${crashes.join(', ')}, none twice; ` +
          `slowest chunk with a part ${slowestMs} ms (sandbox, crashed attempts included); ` +
          `${((jira.http.stats.calls - calls) / figures.total).toFixed(2)} Jira calls per comment posted`,
      );
    });
  }, 300_000);

  it('stops at a refusal with its later parts left alone, and a later run continues it in order', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { project, runId } = await createIssues('Refused thread', SCOPE);
    const items = await migratedItems(project.id);
    const long = items[Math.floor(items.length / 2)]!;
    await withLongThread(long.sourceId, async () => {
      const ado = await adoComments(long.sourceId);
      const refusedId = ado[249]!.id; // in part 3
      // Jira refuses that one comment, as converted and as plain text alike.
      class RefusingJira extends WatchedJira {
        refusals = 0;
        override async addComment(key: string, body: unknown, opts: { urgent?: boolean } = {}) {
          if (key === long.targetKey && markerInBody(body) === refusedId) {
            this.refusals++;
            throw new TrackerHttpError('target', 400, 'POST', `/rest/api/3/issue/${key}/comment`, {
              errorMessages: [],
              errors: { comment: 'Comment body is not valid!' },
            });
          }
          return super.addComment(key, body, opts);
        }
      }
      const refusing = new RefusingJira(
        { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
        { initialDelayMs: 20 },
      );
      const totals = await work(commentsPhase, await contextOf(runId, h.deps({ target: refusing })));
      // Refused as converted, then as plain text (unless the conversion already fell back to text).
      expect([1, 2]).toContain(refusing.refusals);
      expect(totals.failure).toBe(1);
      const lines = linesOf(totals.log, long);
      expect(lines[2]).toMatch(
        new RegExp(
          `\\(part 3/13\\): comments stopped after 49 posted, at Azure DevOps comment ${refusedId}:`,
        ),
      );
      expect(lines.slice(3)).toHaveLength(10);
      for (const line of lines.slice(3))
        expect(line).toMatch(
          new RegExp(
            `: not posted: the thread stopped earlier, at Azure DevOps comment ${refusedId} \\(skipped\\)$`,
          ),
        );
      const thread = () =>
        h.jiraIssues().then((all) => commentsOf(all.find((i) => i.key === long.targetKey)!).map(markerOf));
      expect(await thread()).toEqual(ado.slice(0, 249).map((c) => c.id));
      const failures = await h.app.store.runFailures.list(h.tenant.tenantId, project.id, runId);
      expect(failures.filter((f) => f.sourceId === long.sourceId)).toEqual([
        expect.objectContaining({ phase: PHASES.comments, reason: expect.stringContaining('not valid') }),
      ]);
      const entry = await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, [long.sourceId]);
      expect(entry.get(long.sourceId)?.phasesDone).not.toContain(PHASES.comments);

      // A later run, with Jira taking the comment now, continues the thread where it stopped.
      const again = await createIssues('Refused thread', SCOPE);
      const jira = watched();
      const deps = h.deps({ target: jira });
      const source = deps.source;
      const readFromAdo = source.comments.bind(source);
      let adoRead = 0;
      source.comments = async function* (id: number) {
        for await (const c of readFromAdo(id)) {
          if (id === long.sourceId) adoRead++;
          yield c;
        }
      };
      const resumed = await work(commentsPhase, await contextOf(again.runId, deps));
      expect(resumed.failure).toBe(0);
      expect(await thread()).toEqual(ado.map((c) => c.id));
      expect(jira.commentsPosted).toBe(LONG - 249);
      // A pass reads a thread once, however many parts it has: ADO's from its start to its end, Jira's (the
      // markers already there) by the first part only.
      expect(adoRead).toBe(LONG);
      expect(jira.commentsRead.get(long.targetKey)).toBe(249);
    });
  }, 300_000);
});

describe('other workflows, overrides and dry runs', () => {
  it("leaves unreachable statuses with a warning, sets Won't Do where the status lacks it, follows overrides", async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    // Task: Done exists but nothing leads there.
    await h.control('jira', 'PUT', '/_sandbox/jira/workflow', {
      issueTypes: ['Task'],
      statuses: [{ name: 'To Do' }, { name: 'In Progress' }, { name: 'Done' }, { name: "Won't Do" }],
      initial: 'To Do',
      transitions: [
        { name: 'Start', from: ['To Do'], to: 'In Progress' },
        { name: 'Stop', from: ['In Progress'], to: 'To Do' },
        { name: "Won't Do", from: 'any', to: "Won't Do" },
      ],
    });
    // Story and Epic: no Won't Do status; Removed goes to Done, resolved as Won't Do.
    await h.control('jira', 'PUT', '/_sandbox/jira/workflow', {
      issueTypes: ['Story', 'Epic'],
      statuses: [{ name: 'To Do' }, { name: 'In Progress' }, { name: 'Done' }],
      initial: 'To Do',
      transitions: [
        { name: 'Start', from: ['To Do'], to: 'In Progress' },
        { name: 'Finish', from: ['In Progress'], to: 'Done' },
        { name: 'Reset', from: 'any', to: 'To Do' },
      ],
    });
    const { project, runId } = await createIssues('Workflows', {
      stateOverrides: { Resolved: 'In Progress' },
    });
    const items = await migratedItems(project.id);

    // A dry run first: nothing written, what would be done counted.
    const dry = await createIssues('Workflows', { dryRun: true });
    const dryJira = watched();
    const dryCtx = await contextOf(dry.runId, h.deps({ target: dryJira }));
    const dryMoves = await work(transitionsPhase, dryCtx);
    const dryComments = await work(commentsPhase, dryCtx);
    expect(dryJira.transitionsMade + dryJira.commentsPosted).toBe(0);
    expect(dryMoves.success).toBeGreaterThan(0);
    expect(dryComments.success).toBeGreaterThan(0);
    expect(dryComments.log.some((l) => /would post \d+ comments/.test(l))).toBe(true);
    expect(
      (await h.jiraIssues()).every((i) => nameOf(i, 'status') === 'To Do' && commentsOf(i).length === 0),
    ).toBe(true);
    const entries = await h.app.store.idMap.all(h.tenant.tenantId, project.id);
    expect(entries.some((e) => e.phasesDone.includes(PHASES.comments))).toBe(false);

    const jira = watched();
    const ctx = await contextOf(runId, h.deps({ target: jira }));
    const totals = await work(transitionsPhase, ctx);
    const issues = new Map((await h.jiraIssues()).map((i) => [i.key, i]));
    const jiraType = (i: Migrated) => (issues.get(i.targetKey)!.fields.issuetype as { name: string }).name;
    const expected = (i: Migrated): string => {
      const type = jiraType(i);
      if (i.state === 'Resolved') return 'In Progress'; // the override
      if (type === 'Task' && i.state === 'Closed') return 'To Do'; // unreachable: left where it was
      if ((type === 'Story' || type === 'Epic') && i.state === 'Removed') return 'Done';
      return DEFAULT_TARGET[i.state]!;
    };
    let unreachable = 0;
    let removedAsDone = 0;
    for (const item of items) {
      const issue = issues.get(item.targetKey)!;
      expect(nameOf(issue, 'status'), `#${item.sourceId} ${jiraType(item)} ${item.state}`).toBe(
        expected(item),
      );
      if (item.state === 'Removed') {
        expect(nameOf(issue, 'resolution')).toBe("Won't Do");
        if (nameOf(issue, 'status') === 'Done') removedAsDone++;
      }
      if (jiraType(item) === 'Task' && item.state === 'Closed') {
        unreachable++;
        const line = totals.log.find((l) => l.startsWith(`#${item.sourceId} `));
        expect(line).toMatch(/warning: "Done" is unreachable from "To Do".*left in "To Do".* \(skipped\)$/);
      }
    }
    expect(unreachable).toBeGreaterThan(0);
    // The workflow is learnt once, by one issue, however many units of the type run side by side: the others
    // wait for that exploration and know the way is not there without moving.
    const explored = totals.log.filter((l) => l.includes('after exploring')).length;
    expect(unreachable).toBeGreaterThan(1);
    expect(explored).toBe(1);
    expect(removedAsDone).toBeGreaterThan(0);
    expect(totals.failure).toBe(0);
    // Unreachable ones count as skipped, never as failures.
    const moving = items.filter((i) => expected(i) !== 'To Do').length;
    expect(totals.success).toBe(moving);
    expect(totals.skipped).toBe(items.length - moving);
  });
});

describe('a comment document', () => {
  const comment: AdoComment = {
    id: 5,
    text: '<div><a href="#" data-vss-mention="version:2.0,abc">@Ann Lee</a> see #7</div>',
    createdBy: { displayName: 'Ann Lee', uniqueName: 'ann.lee@contoso.example.com' },
    createdDate: '2026-03-02T09:04:59Z',
  };

  it('is headed and marked, with the mention and the reference resolved', () => {
    const out = commentDocument(comment, {
      mention: () => ({ accountId: '5f00', displayName: 'Ann Lee' }),
      workItemKey: (id) => (id === 7 ? 'MIG-3' : undefined),
    });
    expect(out.fellBackToText).toBeUndefined();
    expect(textOf(out.doc.content[0])).toBe(
      'Originally posted by Ann Lee on 2 Mar 2026, 09:04 UTC (Azure DevOps comment 5)',
    );
    expect(markerInBody(out.doc)).toBe(5);
    expect(nodesOf(out.doc as unknown as AdfNode, 'mention').map((m) => m.attrs?.id)).toEqual(['5f00']);
    expect(textOf(out.doc as unknown as AdfNode)).toContain('MIG-3');
  });

  it('is cut under Jira’s limit when over it, header and marker kept, naming the file with all of it', () => {
    const long: AdoComment = {
      ...comment,
      text: Array.from({ length: 600 }, (_, i) => `<p>Line ${i} of a pasted log, with some words.</p>`).join(
        '',
      ),
    };
    const out = commentDocument(long, {}, 42);
    expect(adfLength(out.doc)).toBeLessThanOrEqual(JIRA_TEXT_LIMIT);
    expect(validateAdf(out.doc)).toEqual([]);
    expect(markerInBody(out.doc)).toBe(5);
    expect(textOf(out.doc.content.at(-1))).toContain('attached as comment-5.html');
    expect(textOf(out.doc as unknown as AdfNode)).toContain('Line 0 of a pasted log');
    expect(textOf(out.doc as unknown as AdfNode)).not.toContain('Line 599 ');
    expect(out.full).toMatchObject({ fileName: 'comment-5.html' });
    expect(out.full?.measured).toBeGreaterThan(JIRA_TEXT_LIMIT);
    expect(out.full?.html).toContain(long.text);
    expect(out.full?.html).toContain('(Azure DevOps comment 5)');
    // The plain-text fallback is cut the same way.
    const plain = out.plain();
    expect(adfLength(plain)).toBeLessThanOrEqual(JIRA_TEXT_LIMIT);
    expect(markerInBody(plain)).toBe(5);
    // A short one is left whole, with no file.
    expect(commentDocument(comment, {}).full).toBeUndefined();
  });

  it('falls back to its text, header and marker kept, when the converted one is not valid ADF', () => {
    const out = commentDocument(comment, {
      mention: () => ({ accountId: 42 as unknown as string, displayName: 'Ann Lee' }),
    });
    expect(out.fellBackToText).toMatch(/mention/);
    expect(markerInBody(out.doc)).toBe(5);
    expect(nodesOf(out.doc as unknown as AdfNode, 'mention')).toEqual([]);
    expect(textOf(out.doc as unknown as AdfNode)).toContain('@Ann Lee see #7');
  });
});
