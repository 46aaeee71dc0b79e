/**
 * The runner's one pool per phase, through the real runner, sandboxes and DynamoDB Local: a slow unit holds back
 * the checkpoint only, never the units past its chunk's end; and crashes at the checkpoint mid-window resume
 * with one Jira issue, link, remote link and comment per source.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHASES } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { transitionsPhase } from '../../functions/engine/phases/transitions.ts';
import { runBatch } from '../../functions/engine/runner.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { migratedUnits } from '../../functions/phase-kit/toolkit.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 110, seed: 73 });
});
afterAll(async () => {
  await h?.close();
});

/** A run driven through the phases before transitions: the transitions phase's units and each one's Jira key. */
async function atTransitions(name: string) {
  const project = await h.newProject(name);
  const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', { migrateComments: false });
  await h.driveThrough(run.id, PHASES.transitions - 1);
  const now = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
  const deps = h.deps();
  const ctx = {
    deps,
    run: now,
    preflight: await loadPreflight(deps, now),
    invocation: new InvocationScope(),
  };
  // The phase's units, as the runner will count them (kept as an artifact: the same list).
  expect(await transitionsPhase.units(ctx)).toBeGreaterThan(80);
  const ids = await migratedUnits(ctx, 'transitions-units.json');
  const entries = await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, ids);
  return { run, ids, keyAt: (i: number) => entries.get(ids[i]!)!.targetKey };
}

/**
 * A Jira client whose read of `slowKey` waits until one of `laterKeys` is read; the wait has a far deadline only
 * so that a runner holding those back fails ('held back') instead of hanging. `read`: every issue it read.
 */
