/**
 * Phases 3 (hierarchy) and 4 (links) over the sandboxes. The runner drives phases 1-2; the two phases are then
 * worked here as the runner would (units once, chunks from an index), until the lead registers them.
 * Expectations come from the raw ADO relations, read independently of the engine's link planning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../functions/domain/runs.ts';
import {
  type HierarchyPlan,
  type HierarchyUnit,
  hierarchyPhase,
  hierarchyPlanKey,
} from '../../functions/engine/phases/hierarchy.ts';
import {
  type LinkPlan,
  type LinkPlanHeader,
  type LinkUnit,
  linkKey,
  linkPlanKey,
  linksPhase,
} from '../../functions/engine/phases/links.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import {
  type ChunkOutcome,
  type EngineDeps,
  type PhaseContext,
  type PhaseModule,
  SimulatedCrash,
} from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { openPlan } from '../../functions/phase-kit/plan-slices.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { TrackerHttpError, TrackerUnreachableError } from '../../functions/trackers/http.ts';
import { seededRandom } from '../../local/sandbox/common/random.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { mergeLinkPlans } from '../support/link-plan-reference.ts';
import { workChunk } from '../support/phase-driver.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 220, seed: 2 });
});
afterAll(async () => {
  await h?.close();
});

/** How each ADO relation (on X, to Y) must read in Jira: "subject <outward phrase> object". */
const EXPECTED_LINK: Record<
  string,
  (x: number, y: number) => { type: string; subject: number; object: number }
> = {
  'System.LinkTypes.Related': (x, y) => ({
    type: 'Relates',
    subject: Math.min(x, y),
    object: Math.max(x, y),
  }),
  'System.LinkTypes.Dependency-Forward': (x, y) => ({ type: 'Blocks', subject: x, object: y }),
  'System.LinkTypes.Dependency-Reverse': (x, y) => ({ type: 'Blocks', subject: y, object: x }),
  'System.LinkTypes.Duplicate-Forward': (x, y) => ({ type: 'Duplicate', subject: y, object: x }),
  'System.LinkTypes.Duplicate-Reverse': (x, y) => ({ type: 'Duplicate', subject: x, object: y }),
  'Microsoft.VSTS.Common.TestedBy-Forward': (x, y) => ({ type: 'Tests', subject: y, object: x }),
  'Microsoft.VSTS.Common.TestedBy-Reverse': (x, y) => ({ type: 'Tests', subject: x, object: y }),
};
/** The phrase a remote link on X to an out-of-scope Y must start with. */
const REMOTE_PHRASE: Record<string, string> = {
  'System.LinkTypes.Related': 'relates to',
  'System.LinkTypes.Dependency-Forward': 'blocks',
  'System.LinkTypes.Dependency-Reverse': 'is blocked by',
  'System.LinkTypes.Duplicate-Forward': 'is duplicated by',
  'System.LinkTypes.Duplicate-Reverse': 'duplicates',
  'Microsoft.VSTS.Common.TestedBy-Forward': 'is tested by',
  'Microsoft.VSTS.Common.TestedBy-Reverse': 'tests',
  'System.LinkTypes.Hierarchy-Reverse': 'child of',
  'System.LinkTypes.Hierarchy-Forward': 'parent of',
};
/** Jira's level of the issue type each ADO type becomes (Feature -> Epic, as the default mapping says). */
const jiraLevel = (adoType: string) => (adoType === 'Epic' || adoType === 'Feature' ? 1 : 0);
const idOfUrl = (url: string) => Number(/workitems\/(\d+)$/i.exec(url)?.[1] ?? Number.NaN);

interface Tally {
  units: number;
  success: number;
  failure: number;
  skipped: number;
  log: string[];
}

async function migrate(name: string, options: Partial<RunOptions> = {}) {
  const project = await h.newProject(name);
  const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', options);
  // The runner does phases 1-2; this file works phases 3 and 4 itself, chunk by chunk.
  await h.driveThrough(run.id, 2);
  return { projectId: project.id, runId: run.id };
}

/**
 * Phase 2 sets every parent Jira can hold (a parent created in the same chunk goes in an earlier bulk create), and
 * records it done for phase 3, so phase 3 sets only those phase 2 could not (a parent that failed, or an item an
 * earlier run created and this one updated): every other one is taken off here, with its record, so that phase 3
 * has them to do.
 */
async function detachEveryOtherParent(projectId: string): Promise<void> {
  const issues = (await h.jiraIssues(['parent'])).filter((i) => i.fields.parent?.key);
  const detached = new Set<string>();
  for (const [n, issue] of issues.entries()) {
    if (n % 2 !== 0) continue;
    await h.deps().target.editIssue(issue.key, { fields: { parent: null } });
    detached.add(issue.key);
  }
  const entries = await h.app.store.idMap.all(h.tenant.tenantId, projectId);
  const undone = entries
    .filter((e) => detached.has(e.targetKey))
    .map((e) => ({ ...e, phasesDone: e.phasesDone.filter((p) => p !== 3) }));
  await h.app.store.idMap.putMany(h.tenant.tenantId, projectId, undone);
}

