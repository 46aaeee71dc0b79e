/**
 * Phase 1's sprint and component setup over the sandboxes, with the ADO calendar laid around a fixed
 * reference day (SANDBOX_ADO_REFERENCE_DAY) and the platform clock set to that day, never the real date.
 * Checked against the generator's own iterations and areas: every item lands in the sprint of its iteration
 * (dated, non-root ones) and the component of its area; past sprints end closed with their issues, the one
 * under way active, later ones future; a second run creates no sprint or component twice and moves none; a dry
 * run writes nothing and previews what it would create; and items whose sprint an earlier run closed are
 * created outside it with a warning, not a failure. Each run's record of what it made holds exactly the sprints
 * and components it created (none for a second run, which finds them), also when preflight crashed between its
 * creates and their record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHASES, type RunOptions } from '../../functions/domain/runs.ts';
import { loadPreflight, runPreflight } from '../../functions/engine/phases/preflight.ts';
import { runBatch } from '../../functions/engine/runner.ts';
import { MadeInJiraRecord } from '../../functions/phase-kit/made-in-jira.ts';
import { clock } from '../../functions/platform/clock.ts';
import type { ArtifactStore } from '../../functions/store/artifact-store.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { adoSandboxState } from '../../local/sandbox/ado/index.ts';
import { type ClassificationNode, flatten } from '../../local/sandbox/generator/classification.ts';
import { CUSTOM } from '../../local/sandbox/jira/catalog.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

const DAY = 86_400_000;
const REFERENCE_DAY = '2025-06-04'; // a Wednesday inside the sandbox calendar's current sprint (Sprint 53)
const NOON = Date.parse(`${REFERENCE_DAY}T12:00:00Z`);
/** Only the create phase matters here; the rest of the run is kept short. */
const QUICK: Partial<RunOptions> = { migrateAttachments: false, migrateComments: false, migrateLinks: false };

let h: EngineHarness;
const saved = { referenceDay: process.env.SANDBOX_ADO_REFERENCE_DAY, now: clock.now };

beforeAll(async () => {
  process.env.SANDBOX_ADO_REFERENCE_DAY = REFERENCE_DAY;
  const started = Date.now();
  clock.now = () => new Date(NOON + (Date.now() - started));
  h = await startEngineHarness({ items: 60, seed: 3 });
});
afterAll(async () => {
  await h?.close();
  clock.now = saved.now;
  if (saved.referenceDay === undefined) delete process.env.SANDBOX_ADO_REFERENCE_DAY;
  else process.env.SANDBOX_ADO_REFERENCE_DAY = saved.referenceDay;
});

interface Expected {
  sprint?: { name: string; state: 'future' | 'active' | 'closed'; startDate: string };
  component?: string;
}

/** What each migrated ADO item should get, from the generator's world (not from the engine's code). */
function expectations(): Map<number, Expected> {
  const world = adoSandboxState(h.sandboxes.ado.app).world;
  const nodes = new Map<string, ClassificationNode>(
    flatten(world.iterations.root).map((n) => [n.path.toLowerCase(), n]),
  );
  const out = new Map<number, Expected>();
  for (const item of world.workItems) {
    if (item.type === 'Shared Steps') continue; // not migrated as an issue
    const expected: Expected = {};
    const node = nodes.get(item.iterationPath.toLowerCase());
    if (node && node.depth > 0 && node.startDate && node.finishDate) {
      const start = Date.parse(node.startDate);
      const end = Date.parse(node.finishDate) + DAY;
      expected.sprint = {
        name: node.name, // the generated names are unique, so no path is needed
        state: NOON >= end ? 'closed' : NOON >= start ? 'active' : 'future',
        startDate: new Date(start).toISOString(),
      };
    }
    const below = item.areaPath.split('\\').slice(1);
    if (below.length > 0) expected.component = below.join(' / ');
    out.set(item.id, expected);
  }
  return out;
}

const sourceIdOf = (issue: JiraIssueDump) =>
  Number((issue.fields.labels ?? []).find((l) => l.startsWith('src-id-'))?.slice('src-id-'.length));