function slowJira(slowKey: string, laterKeys: Set<string>) {
  let laterStarted!: () => void;
  const later = new Promise<'started'>((resolve) => {
    laterStarted = () => resolve('started');
  });
  const seen = { slow: undefined as string | undefined, later: false, read: new Set<string>() };
  class SlowJira extends JiraClient {
    override async getIssue(key: string, fields?: string[]) {
      seen.read.add(key);
      if (laterKeys.has(key)) {
        seen.later = true;
        laterStarted();
      }
      if (key === slowKey && seen.slow === undefined)
        seen.slow = await Promise.race([
          later,
          new Promise<string>((resolve) => setTimeout(() => resolve('held back'), 60_000)),
        ]);
      return super.getIssue(key, fields);
    }
  }
  const target = new SlowJira(
    { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
    { initialDelayMs: 20 },
  );
  return { target, seen };
}

describe('one pool per phase', () => {
  it('a slow unit does not hold back the units past its chunk: the window moves on over the finished prefix', async () => {
    const { run, ids, keyAt } = await atTransitions('Slow unit');
    // Unit 30 reads its issue only once a unit of the next chunk of 50 has read its own. One pool lets units 50-79
    // start as soon as units 0-29 are checkpointed; chunk by chunk none could start before unit 30 ended.
    const { target, seen } = slowJira(keyAt(30), new Set(ids.slice(50).map((_, n) => keyAt(50 + n))));
    await h.driveThrough(run.id, PHASES.transitions, h.deps({ target }));
    expect(seen.slow).toBe('started');
    const after = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
    expect(after.cursor.phase).toBe(PHASES.transitions + 1);
    expect(after.failureCount).toBe(0);
  }, 300_000);

  it('a crash after out-of-order moves: the resume works no unit the checkpoint covered, at most 50 again', async () => {
    const { run, ids, keyAt } = await atTransitions('Out of order');
    // Unit 5 is held until a unit 55 or more past it has started: only a checkpoint that covers the units finished
    // past unit 5 lets the pool get there (at most 50 units worked and not covered). Then the next move is killed.
    const { target, seen } = slowJira(keyAt(5), new Set(ids.slice(60).map((_, n) => keyAt(60 + n))));
    const crash = (point: string) => {
      if (point === 'before-checkpoint' && seen.later)
        throw new SimulatedCrash('killed before the checkpoint');
    };
    await expect(
      runBatch(
        h.deps({ target, crash }),
        { tenantId: h.tenant.tenantId, runId: run.id },
        () => 900_000,
        h.config.jira.projectKey,
      ),
    ).rejects.toThrow(SimulatedCrash);
    expect(seen.slow).toBe('started');
    const atCrash = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!.cursor;
    expect(atCrash.phase).toBe(PHASES.transitions);
    expect(atCrash.done?.length ?? 0).toBeGreaterThan(0);
    const covered = new Set(
      ids.flatMap((_, i) => (i < atCrash.index || atCrash.done?.includes(i) ? [keyAt(i)] : [])),
    );

    const logged = ((await h.control('jira', 'GET', '/_sandbox/requests')) as { path: string }[]).length;
    await h.driveThrough(run.id, PHASES.transitions);
    const resumed = ((await h.control('jira', 'GET', '/_sandbox/requests')) as { path: string }[]).slice(
      logged,
    );
    const touched = new Set(
      resumed.flatMap((r) => /\/rest\/api\/3\/issue\/([A-Z]+-\d+)/.exec(r.path)?.[1] ?? []),
    );
    for (const key of covered) expect(touched.has(key), `${key} worked again`).toBe(false);
    // Worked again: only units started and not covered when the run was killed, at most 50.
    const again = [...touched].filter((k) => seen.read.has(k));
    expect(again.length).toBeLessThanOrEqual(50);
    const after = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
    expect(after.cursor.phase).toBe(PHASES.transitions + 1);
    expect(after.failureCount).toBe(0);
  }, 300_000);

  it('crashes at the checkpoint mid-window resume with one issue, link, remote link and comment per source', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Crash mid-window');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    // Killed at every third checkpoint of phases 3-7 (the pooled ones), with units of the window under way.
    let checkpoints = 0;
    const crashedIn = new Set<number>();
    const deps = h.deps({
      crash: (point) => {
        if (point !== 'before-checkpoint') return;
        checkpoints++;
        if (checkpoints % 3 !== 0) return;
        throw new SimulatedCrash('killed before the checkpoint');
      },
    });
    const answers = await h.drive(run.id, deps, (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
      void h.app.store.runs.get(h.tenant.tenantId, run.id).then((r) => r && crashedIn.add(r.cursor.phase));
    });
    expect(answers.at(-1)).toBe('done');
    const ended = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
    expect(ended.status).toMatch(/^(COMPLETED|PARTIAL)$/);
    for (const phase of [PHASES.hierarchy, PHASES.links, PHASES.attachments, PHASES.comments])
      expect(crashedIn, `crashed in phase ${phase}`).toContain(phase);

    const issues = await h.jiraIssues();
    const labels = issues.flatMap((i) => (i.fields.labels ?? []).filter((l) => l.startsWith('src-id-')));
    expect(issues).toHaveLength(labels.length);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels.length).toBe(ended.totalItems);
    const target = h.deps().target;
    let comments = 0;
    let links = 0;
    let remote = 0;
    for (const issue of issues) {
      // Our comments carry their ADO comment's id; the others are the notes of links (one per link).
      const texts = commentsOf(issue).map((c) => textOf(c.body));
      expect(new Set(texts).size, `comments of ${issue.key}`).toBe(texts.length);
      const markers = texts.flatMap((t) => /\(Azure DevOps comment (\d+)\)/.exec(t)?.[1] ?? []);
      expect(new Set(markers).size, `comments of ${issue.key}`).toBe(markers.length);
      comments += markers.length;
      const linked = linksOf(issue);
      expect(new Set(linked).size, `issue links of ${issue.key}`).toBe(linked.length);
      links += linked.length;
      const globalIds = (await target.remoteLinks(issue.key)).map((l) => l.globalId);
      expect(new Set(globalIds).size, `remote links of ${issue.key}`).toBe(globalIds.length);
      remote += globalIds.length;
    }
    // The project has all three (else the check above proves nothing).
    expect(comments).toBeGreaterThan(50);
    expect(links).toBeGreaterThan(10);
    expect(remote).toBeGreaterThanOrEqual(issues.length);
  }, 300_000);
});

interface AdfText {
  text?: string;
  content?: AdfText[];
}
const commentsOf = (issue: JiraIssueDump) =>
  (issue.fields.comment as { comments?: { body: AdfText }[] } | undefined)?.comments ?? [];
const textOf = (node: AdfText): string => (node.text ?? '') + (node.content ?? []).map(textOf).join('');

/** The issue's links, each as "type, direction, other issue". */
const linksOf = (issue: JiraIssueDump) =>
  (
    (issue.fields.issuelinks as
      | { type: { name: string }; outwardIssue?: { key: string }; inwardIssue?: { key: string } }[]
      | undefined) ?? []
  ).map((l) => `${l.type.name} ${l.outwardIssue ? `-> ${l.outwardIssue.key}` : `<- ${l.inwardIssue?.key}`}`);