/** A phase's context with the whole manifest in memory as well (loadPreflight): these tests look at all of it. */
async function contextOf(
  runId: string,
  deps: EngineDeps = h.deps(),
): Promise<PhaseContext & { preflight: Awaited<ReturnType<typeof loadPreflight>> }> {
  const run = await h.app.store.runs.get(h.tenant.tenantId, runId);
  if (!run) throw new Error('run not found');
  return { deps, run, preflight: await loadPreflight(deps, run), invocation: new InvocationScope() };
}

/** Works a phase as the runner does: units once, then chunks from the checkpoint, again after an error. */
async function work(phase: PhaseModule, ctx: PhaseContext, onError?: (err: unknown) => void): Promise<Tally> {
  const units = await phase.units(ctx);
  const tally: Tally = { units, success: 0, failure: 0, skipped: 0, log: [] };
  for (let index = 0, attempts = 0; index < units; attempts++) {
    if (attempts > 500) throw new Error('the phase did not finish in 500 chunk attempts');
    let outcome: ChunkOutcome;
    try {
      outcome = await workChunk(phase, ctx, index);
    } catch (err) {
      if (!onError) throw err;
      onError(err);
      continue;
    }
    expect(outcome.processed).toBeGreaterThan(0);
    expect(outcome.processed).toBeLessThanOrEqual(50);
    tally.success += outcome.success;
    tally.failure += outcome.failure;
    tally.skipped += outcome.skipped;
    tally.log.push(...outcome.log);
    index += outcome.processed;
  }
  return tally;
}

function adfText(node: unknown): string {
  if (!node || typeof node !== 'object') return '';
  const n = node as { text?: string; content?: unknown[] };
  return (n.text ?? '') + (n.content ?? []).map(adfText).join('');
}

interface JiraView {
  keyOf: Map<number, string>;
  parentOf: Map<number, number | undefined>;
  /** Every issue link once, from its subject's side: "type|subject|object" in ADO ids, with repeats. */
  links: string[];
  comments: string[];
}

/** The fields a view reads (the dump of all of them carried every description and file too, 2 MB a time). */
const VIEW_FIELDS = ['labels', 'parent', 'issuelinks', 'comment'];

async function jiraView(): Promise<JiraView> {
  const issues = await h.jiraIssues(VIEW_FIELDS);
  const src = new Map<string, number>();
  for (const i of issues)
    for (const l of i.fields.labels ?? []) {
      const m = /^src-id-(\d+)$/.exec(l);
      if (m) src.set(i.key, Number(m[1]));
    }
  const view: JiraView = { keyOf: new Map(), parentOf: new Map(), links: [], comments: [] };
  for (const i of issues) {
    const id = src.get(i.key);
    if (id === undefined) continue;
    view.keyOf.set(id, i.key);
    view.parentOf.set(id, i.fields.parent ? src.get(i.fields.parent.key) : undefined);
    const links = (i.fields.issuelinks ?? []) as { type: { name: string }; outwardIssue?: { key: string } }[];
    for (const l of links)
      if (l.outwardIssue) view.links.push(`${l.type.name}|${id}|${src.get(l.outwardIssue.key)}`);
    const comments = (i.fields.comment as { comments?: { body: unknown }[] } | undefined)?.comments ?? [];
    view.comments.push(...comments.map((c) => adfText(c.body)));
  }
  return view;
}

async function adoItems(ids: number[]): Promise<AdoWorkItem[]> {
  return h.deps().source.workItems(ids, { expand: 'relations' });
}

/** The issue links the ADO relations among in-scope items call for, each once. */
function expectedLinks(items: AdoWorkItem[], inScope: Set<number>): Set<string> {
  const out = new Set<string>();
  for (const item of items)
    for (const r of item.relations ?? []) {
      const make = EXPECTED_LINK[r.rel];
      const other = idOfUrl(r.url);
      if (make && inScope.has(other)) {
        const l = make(item.id, other);
        out.add(`${l.type}|${l.subject}|${l.object}`);
      }
    }
  return out;
}

/** The remote links relations to out-of-scope items call for: on X, to Y, with the phrase of X's side. */
function expectedRemotes(items: AdoWorkItem[], inScope: Set<number>) {
  return items.flatMap((item) =>
    (item.relations ?? []).flatMap((r) => {
      const other = idOfUrl(r.url);
      const phrase = REMOTE_PHRASE[r.rel];
      return phrase && !inScope.has(other) ? [{ on: item.id, other, phrase }] : [];
    }),
  );
}

/**
 * Problems with the issues' links back to their ADO items: each issue must hold exactly one remote link with
 * the item's web URL, under the globalId `ado:<org>:<id>`, and no other remote link pointing at its own item.
 */