const sprintsOf = (issue: JiraIssueDump) =>
  (issue.fields[CUSTOM.sprint] as { id: number; name: string; state: string; startDate?: string }[] | null) ??
  [];
const componentsOf = (issue: JiraIssueDump) =>
  ((issue.fields.components as { name: string }[] | undefined) ?? []).map((c) => c.name);

async function run(projectId: string, options: Partial<RunOptions> = {}) {
  const created = await createRun(h.app.store, h.tenant.tenantId, projectId, 'FULL', {
    ...QUICK,
    ...options,
  });
  const answers = await h.drive(created.id);
  const done = await h.app.store.runs.get(h.tenant.tenantId, created.id);
  return { id: created.id, answers, done };
}

/** What a run's record says it made, as `sprint 12` and `component 10001`. */
async function madeBy(runId: string): Promise<Set<string>> {
  const record = await MadeInJiraRecord.open(h.deps().artifacts, { tenantId: h.tenant.tenantId, runId });
  return new Set(record.entries.map((m) => `${m.kind} ${m.id}`));
}

async function boardSprints() {
  return h.deps().target.sprints(1);
}

async function jiraRequests() {
  return (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
}

/** Where in Jira's request log the last bulk create came, and the sprint steps (start, close) taken before it. */
async function stepsBeforeLastBulkCreate() {
  const requests = await jiraRequests();
  const lastBulk = requests.findLastIndex((r) => r.method === 'POST' && r.path === '/rest/api/3/issue/bulk');
  const steps = requests.flatMap((r, n) =>
    r.method === 'POST' && /^\/rest\/agile\/1\.0\/sprint\/\d+$/.test(r.path) ? [n] : [],
  );
  return {
    bulkCreates: requests.filter((r) => r.path === '/rest/api/3/issue/bulk').length,
    steps: steps.length,
    before: steps.filter((n) => n < lastBulk).length,
  };
}

describe('sprints and components', () => {
  it('a dry run writes nothing to Jira and previews the sprints and components it would create', async () => {
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const project = await h.newProject('Dry');
    const { id, answers } = await run(project.id, { dryRun: true });
    expect(answers.at(-1)).toBe('done');
    const writes = (await jiraRequests()).filter(
      (r) => r.method !== 'GET' && !r.path.startsWith('/rest/api/3/search/jql'),
    );
    expect(writes).toEqual([]);
    expect(await boardSprints()).toEqual([]);

    const expected = [...expectations().values()];
    const sprintNames = new Set(expected.flatMap((e) => (e.sprint ? [e.sprint.name] : [])));
    const componentNames = new Set(expected.flatMap((e) => (e.component ? [e.component] : [])));
    const preview = JSON.parse(
      (await h.deps().artifacts.get(artifactKeys.preview(h.tenant.tenantId, id))) ?? '{}',
    );
    expect(new Set(preview.sprints.map((s: { name: string }) => s.name))).toEqual(sprintNames);
    expect(preview.sprints.every((s: { action: string }) => s.action === 'create')).toBe(true);
    expect(new Set(preview.components.map((c: { name: string }) => c.name))).toEqual(componentNames);
    expect(preview.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^dry run: would create ${sprintNames.size} sprints on board 1: `)),
        expect.stringMatching(new RegExp(`^dry run: would create ${componentNames.size} components: `)),
      ]),
    );
  });

  it('lands every item in the sprint of its iteration and the component of its area; past sprints closed, the current one active', async () => {
    const project = await h.newProject('Sprints');
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const { id, done } = await run(project.id);
    expect(done?.status).toBe('COMPLETED');
    // Sprints are started and closed while later items are still being created (their own issues all exist
    // by then: checked below), not only after the last bulk create.
    const order = await stepsBeforeLastBulkCreate();
    expect(order.bulkCreates).toBeGreaterThan(1);
    expect(order.before).toBeGreaterThan(0);
    const expected = expectations();
    const issues = await h.jiraIssues();
    expect(issues.map(sourceIdOf).sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));

    // Each issue: exactly its iteration's sprint (with that sprint's final state), and its area's component.
    for (const issue of issues) {
      const want = expected.get(sourceIdOf(issue)) as Expected;
      const got = sprintsOf(issue).map((s) => ({ name: s.name, state: s.state, startDate: s.startDate }));
      expect({ id: sourceIdOf(issue), sprints: got }).toEqual({
        id: sourceIdOf(issue),
        sprints: want.sprint ? [want.sprint] : [],
      });
      expect({ id: sourceIdOf(issue), components: componentsOf(issue) }).toEqual({
        id: sourceIdOf(issue),
        components: want.component ? [want.component] : [],
      });
    }

    // The board: one sprint per used dated iteration, in its state; one active, the sprint under way.
    const wanted = new Map(
      [...expected.values()].flatMap((e) => (e.sprint ? [[e.sprint.name, e.sprint.state] as const] : [])),
    );
    const sprints = await boardSprints();
    expect(new Map(sprints.map((s) => [s.name, s.state]))).toEqual(wanted);
    expect(sprints).toHaveLength(wanted.size);
    expect(sprints.filter((s) => s.state === 'active').map((s) => s.name)).toEqual(['Sprint 53']);
    expect(sprints.filter((s) => s.state === 'closed').length).toBeGreaterThan(10);
    expect(sprints.some((s) => s.state === 'future')).toBe(true);
    // A closed sprint keeps its issues: JQL finds each one's issues there.
    const target = h.deps().target;
    for (const s of sprints.filter((x) => x.state === 'closed').slice(0, 5)) {
      const inSprint = await target.search(`sprint = ${s.id}`, { fields: ['labels'] });
      const expectedIds = [...expected].filter(([, e]) => e.sprint?.name === s.name).map(([id]) => id);
      expect(inSprint.map((i) => sourceIdOf(i as JiraIssueDump)).sort((a, b) => a - b)).toEqual(
        expectedIds.sort((a, b) => a - b),
      );
    }
    const components = await target.components(h.config.jira.projectKey);
    expect(new Set(components.map((c) => c.name))).toEqual(
      new Set([...expected.values()].flatMap((e) => (e.component ? [e.component] : []))),
    );
    expect(components).toHaveLength(new Set(components.map((c) => c.name.toLowerCase())).size);
    // The run's record: each sprint and component it made (the site had none before it), with its id
    expect(await madeBy(id)).toEqual(
      new Set([...sprints.map((s) => `sprint ${s.id}`), ...components.map((c) => `component ${c.id}`)]),
    );
  });

  it('a second run creates no sprint or component twice and moves no sprint', async () => {
    const before = {
      sprints: await boardSprints(),
      components: await h.deps().target.components(h.config.jira.projectKey),
    };
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const project = (await h.app.store.projects.list(h.tenant.tenantId)).find((p) => p.name === 'Sprints');
    const { id, done } = await run(project!.id);
    expect(done).toMatchObject({ status: 'COMPLETED', successCount: 0, failureCount: 0 });
    // What it found is not what it made: its record is empty
    expect(await madeBy(id)).toEqual(new Set());
    expect(done?.skippedCount).toBe(expectations().size);
    const sprintOrComponentWrites = (await jiraRequests()).filter(
      (r) =>
        r.method === 'POST' &&
        (r.path.startsWith('/rest/agile/1.0/sprint') || r.path.startsWith('/rest/api/3/component')),
    );
    expect(sprintOrComponentWrites).toEqual([]);
    expect(await boardSprints()).toEqual(before.sprints);
    expect(await h.deps().target.components(h.config.jira.projectKey)).toEqual(before.components);
  });

  it('creates items whose sprint an earlier run closed outside it, with a warning, not a failure', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Widening');
    // First only the Mobile area: its past sprints are closed at the end of that run.
    const first = await run(project.id, { areaFilter: 'Contoso\\Mobile' });
    expect(first.done?.status).toBe('COMPLETED');
    const closedByFirst = new Set(
      (await boardSprints()).filter((s) => s.state === 'closed').map((s) => s.name),
    );
    expect(closedByFirst.size).toBeGreaterThan(0);

    // Then everything: the rest of the items, some of them in sprints the first run closed.
    const second = await run(project.id);
    expect(second.done).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    const expected = expectations();
    const outside: number[] = [];
    for (const issue of await h.jiraIssues()) {
      const id = sourceIdOf(issue);
      const want = expected.get(id) as Expected;
      const mobile = want.component?.startsWith('Mobile') ?? false;
      const late = !mobile && want.sprint !== undefined && closedByFirst.has(want.sprint.name);
      if (late) outside.push(id);
      expect({ id, sprints: sprintsOf(issue).map((s) => s.name) }).toEqual({
        id,
        sprints: want.sprint && !late ? [want.sprint.name] : [],
      });
    }
    expect(outside.length).toBeGreaterThan(0);
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, second.id, undefined, 5000);
    const warned = events
      .map((e) => (e.event.type === 'log' ? e.event.message : ''))
      .filter((m) => m.includes('was already closed in Jira: created outside it'))
      .map((m) => Number(/^#(\d+)/.exec(m)?.[1]));
    expect(warned.sort((a, b) => a - b)).toEqual(outside.sort((a, b) => a - b));
    // Still one sprint per name: the closed ones were reused, not made again.
    const names = (await boardSprints()).map((s) => s.name);
    expect(names).toHaveLength(new Set(names).size);
  });

  it('leaves sprints future with a warning when the board already has an active sprint, and closes them once it may', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const target = h.deps().target;
    const team = await target.createSprint({
      name: 'Team sprint',
      originBoardId: 1,
      startDate: '2025-06-02T00:00:00.000Z',
      endDate: '2025-06-13T23:59:59.000Z',
    });
    await target.updateSprint(team.id, { state: 'active' });
    const project = await h.newProject('Busy board');
    const first = await run(project.id, { areaFilter: 'Contoso\\Mobile' });
    expect(first.done).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    const wanted = new Map(
      [...expectations().values()]
        .filter((e) => e.component?.startsWith('Mobile'))
        .flatMap((e) => (e.sprint ? [[e.sprint.name, e.sprint.state] as const] : [])),
    );
    const toMove = [...wanted].filter(([, state]) => state !== 'future').map(([name]) => name);
    expect(toMove.length).toBeGreaterThan(0);
    // Without parallel sprints none of ours could start, so none could close: all future, each reported.
    const ours = (await boardSprints()).filter((s) => s.id !== team.id);
    expect(new Set(ours.map((s) => s.name))).toEqual(new Set(wanted.keys()));
    expect(ours.map((s) => s.state)).toEqual(ours.map(() => 'future'));
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, first.id, undefined, 5000);
    const refused = events
      .map((e) => (e.event.type === 'log' ? e.event.message : ''))
      .filter((m) => m.endsWith('(There can only be one active sprint on each board.): left future'))
      .map((m) => /^sprint "([^"]+)"/.exec(m)?.[1]);
    expect(refused.sort()).toEqual(toMove.sort());

    // Parallel sprints on, the same scope again: nothing is created, the sprints reach their states.
    await h.control('jira', 'PUT', '/_sandbox/jira/agile', { parallelSprints: true });
    const again = await run(project.id, { areaFilter: 'Contoso\\Mobile' });
    expect(again.done).toMatchObject({ status: 'COMPLETED', successCount: 0, failureCount: 0 });
    const after = (await boardSprints()).filter((s) => s.id !== team.id);
    expect(new Map(after.map((s) => [s.name, s.state]))).toEqual(wanted);
    expect(after.map((s) => s.id).sort()).toEqual(ours.map((s) => s.id).sort());
  });

  it('resumes a run whose preflight predates closableAt: every sprint step waits for the phase end, as before', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Older preflight');
    const created = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    await h.driveThrough(created.id, 1);
    const key = artifactKeys.preflight(h.tenant.tenantId, created.id);
    const preflight = JSON.parse((await h.deps().artifacts.get(key)) ?? '{}');
    expect(preflight.sprints.some((s: { closableAt?: number }) => s.closableAt !== undefined)).toBe(true);
    for (const s of preflight.sprints) delete s.closableAt;
    await h.deps().artifacts.put(key, JSON.stringify(preflight));
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    await h.drive(created.id);
    expect((await h.app.store.runs.get(h.tenant.tenantId, created.id))?.status).toBe('COMPLETED');
    const order = await stepsBeforeLastBulkCreate();
    expect(order.steps).toBeGreaterThan(0);
    expect(order.before).toBe(0);
    const wanted = new Map(
      [...expectations().values()].flatMap((e) =>
        e.sprint ? [[e.sprint.name, e.sprint.state] as const] : [],
      ),
    );
    expect(new Map((await boardSprints()).map((sp) => [sp.name, sp.state]))).toEqual(wanted);
  });

  it('an invocation that ends inside the create phase lets its sprint steps finish first, and tells their lines', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Released steps');
    const created = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    await h.driveThrough(created.id, 1);
    // The sprint steps (start, close) the first chunk allows are held until the runner decides to stop, so that
    // they are under way when the invocation ends (the create worker's `close()`).
    const deps = h.deps();
    const http = deps.target.http;
    const request = http.request.bind(http);
    let stop!: () => void;
    const stopping = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const steps = { sent: 0, answered: 0 };
    http.request = (async (method: string, path: string, opts?: object) => {
      if (method !== 'POST' || !/^\/rest\/agile\/1\.0\/sprint\/\d+$/.test(path))
        return request(method, path, opts);
      steps.sent++;
      await stopping;
      try {
        return await request(method, path, opts);
      } finally {
        steps.answered++;
      }
    }) as typeof http.request;
    let calls = 0;
    // The first chunk of phase 2 in budget, then none: the invocation ends inside the phase.
    const remainingMs = () => {
      if (++calls === 1) return 900_000;
      stop();
      return 0;
    };
    const answer = await runBatch(
      deps,
      { tenantId: h.tenant.tenantId, runId: created.id },
      remainingMs,
      h.config.jira.projectKey,
    );
    expect(answer).toBe('batch');
    const run = await h.app.store.runs.get(h.tenant.tenantId, created.id);
    expect(run?.cursor).toMatchObject({ phase: PHASES.create, index: 50 });
    // Steps were under way when it stopped, and none was left going on after the invocation.
    expect(steps.sent).toBeGreaterThan(0);
    expect(steps.answered).toBe(steps.sent);
    const lines = (await h.app.store.runs.events(h.tenant.tenantId, project.id, created.id)).flatMap((e) =>
      e.event.type === 'log' && /^sprint ".+" (started|closed)$/.test(e.event.message)
        ? [e.event.message]
        : [],
    );
    expect(lines).toHaveLength(steps.sent);

    // The next invocations take the run on: each step taken once.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    await h.drive(created.id);
    expect((await h.app.store.runs.get(h.tenant.tenantId, created.id))?.status).toBe('COMPLETED');
    const stepped = (await jiraRequests()).filter(
      (r) => r.method === 'POST' && /^\/rest\/agile\/1\.0\/sprint\/\d+$/.test(r.path),
    );
    // Every sprint was created future: one step to start it, another to close it.
    const board = await boardSprints();
    const active = board.filter((s) => s.state === 'active').length;
    expect(steps.sent + stepped.length).toBe(active + 2 * board.filter((s) => s.state === 'closed').length);
  });

  it('creates an item that moved into a past sprint after preflight outside it, with a warning, once that sprint may be closed', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Moved in');
    const created = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    await h.driveThrough(created.id, 1);
    const preflight = await loadPreflight(h.deps(), created);
    // A past sprint whose issues are all in the first chunk, and an item of the second chunk moved into it.
    const sprint = preflight.sprints?.find(
      (s) => s.state === 'closed' && s.closableAt !== undefined && s.closableAt <= 50,
    );
    const moved = preflight.manifest
      .slice(50)
      .find((m) => preflight.typeLevels[preflight.typeMap[m.type]?.name ?? ''] !== -1);
    expect(sprint).toBeDefined();
    expect(moved).toBeDefined();
    const auth = Buffer.from(`:${h.config.ado.pat}`).toString('base64');
    const patched = await fetch(
      `${h.sandboxes.ado.url}/${h.config.ado.org}/${h.config.ado.project}/_apis/wit/workitems/${moved?.id}?api-version=7.1`,
      {
        method: 'PATCH',
        headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/json-patch+json' },
        body: JSON.stringify([
          { op: 'add', path: '/fields/System.IterationPath', value: sprint?.iterationPath },
        ]),
      },
    );
    expect(patched.status).toBe(200);
    await h.drive(created.id);
    const done = await h.app.store.runs.get(h.tenant.tenantId, created.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    const issue = (await h.jiraIssues()).find((i) => sourceIdOf(i) === moved?.id) as JiraIssueDump;
    expect(sprintsOf(issue)).toEqual([]);
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, created.id, undefined, 5000);
    expect(events.map((e) => (e.event.type === 'log' ? e.event.message : ''))).toContain(
      `#${moved?.id}: sprint "${sprint?.name}" may already be closed by this run (the item moved into it after the run began): created outside it`,
    );
    expect((await boardSprints()).find((s) => s.id === sprint?.id)?.state).toBe('closed');
  });

  it('sets each parent Jira can hold at create, also when the sprint order puts parent and child in one chunk', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Parents at create');
    const created = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    await h.driveThrough(created.id, 2); // the create phase alone: phase 3 sets no parent yet
    const preflight = await loadPreflight(h.deps(), created);
    const levelOf = (type: string) => preflight.typeLevels[preflight.typeMap[type]?.name ?? ''] ?? 0;
    const chunkOf = new Map(preflight.manifest.map((m, n) => [m.id, Math.floor(n / 50)]));
    const byId = new Map(preflight.manifest.map((m) => [m.id, m]));
    const held = preflight.manifest.filter((m) => {
      const parent = m.parentId !== null ? byId.get(m.parentId) : undefined;
      return parent !== undefined && levelOf(parent.type) === levelOf(m.type) + 1;
    });
    expect(held.some((m) => chunkOf.get(m.id) === chunkOf.get(m.parentId as number))).toBe(true);
    const issues = new Map((await h.jiraIssues()).map((i) => [sourceIdOf(i), i]));
    for (const m of held)
      expect({ id: m.id, parent: issues.get(m.id)?.fields.parent?.key }).toEqual({
        id: m.id,
        parent: issues.get(m.parentId as number)?.key,
      });
  });

  it("a preflight that crashed after creating sprints, before recording their ids, finds them again as the run's own", async () => {
    // Prepare: a fresh site; the run's record refuses its second write (the ids after the sprints' creates)
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Crashed setup');
    const created = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    const key = artifactKeys.madeInJira(h.tenant.tenantId, created.id);
    const base = h.deps().artifacts;
    let writes = 0;
    const crashing: ArtifactStore = {
      get: (k) => base.get(k),
      putStream: (k, body) => base.putStream(k, body),
      remove: (keys) => base.remove(keys),
      removeUnder: (prefix) => base.removeUnder(prefix),
      put: async (k, body) => {
        if (k === key && ++writes === 2) throw new Error('the process was killed');
        return base.put(k, body);
      },
    };

    // Act: the preflight dies after its sprints' creates; worked again, it finds them on the board
    await expect(
      runPreflight(h.deps({ artifacts: crashing }), created, h.config.jira.projectKey),
    ).rejects.toThrow('the process was killed');
    const afterCrash = await boardSprints();
    expect(afterCrash.length).toBeGreaterThan(0);
    expect([...(await madeBy(created.id))].every((m) => m === 'sprint null')).toBe(true);
    const preflight = await runPreflight(h.deps(), created, h.config.jira.projectKey);

    // Assess: no sprint made twice; each is the run's own (created), recorded with its id, as its components are
    expect(await boardSprints()).toEqual(afterCrash);
    expect(preflight.sprints.every((s) => s.created)).toBe(true);
    const components = await h.deps().target.components(h.config.jira.projectKey);
    expect(await madeBy(created.id)).toEqual(
      new Set([...afterCrash.map((s) => `sprint ${s.id}`), ...components.map((c) => `component ${c.id}`)]),
    );
  });
});