async function backlinkProblems(view: JiraView): Promise<string[]> {
  const target = h.deps().target;
  const base = `${h.sandboxes.ado.url}/${h.config.ado.org}/${h.config.ado.project}/_workitems/edit`;
  const problems: string[] = [];
  for (const [id, key] of view.keyOf) {
    const own = (await target.remoteLinks(key)).filter((r) => r.object?.url === `${base}/${id}`);
    if (own.length !== 1) problems.push(`#${id} ${key}: ${own.length} links back to ADO`);
    else if (own[0]?.globalId !== `ado:${h.config.ado.org.toLowerCase()}:${id}`)
      problems.push(`#${id} ${key}: globalId ${own[0]?.globalId}`);
    else if (own[0]?.object?.title?.startsWith(`Azure DevOps #${id}`) !== true)
      problems.push(`#${id} ${key}: title ${own[0]?.object?.title}`);
  }
  return problems;
}

async function jiraWrites(): Promise<{ method: string; path: string; status: number }[]> {
  const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
    method: string;
    path: string;
    status: number;
  }[];
  return log.filter((r) => r.method !== 'GET' && !r.path.startsWith('/rest/api/3/search/jql'));
}
interface SandboxRequest {
  method: string;
  path: string;
  status: number;
}
const remoteLinkRead = (r: SandboxRequest) => r.method === 'GET' && r.path.includes('/remotelink');
const clearRequests = () => h.control('jira', 'DELETE', '/_sandbox/requests');
const countOf = (xs: string[]) =>
  xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());

describe('hierarchy and links of a full run', () => {
  let first: { projectId: string; runId: string };

  it('shows every in-scope parent/child pair: the parent field where Jira allows, else a Relates link with a note', async () => {
    first = await migrate('Hierarchy');
    await detachEveryOtherParent(first.projectId);
    const ctx = await contextOf(first.runId);
    const manifest = ctx.preflight.manifest;
    const pairs = manifest.filter((m) => m.parentId !== null) as {
      id: number;
      type: string;
      parentId: number;
    }[];
    const typeOf = new Map(manifest.map((m) => [m.id, m.type]));
    const fits = pairs.filter((p) => jiraLevel(typeOf.get(p.parentId) ?? '') === jiraLevel(p.type) + 1);
    const before = await jiraView();
    const setAtCreation = fits.filter((p) => before.parentOf.get(p.id) === p.parentId).length;

    await clearRequests();
    const tally = await work(hierarchyPhase, ctx);
    const writes = await jiraWrites();

    const view = await jiraView();
    const linked = new Set(view.links.filter((l) => l.startsWith('Relates|')));
    const missing: string[] = [];
    for (const p of pairs) {
      if (jiraLevel(typeOf.get(p.parentId) ?? '') === jiraLevel(p.type) + 1) {
        if (view.parentOf.get(p.id) !== p.parentId) missing.push(`#${p.id} not under #${p.parentId}`);
      } else {
        const [a, b] = [Math.min(p.id, p.parentId), Math.max(p.id, p.parentId)];
        const either =
          linked.has(`Relates|${p.parentId}|${p.id}`) || linked.has(`Relates|${p.id}|${p.parentId}`);
        if (!either) missing.push(`#${a}-#${b} not linked`);
        const note = `is the parent of ${view.keyOf.get(p.id)} (#${p.id},`;
        const notes = view.comments.filter((c) => c.includes(note));
        if (notes.length !== 1) missing.push(`#${p.id}: ${notes.length} notes`);
      }
    }
    expect(missing).toEqual([]);
    // Both kinds occur in this data, and phase 2 had already set some parents, which are not units.
    expect(fits.length - setAtCreation).toBeGreaterThan(0);
    expect(pairs.length - fits.length).toBeGreaterThan(0);
    expect(tally).toMatchObject({
      units: pairs.length - setAtCreation,
      success: pairs.length - setAtCreation,
    });
    expect(tally).toMatchObject({ failure: 0, skipped: 0 });
    // One write per unit: the parent field for those that fit, one link (with its note) for the others.
    expect(writes.filter((w) => w.method === 'PUT')).toHaveLength(fits.length - setAtCreation);
    expect(writes.filter((w) => w.path === '/rest/api/3/issueLink')).toHaveLength(pairs.length - fits.length);
    expect(writes).toHaveLength(pairs.length - setAtCreation);
    const entries = await h.app.store.idMap.all(h.tenant.tenantId, first.projectId);
    const done = new Set(entries.filter((e) => e.phasesDone.includes(3)).map((e) => e.sourceId));
    // Phase 2 recorded the parents it set; phase 3 every pair it placed.
    expect(done.size).toBe(setAtCreation + tally.units);
    console.log(
      `hierarchy: ${pairs.length} pairs, ${setAtCreation} set by phase 2, ${fits.length - setAtCreation} parents set, ${pairs.length - fits.length} kept as Relates links`,
    );
  });

  it('links every ADO link once, of the mapped type and direction', async () => {
    const ctx = await contextOf(first.runId);
    const inScope = new Set(ctx.preflight.manifest.map((m) => m.id));
    const items = await adoItems([...inScope]);
    const expected = expectedLinks(items, inScope);
    // Shared Steps are not migrated: links to them leave the scope.
    const remotes = expectedRemotes(items, inScope);
    const hierarchyLinks = (await jiraView()).links.length;

    await clearRequests();
    const tally = await work(linksPhase, ctx);
    const requests = (await h.control('jira', 'GET', '/_sandbox/requests')) as SandboxRequest[];
    const writes = await jiraWrites();
    // No remote link is read outside a dry run: the POST's status tells one already there (200) from a new one.
    expect(requests.filter(remoteLinkRead)).toEqual([]);

    const view = await jiraView();
    const counts = countOf(view.links);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
    const pairs = new Set(
      ctx.preflight.manifest.flatMap((m) =>
        m.parentId === null ? [] : [`Relates|${m.parentId}|${m.id}`, `Relates|${m.id}|${m.parentId}`],
      ),
    );
    // Relates links are symmetric: read them smaller id first.
    const actual = new Set(
      view.links
        .filter((l) => !pairs.has(l))
        .map((l) => {
          const [type, a, b] = l.split('|');
          return type === 'Relates' && Number(a) > Number(b) ? `${type}|${b}|${a}` : l;
        }),
    );
    expect([...actual].sort()).toEqual([...expected].sort());
    expect(view.links.length - hierarchyLinks).toBe(expected.size);
    for (const type of ['Relates', 'Blocks', 'Duplicate', 'Tests'])
      expect([...expected].some((l) => l.startsWith(`${type}|`))).toBe(true);
    // Every unit written once: issue links, remote links for the links leaving the scope, and a link back to
    // its ADO item on every issue.
    const backlinks = view.keyOf.size;
    expect(backlinks).toBe(inScope.size);
    expect(await backlinkProblems(view)).toEqual([]);
    const units = expected.size + remotes.length + backlinks;
    expect(tally).toMatchObject({ units, success: units, failure: 0, skipped: 0 });
    expect(writes.filter((w) => w.path === '/rest/api/3/issueLink' && w.status === 201)).toHaveLength(
      expected.size,
    );
    expect(writes.filter((w) => w.path.endsWith('/remotelink') && w.status === 201)).toHaveLength(
      remotes.length + backlinks,
    );
    expect(writes).toHaveLength(units);
    // ADO link comments arrive as the links' comments.
    expect(view.comments.filter((c) => c === 'same root cause').length).toBeGreaterThan(0);
    console.log(
      `links: ${expected.size} issue links, ${remotes.length} remote links and ${backlinks} links back to ADO for ${inScope.size} items, ${requests.length} Jira calls in the phase (${(requests.length / units).toFixed(2)} a link)`,
    );
  });

  it('a resumed phase, and a second run of the project, write nothing new', async () => {
    const ctx = await contextOf(first.runId);
    const before = await jiraView();
    await clearRequests();
    // The same run worked again from the start: everything is found done.
    const hierarchy = await work(hierarchyPhase, ctx);
    const links = await work(linksPhase, ctx);
    expect(hierarchy.failure + links.failure).toBe(0);
    expect(hierarchy.log.every((l) => /done before an interruption/.test(l))).toBe(true);
    // Nothing new: the remote links this run wrote are posted again and Jira answers that it updated them (the
    // same globalId, url and title), which is what tells the unit it was done before an interruption.
    expect(links).toMatchObject({ success: links.units, skipped: 0 });
    expect((await jiraWrites()).filter((w) => !(w.path.endsWith('/remotelink') && w.status === 200))).toEqual(
      [],
    );

    // A new run of the same project: no hierarchy unit left, every link already there.
    const again = await createRun(h.app.store, h.tenant.tenantId, first.projectId, 'FULL');
    await h.driveThrough(again.id, 2);
    const ctx2 = await contextOf(again.id);
    await clearRequests();
    expect(await hierarchyPhase.units(ctx2)).toBe(0);
    const links2 = await work(linksPhase, ctx2);
    expect(links2).toMatchObject({ success: 0, failure: 0, skipped: links.units });
    expect(await jiraWrites()).toEqual([]);
    const after = await jiraView();
    expect(after.links.sort()).toEqual(before.links.sort());
    expect(after.comments.length).toBe(before.comments.length);
    expect(await backlinkProblems(after)).toEqual([]);
  });

  it('a run with migrateLinks off has only the links back to ADO as units', async () => {
    // The claim is phase 4's units: the run carries no files or comments (220 items' worth, phases 5 and 7).
    const run = await createRun(h.app.store, h.tenant.tenantId, first.projectId, 'FULL', {
      migrateLinks: false,
      migrateAttachments: false,
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const ctx = await contextOf(run.id);
    expect(await linksPhase.units(ctx)).toBe(ctx.preflight.manifest.length);
    // All there from the first run: found, nothing written.
    await clearRequests();
    const links = await work(linksPhase, ctx);
    expect(links).toMatchObject({ success: 0, failure: 0, skipped: ctx.preflight.manifest.length });
    expect(await jiraWrites()).toEqual([]);
  });
});

describe("hierarchy's start", () => {
  it('the plan reads no issue state, and the pass that stored it reads none of the issues this run created', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { runId } = await migrate('Hierarchy start');
    const deps = h.deps();
    const searched: number[] = [];
    const search = deps.target.search.bind(deps.target);
    deps.target.search = async (jql, opts) => {
      searched.push(...(opts?.reconcileIssues ?? []));
      return search(jql, opts);
    };
    await clearRequests();
    // The runner, as the state machine calls it: the phase's prepare (the plan), then its pass.
    await h.driveThrough(runId, 3, deps);
    const writes = await jiraWrites();
    const run = await h.app.store.runs.get(h.tenant.tenantId, runId);
    expect(run?.cursor.phase).toBe(4);
    // Pairs Jira cannot hold as parent and child are units of every fresh run: links written, once each.
    const links = writes.filter((w) => w.path === '/rest/api/3/issueLink');
    expect(links.length).toBeGreaterThan(0);
    expect(links.every((w) => w.status === 201)).toBe(true);
    // Phase 2 recorded the parents it set; every other child is as phase 2 left it (no parent, no link), and no
    // unit of the phase was worked before the plan was stored: nothing to read. A pass after an interruption
    // reads its blocks (the crash test below).
    expect(searched).toEqual([]);
  });
});

describe('crashes', () => {
  it('killed after writes at random points, with the search index lagging, writes each link once', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { runId } = await migrate('Crashes');
    await h.control('jira', 'PUT', '/_sandbox/faults', { searchLagMs: 400, dropRate: 0.02 });
    await clearRequests();
    // A worker that dies just after Jira accepted a write, before the engine recorded it.
    const random = seededRandom(77);
    const deps = h.deps();
    const http = deps.target.http;
    const request = http.request.bind(http);
    let crashes = 0;
    http.request = (async (method: string, path: string, opts?: object) => {
      const res = await request(method, path, opts);
      // Remote links are posted again on resume (Jira keeps one per globalId), so a chunk of them ends only
      // when none of its 50 posts crashes: one in fifty crashes there, one in five elsewhere.
      const chance = path.endsWith('/remotelink') ? 0.02 : 0.2;
      if (method !== 'GET' && !path.includes('/search/') && random.chance(chance)) {
        crashes++;
        throw new SimulatedCrash('after a write');
      }
      return res;
    }) as typeof http.request;
    let dropped = 0;
    const onError = (err: unknown) => {
      if (err instanceof TrackerUnreachableError) dropped++;
      else if (!(err instanceof SimulatedCrash)) throw err;
    };
    const ctx = await contextOf(runId, deps);
    const hierarchy = await work(hierarchyPhase, ctx, onError);
    const links = await work(linksPhase, ctx, onError);
    await h.control('jira', 'PUT', '/_sandbox/faults', { searchLagMs: 0, dropRate: 0 });
    const requests = (await h.control('jira', 'GET', '/_sandbox/requests')) as SandboxRequest[];
    const writes = await jiraWrites();

    expect(crashes).toBeGreaterThan(5);
    // Everything was written by this run: work confirmed after a crash counts as done, not as found.
    expect(hierarchy).toMatchObject({ success: hierarchy.units, failure: 0, skipped: 0 });
    expect(links).toMatchObject({ success: links.units, failure: 0, skipped: 0 });
    expect(hierarchy.log.some((l) => /confirmed in Jira, nothing to write/.test(l))).toBe(true);
    expect(links.log.some((l) => /confirmed after an interruption/.test(l))).toBe(true);
    // Each issue link was written exactly once, each note and link comment exists once.
    const view = await jiraView();
    expect([...countOf(view.links)].filter(([, n]) => n > 1)).toEqual([]);
    const linkWrites = writes.filter((w) => w.path === '/rest/api/3/issueLink' && w.status === 201);
    expect(linkWrites).toHaveLength(view.links.length);
    expect([...countOf(view.comments)].filter(([c, n]) => n > 1 && c.startsWith('Azure DevOps'))).toEqual([]);
    const inScope = new Set(ctx.preflight.manifest.map((m) => m.id));
    const expected = expectedLinks(await adoItems([...inScope]), inScope);
    const typeOf = new Map(ctx.preflight.manifest.map((m) => [m.id, m.type]));
    const keptAsLinks = ctx.preflight.manifest.filter(
      (m) => m.parentId !== null && jiraLevel(typeOf.get(m.parentId) ?? '') !== jiraLevel(m.type) + 1,
    );
    expect(view.links.length).toBe(expected.size + keptAsLinks.length);
    // Each issue holds exactly one link back to its ADO item, some of them confirmed after a crash.
    expect(await backlinkProblems(view)).toEqual([]);
    expect(view.keyOf.size).toBe(inScope.size);
    expect(links.log.some((l) => /-> Azure DevOps #\d+.*: confirmed after an interruption/.test(l))).toBe(
      true,
    );
    // A remote link posted before a crash is posted again and Jira updates it (200): no read, one link per
    // globalId, and as many remote links as remote units.
    expect(requests.filter(remoteLinkRead)).toEqual([]);
    const reposted = writes.filter((w) => w.path.endsWith('/remotelink') && w.status === 200);
    expect(reposted.length).toBeGreaterThan(0);
    const target = deps.target;
    let remoteLinks = 0;
    for (const key of view.keyOf.values()) {
      const globalIds = (await target.remoteLinks(key)).map((r) => r.globalId);
      expect(new Set(globalIds).size, `remote links of ${key}`).toBe(globalIds.length);
      remoteLinks += globalIds.length;
    }
    const items = await adoItems([...inScope]);
    expect(remoteLinks).toBe(expectedRemotes(items, inScope).length + inScope.size);
    console.log(`crash test: ${crashes} crashes after a write, ${dropped} dropped connections`);
  });
});

describe('a Jira that refuses the parent field', () => {
  it('falls back to the epic endpoint, and where that is refused too, to a Relates link saying why', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { runId, projectId } = await migrate('Refusing');
    await detachEveryOtherParent(projectId);
    // Jira refuses every `parent` edit, and the epic endpoint for children with an even key number.
    const deps = h.deps();
    const http = deps.target.http;
    const request = http.request.bind(http);
    const refuse = (method: string, path: string) =>
      new TrackerHttpError('target', 400, method, path, {
        errorMessages: [],
        errors: { parent: 'Given parent work item does not belong to appropriate hierarchy.' },
      });
    http.request = (async (method: string, path: string, opts?: { body?: unknown }) => {
      const body = opts?.body as { fields?: { parent?: unknown }; issues?: string[] } | undefined;
      if (method === 'PUT' && body?.fields?.parent) throw refuse(method, path);
      if (path.startsWith('/rest/agile/1.0/epic/') && Number(body?.issues?.[0]?.split('-')[1]) % 2 === 0)
        throw refuse(method, path);
      return request(method, path, opts);
    }) as typeof http.request;
    const ctx = await contextOf(runId, deps);
    const typeOf = new Map(ctx.preflight.manifest.map((m) => [m.id, m.type]));
    const before = await jiraView();
    const open = ctx.preflight.manifest.filter(
      (m) =>
        m.parentId !== null &&
        jiraLevel(typeOf.get(m.parentId) ?? '') === jiraLevel(m.type) + 1 &&
        before.parentOf.get(m.id) !== m.parentId,
    ) as { id: number; parentId: number }[];
    expect(open.length).toBeGreaterThan(1);

    const tally = await work(hierarchyPhase, ctx);
    expect(tally.failure).toBe(0);
    const view = await jiraView();
    const even = (id: number) => Number(view.keyOf.get(id)?.split('-')[1]) % 2 === 0;
    const byEpic = open.filter((p) => !even(p.id));
    const byLink = open.filter((p) => even(p.id));
    expect(byEpic.filter((p) => view.parentOf.get(p.id) !== p.parentId)).toEqual([]);
    for (const p of byLink) {
      expect(view.parentOf.get(p.id)).toBeUndefined();
      const notes = view.comments.filter(
        (c) =>
          c.includes(`is the parent of ${view.keyOf.get(p.id)} (#${p.id},`) && c.includes('Jira refused'),
      );
      expect(notes).toHaveLength(1);
    }
    expect(byEpic.length * byLink.length).toBeGreaterThan(0);
  });
});

describe('a scope that leaves links outside', () => {
  it('turns links to out-of-scope items into remote links to ADO, once', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { runId } = await migrate('Filtered', {
      typeFilter: ['Feature', 'User Story', 'Task', 'Test Case'],
    });
    const ctx = await contextOf(runId);
    const inScope = new Set(ctx.preflight.manifest.map((m) => m.id));
    const items = await adoItems([...inScope]);
    await work(hierarchyPhase, ctx);
    const tally = await work(linksPhase, ctx);
    expect(tally.failure).toBe(0);

    const view = await jiraView();
    const expectedIssueLinks = expectedLinks(items, inScope);
    const orgUrl = `${h.sandboxes.ado.url}/${h.config.ado.org}/${h.config.ado.project}`;
    const missing: string[] = [];
    let expectedRemote = 0;
    const target = h.deps().target;
    for (const item of items) {
      const wanted = expectedRemotes([item], inScope);
      expectedRemote += wanted.length;
      const key = view.keyOf.get(item.id) as string;
      const remote = await target.remoteLinks(key);
      // The links leaving the scope, and the one back to the item itself.
      if (remote.length !== wanted.length + 1)
        missing.push(`#${item.id}: ${remote.length} remote links, ${wanted.length + 1} wanted`);
      for (const w of wanted) {
        const hit = remote.filter(
          (r) =>
            r.object?.url === `${orgUrl}/_workitems/edit/${w.other}` &&
            r.object?.title?.startsWith(`${w.phrase} Azure DevOps #${w.other}: `),
        );
        if (hit.length !== 1) missing.push(`#${item.id} ${w.phrase} #${w.other}: ${hit.length} remote links`);
      }
    }
    expect(missing).toEqual([]);
    expect(expectedRemote).toBeGreaterThan(0);
    expect(await backlinkProblems(view)).toEqual([]);
    expect(tally.units).toBe(expectedRemote + expectedIssueLinks.size + items.length);
    expect(tally.success).toBe(tally.units);

    // Worked again in the same run (a resume from the start): all found, as this run's own work; nothing new.
    await clearRequests();
    const again = await work(linksPhase, ctx);
    expect(again).toMatchObject({ success: tally.units, skipped: 0, failure: 0 });
    expect(again.log.every((l) => /confirmed after an interruption/.test(l))).toBe(true);
    expect((await jiraWrites()).filter((w) => !(w.path.endsWith('/remotelink') && w.status === 200))).toEqual(
      [],
    );

    // An issue deleted from Jira since: its remote links fail, saying so (Jira answers their POST with a 404).
    const goneId = items[0]?.id as number;
    const gone = view.keyOf.get(goneId) as string;
    await target.http.request('DELETE', `/rest/api/3/issue/${gone}`);
    const afterDelete = await work(linksPhase, ctx);
    const onGone = afterDelete.log.filter((l) => l.startsWith(`#${goneId} ${gone} `));
    expect(onGone.some((l) => l.includes(' -> Azure DevOps #'))).toBe(true);
    expect(onGone.every((l) => l.endsWith(`failed: ${gone} no longer exists in Jira`))).toBe(true);
    expect(afterDelete.log.filter((l) => l.includes('failed') && !l.includes(gone))).toEqual([]);
    console.log(`filtered scope: ${expectedRemote} remote links, ${expectedIssueLinks.size} issue links`);
  });
});

describe('a dry run', () => {
  it('counts what it would do and writes nothing', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { runId } = await migrate('Dry', { dryRun: true });
    const ctx = await contextOf(runId);
    const inScope = new Set(ctx.preflight.manifest.map((m) => m.id));
    const items = await adoItems([...inScope]);
    const expected = expectedLinks(items, inScope);
    const remotes = expectedRemotes(items, inScope).length;
    await clearRequests();
    const hierarchy = await work(hierarchyPhase, ctx);
    const links = await work(linksPhase, ctx);
    expect(await jiraWrites()).toEqual([]);
    expect((await h.jiraIssues()).length).toBe(0);
    const pairs = ctx.preflight.manifest.filter((m) => m.parentId !== null).length;
    expect(hierarchy).toMatchObject({ units: pairs, success: pairs, failure: 0 });
    // Every item would get its link back to ADO too.
    expect(links).toMatchObject({
      units: expected.size + remotes + inScope.size,
      success: expected.size + remotes + inScope.size,
      failure: 0,
    });
    expect(links.log.filter((l) => /would be linked/.test(l))).toHaveLength(expected.size);
    expect(links.log.filter((l) => /would be added as a remote link/.test(l))).toHaveLength(
      remotes + inScope.size,
    );
  });
});

describe('plans stored in parts', () => {
  it('reads the plans a part at a time, with the units, order, de-duplication and comments of the plan joined whole', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const { projectId, runId } = await migrate('Plan parts');
    await detachEveryOtherParent(projectId);
    // Slices of 60 items: the 220 items' plans in 4 parts, links between slices planned by both.
    const deps = h.deps({ planSliceItems: 60 });
    // ADO as it may be: a link recorded on one end only, and a link's comment recorded on one end only, the later
    // one in the manifest (so the slice that plans the link first has no comment for it).
    const manifest = (await contextOf(runId, deps)).preflight.manifest;
    const position = new Map(manifest.map((m, i) => [m.id, i]));
    const workItems = deps.source.workItems.bind(deps.source);
    deps.source.workItems = async (ids, opts) =>
      (await workItems(ids, opts)).map((item) => ({
        ...item,
        ...(item.relations
          ? {
              relations: item.relations.flatMap((r) => {
                if (r.rel === 'System.LinkTypes.Dependency-Forward' && item.id % 3 === 0) return [];
                const other = position.get(idOfUrl(r.url)) ?? -1;
                if (r.attributes?.comment && (position.get(item.id) ?? -1) < other)
                  return [{ ...r, attributes: { ...r.attributes, comment: undefined } }];
                return [r];
              }),
            }
          : {}),
      }));
    const reads: string[] = [];
    const get = deps.artifacts.get.bind(deps.artifacts);
    deps.artifacts.get = async (key) => {
      reads.push(key);
      return get(key);
    };
    const slices = Math.ceil(manifest.length / 60);
    const parts = async <P>(key: string) =>
      Promise.all(
        Array.from(
          { length: slices },
          async (_, n) => JSON.parse((await get(`${key}.part-${n}`)) as string) as P,
        ),
      );
    /** The plan's index: small, no units, the units each part holds. */
    const indexOf = async (key: string) => {
      const body = (await get(key)) as string;
      const index = JSON.parse(body) as { version: number; parts: number[]; units?: unknown };
      expect(index.version).toBe(2);
      expect(index.units).toBeUndefined();
      expect(index.parts).toHaveLength(slices);
      return { ...index, bytes: body.length };
    };
    /** The parts a pass read, by number, in order. */
    const partReads = (key: string) =>
      reads.flatMap((k) => (k.startsWith(`${key}.units-`) ? [Number(k.split('-').at(-1))] : []));

    // Hierarchy: a pair is planned by its child's slice only, so its parts are the slices' parts as they are.
    const hierarchyKey = hierarchyPlanKey(h.tenant.tenantId, runId);
    const ctx = await contextOf(runId, deps);
    reads.length = 0;
    const hierarchy = await work(hierarchyPhase, ctx);
    expect(hierarchy).toMatchObject({ failure: 0, skipped: 0 });
    expect(hierarchy.success).toBe(hierarchy.units);
    const hierarchyUnits = (await parts<HierarchyPlan>(hierarchyKey)).flatMap((p) => p.units);
    expect(hierarchy.units).toBe(hierarchyUnits.length);
    const hierarchyIndex = await indexOf(hierarchyKey);
    const filled = hierarchyIndex.parts.flatMap((count, n) => (count > 0 ? [n] : []));
    expect(filled.length).toBeGreaterThan(1);
    // The pass read the parts with units (a block may span more parts than the two a reader holds, so one may be
    // read twice), and no plan whole.
    expect([...new Set(partReads(hierarchyKey))].sort((a, b) => a - b)).toEqual(filled);
    const hierarchyReader = await openPlan<HierarchyUnit, unknown>(
      deps.artifacts,
      hierarchyKey,
      ctx.invocation,
    );
    expect(await hierarchyReader.range(0, hierarchyReader.length)).toEqual(hierarchyUnits);

    // Links: parts de-duplicated as the plan joined whole was.
    const linksKey = linkPlanKey(h.tenant.tenantId, runId);
    const ctx2 = await contextOf(runId, deps);
    expect(await linksPhase.prepare?.(ctx2, () => Number.POSITIVE_INFINITY)).toBe(true);
    const sliceParts = await parts<LinkPlan>(linksKey);
    const whole = mergeLinkPlans(sliceParts);
    // Links planned by two slices, and comments taken from a later slice's duplicate, both occur.
    const planned = sliceParts.flatMap((p) => p.units);
    expect(planned.length).toBeGreaterThan(whole.units.length);
    const firstComments = new Map<string, string | undefined>();
    for (const u of planned)
      if (u.kind === 'issue' && !firstComments.has(linkKey(u))) firstComments.set(linkKey(u), u.comment);
    const upgraded = whole.units.filter(
      (u) => u.kind === 'issue' && u.comment && firstComments.get(linkKey(u)) === undefined,
    );
    expect(upgraded.length).toBeGreaterThan(0);
    const linksIndex = await indexOf(linksKey);
    expect(linksIndex.parts.reduce((a, b) => a + b, 0)).toBe(whole.units.length);
    expect(linksIndex.bytes).toBeLessThan(500);

    reads.length = 0;
    await clearRequests();
    const links = await work(linksPhase, ctx2);
    expect(links).toMatchObject({
      units: whole.units.length,
      success: whole.units.length,
      failure: 0,
      skipped: 0,
    });
    expect(links.log.filter((l) => l === whole.warnings[0])).toHaveLength(whole.warnings.length ? 1 : 0);
    const linkParts = linksIndex.parts.flatMap((count, n) => (count > 0 ? [n] : []));
    expect(linkParts.length).toBeGreaterThan(2);
    expect(partReads(linksKey)).toEqual(linkParts);
    expect(reads).not.toContain(linksKey); // the index was read by the invocation's prepare, once
    // Each unit by index is the plan's; a reader holds two parts: the first, let go, is read again.
    const reader = await openPlan<LinkUnit, unknown>(deps.artifacts, linksKey, ctx2.invocation);
    reads.length = 0;
    const byIndex: (LinkUnit | undefined)[] = [];
    for (let i = 0; i < reader.length; i++) byIndex.push(await reader.at(i));
    expect(byIndex).toEqual(whole.units);
    expect(partReads(linksKey)).toEqual(linkParts);
    // The comments a later slice carried are on the links in Jira.
    const view = await jiraView();
    const withComment = whole.units.filter((u) => u.kind === 'issue' && u.comment === 'same root cause');
    expect(view.comments.filter((c) => c === 'same root cause')).toHaveLength(withComment.length);

    // A run under way before plans were stored in parts has its link plan stored whole: it still reads.
    await deps.artifacts.put(linksKey, JSON.stringify(whole));
    const ctx3 = await contextOf(runId, deps);
    reads.length = 0;
    await clearRequests();
    const again = await work(linksPhase, ctx3);
    expect(again).toMatchObject({ units: whole.units.length, success: whole.units.length, failure: 0 });
    expect(partReads(linksKey)).toEqual([]);
    expect(reads.filter((k) => k === linksKey)).toHaveLength(1);
    const oldReader = await openPlan<LinkUnit, LinkPlanHeader>(deps.artifacts, linksKey, ctx3.invocation);
    expect(await oldReader.range(0, oldReader.length)).toEqual(whole.units);
    expect(oldReader.header).toEqual({ symmetric: whole.symmetric, warnings: whole.warnings });
    // Found done: the remote links posted again and updated (200), nothing else written.
    expect((await jiraWrites()).filter((w) => !(w.path.endsWith('/remotelink') && w.status === 200))).toEqual(
      [],
    );
    console.log(
      `plans in parts: hierarchy ${hierarchyUnits.length} units in ${filled.length} parts; links ${planned.length} planned, ${whole.units.length} kept in ${linkParts.length} parts, ${upgraded.length} comments from a later slice`,
    );
  });
});
