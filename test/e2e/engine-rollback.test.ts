/**
 * Rollback over the sandboxes: a FULL migration (its issues only: the claim is what a rollback deletes and keeps),
 * then two changes made in Jira after the run by somebody else (an issue's summary edited; a sub-task added under
 * another issue). The preview writes nothing and answers what the rollback then does; the rollback, resumed after
 * its first block in a fresh invocation as after a crash, deletes every issue the run created but the edited one,
 * forgets their id map entries, and deletes nothing twice when worked again. The sprints and components the run
 * made go with their issues, but for those a kept issue is still in (listed, with why); worked again, it deletes
 * none of them twice. With edited issues included, the edited one goes too (and what only it was in), and the one
 * with a sub-task that is not the run's stays, with the reason. The run also finds two items in Jira (issues made by
 * hand with their src-id labels): what it added there goes, and the description it wrote again and the parent it
 * set, which somebody changed after the run (each change in the issue's changelog), stay (listed) until edited ones
 * are included, then go back to their values before the run; the link it made from the issue it created for #25 to
 * the one it found for #56 is taken off the found one, though #25's issue stays (edited after the run).
 *
 * Then the same through the run API and the state machine (local interpreter): a FULL run worked by its
 * execution, its preview (`POST /api/migrations/{runId}/rollback`) and the confirmed rollback each worked by the
 * run's next execution; the process killed after the rollback's first block of deletes, and the service's start
 * resuming it from its checkpoint: Jira holds the issues, sprints and components it held before the run, and no
 * issue is deleted twice. That run migrates links, and finds three of its items in Jira (issues made by hand before
 * it, with their src-id labels): it adds an issue link with its comment, remote links and files to them and changes
 * their fields, and the rollback takes all of it back (their links to issues it created going with those), so
 * Jira's state after the rollback is its state before the run, field by field, the found issues included; nothing
 * is deleted or restored twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RollbackDecision } from '../../functions/domain/rollback/plan.ts';
import { CHUNK_SIZE } from '../../functions/domain/runs.ts';
import { createEngineHandler } from '../../functions/engine/handler.ts';
import type { RollbackOptions } from '../../functions/engine/phases/rollback.ts';
import { MadeInJiraRecord } from '../../functions/phase-kit/made-in-jira.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import type { ArtifactStore } from '../../functions/store/artifact-store.ts';
import { artifactKeys, artifacts, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { LocalOrchestrator } from '../../local/orchestrator.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { rollBackRun } from '../support/rollback-driver.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
const dir = mkdtempSync(join(tmpdir(), 'tms-rollback-'));

beforeAll(async () => {
  h = await startEngineHarness({ items: 60, seed: 7 });
});
afterAll(async () => {
  setOrchestrator(undefined);
  artifacts.use(undefined);
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The rollback worked from its first unit to its list; `resumed`: its first block, then the rest afresh. */
const rollBack = (runId: string, options: RollbackOptions, opts: { resumed?: boolean } = {}) =>
  rollBackRun(h, h.tenant.tenantId, runId, options, opts);

const jiraFetch = (method: string, path: string, body?: unknown) =>
  fetch(`${h.sandboxes.jira.url}${path}`, {
    method,
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Basic ${Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64')}`,
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

/** An issue's Jira state, as a reader sees it: its fields (but when it last changed) and its remote links. */
interface IssueState {
  fields: Record<string, unknown>;
  remoteLinks: unknown[];
}

/** Jira's state: every issue of the site as `IssueState`, by key. */
async function jiraState(): Promise<Record<string, IssueState>> {
  const state: Record<string, IssueState> = {};
  for (const issue of await h.jiraIssues()) {
    const { updated: _updated, ...fields } = issue.fields;
    const remote = await jiraFetch('GET', `/rest/api/3/issue/${issue.key}/remotelink`);
    state[issue.key] = { fields, remoteLinks: (await remote.json()) as unknown[] };
  }
  return state;
}

/** One issue's `IssueState`. */
async function issueState(key: string): Promise<IssueState> {
  const issue = (await h.jiraIssues()).find((i) => i.key === key)!;
  const { updated: _updated, ...fields } = issue.fields;
  const remote = await jiraFetch('GET', `/rest/api/3/issue/${key}/remotelink`);
  return { fields, remoteLinks: (await remote.json()) as unknown[] };
}

/** The fields a run adds things to (comments, files, links) rather than sets. */
const ADDED_TO = ['comment', 'attachment', 'issuelinks', 'worklog'];

/**
 * What a run added to the issues `keys` (those it found), by kind, from Jira's state before and after it: comments,
 * files and remote links added; issue links between two of them (one with an issue the run created goes with that
 * issue); the fields it changed, one per issue and field.
 */
function addedTo(keys: string[], before: Record<string, IssueState>, after: Record<string, IssueState>) {
  const count = (key: string, state: Record<string, IssueState>, field: string) => {
    const value = state[key]?.fields[field] as { total?: number } | unknown[] | undefined;
    return Array.isArray(value) ? value.length : (value?.total ?? 0);
  };
  const linksBetween = (state: Record<string, IssueState>) =>
    keys.reduce((n, key) => {
      const links = (state[key]?.fields.issuelinks ?? []) as { outwardIssue?: { key: string } }[];
      return n + links.filter((l) => l.outwardIssue && keys.includes(l.outwardIssue.key)).length;
    }, 0);
  let comments = 0;
  let attachments = 0;
  let remoteLinks = 0;
  const fields: string[] = [];
  for (const key of keys) {
    comments += count(key, after, 'comment') - count(key, before, 'comment');
    attachments += count(key, after, 'attachment') - count(key, before, 'attachment');
    remoteLinks += (after[key]?.remoteLinks.length ?? 0) - (before[key]?.remoteLinks.length ?? 0);
    const [was, now] = [before[key]?.fields ?? {}, after[key]?.fields ?? {}];
    for (const field of new Set([...Object.keys(was), ...Object.keys(now)]))
      if (!ADDED_TO.includes(field) && JSON.stringify(was[field]) !== JSON.stringify(now[field]))
        fields.push(`${key} ${field}`);
  }
  return {
    comments,
    attachments,
    remoteLinks,
    issueLinks: linksBetween(after) - linksBetween(before),
    fields,
  };
}

const keysNow = async () => new Set((await h.jiraIssues()).map((i) => i.key));

/** The project's sprints and components in Jira, as `sprint 12` and `component 10001`. */
async function madeNow(): Promise<Set<string>> {
  const { target } = h.deps();
  const key = h.config.jira.projectKey;
  const boards = await target.boards(key);
  const sprints = (await Promise.all(boards.map((b) => target.sprints(b.id)))).flat();
  const components = await target.components(key);
  return new Set([...sprints.map((s) => `sprint ${s.id}`), ...components.map((c) => `component ${c.id}`)]);
}

/** What the run made in Jira, as its record holds it. */
async function madeByRun(
  tenantId: string,
  runId: string,
  store: ArtifactStore = h.deps().artifacts,
): Promise<string[]> {
  const record = await MadeInJiraRecord.open(store, { tenantId, runId });
  return record.entries.map((m) => `${m.kind} ${m.id}`);
}

/** The sprints and components an issue is in (its Sprint field and its components), as madeNow names them. */
async function holdsOf(key: string): Promise<string[]> {
  const issue = (await h.jiraIssues()).find((i) => i.key === key)!;
  // The sandbox's Sprint field, as on a Jira Cloud site (JQL's cf[10020]).
  const sprints = (issue.fields.customfield_10020 as { id: number }[] | null) ?? [];
  const components = (issue.fields.components as { id: string }[] | undefined) ?? [];
  return [...sprints.map((s) => `sprint ${s.id}`), ...components.map((c) => `component ${c.id}`)];
}

describe('rollback of a run', () => {
  it('deletes what the run created and nothing else, as its preview said; kept issues listed with why', {
    timeout: 300_000,
  }, async () => {
    // Prepare: the site before the run (with issues made by hand for item #58, a story under feature #2, and for
    // #56, a test case story #25 is tested by, which the run finds by their labels), then a FULL run of the
    // project's issues
    const foundKey = await madeByHand({ sourceId: 58, status: 'To Do' });
    const linkedKey = await madeByHand({ sourceId: 56, status: 'To Do' });
    const foundBefore = await issueState(foundKey);
    const linkedBefore = await issueState(linkedKey);
    const before = await keysNow();
    const madeBefore = await madeNow();
    const project = await h.newProject('Rolled back');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    await h.drive(run.id);
    const finished = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
    expect(finished.status).toBe('COMPLETED');
    const created = (await h.app.store.idMap.all(h.tenant.tenantId, project.id)).filter(
      (e) => e.runId === run.id && e.origin === 'created',
    );
    expect(created.length).toBeGreaterThan(CHUNK_SIZE);
    // It made sprints and components, and recorded them: those in Jira now that were not before the run
    const made = await madeByRun(h.tenant.tenantId, run.id);
    const ofKind = (things: Iterable<string>, kind: string) => [...things].filter((m) => m.startsWith(kind));
    expect(ofKind(made, 'sprint').length).toBeGreaterThan(0);
    expect(ofKind(made, 'component').length).toBeGreaterThan(0);
    expect(await madeNow()).toEqual(new Set([...madeBefore, ...made]));
    // What it wrote to the issue it found: its description again (its mention resolved), its parent (feature
    // #2's issue), a link back to Azure DevOps, its revision history as a file; perhaps a status move
    const foundRun = await issueState(foundKey);
    const linkedRun = await issueState(linkedKey);
    const added = addedTo(
      [foundKey, linkedKey],
      { [foundKey]: foundBefore, [linkedKey]: linkedBefore },
      { [foundKey]: foundRun, [linkedKey]: linkedRun },
    );
    expect(added.fields).toEqual(expect.arrayContaining([`${foundKey} description`, `${foundKey} parent`]));
    // ... and on #56's, the link from #25's issue, which it created
    const story = created.find((e) => e.sourceId === 25)!;
    const linkTo = (state: IssueState, key: string) =>
      (
        (state.fields.issuelinks ?? []) as { inwardIssue?: { key: string }; outwardIssue?: { key: string } }[]
      ).filter((l) => (l.inwardIssue ?? l.outwardIssue)?.key === key);
    expect(linkTo(linkedRun, story.targetKey)).toHaveLength(1);
    // The fields it changed there that nobody edits after it
    const untouchedFields = added.fields.length - 2;
    expect(added.remoteLinks).toBeGreaterThan(0);
    expect(added.attachments).toBeGreaterThan(0);
    const statusOf = (state: IssueState) => (state.fields.status as { name: string }).name;
    const moved =
      (statusOf(foundRun) === statusOf(foundBefore) ? 0 : 1) +
      (statusOf(linkedRun) === statusOf(linkedBefore) ? 0 : 1);

    // Prepare: after the run, somebody edits one issue (#25's, linked to #56's) and adds a sub-task under another,
    // and edits the description of the one the run found and takes it out of the feature's issue the run put it
    // under
    const editedDescription = doc('Edited in Jira after the run');
    await h.deps().target.editIssue(foundKey, { fields: { description: editedDescription } });
    await h.deps().target.editIssue(foundKey, { fields: { parent: null } });
    const [edited, parent] = [story, created[5]!];
    expect(parent.sourceId).not.toBe(25);
    await h
      .deps()
      .target.editIssue(edited.targetKey, { fields: { summary: 'Edited in Jira after the run' } });
    const projectKey = parent.targetKey.split('-')[0];
    const sub = await jiraFetch('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: projectKey },
        issuetype: { name: 'Sub-task' },
        parent: { key: parent.targetKey },
        summary: 'Added in Jira after the run',
      },
    });
    expect(sub.status).toBe(201);
    const subtask = ((await sub.json()) as { key: string }).key;
    const editedAfter = (await h.jiraIssues()).filter(
      (i) =>
        created.some((e) => e.targetKey === i.key) &&
        Date.parse(String(i.fields.updated)) > Date.parse(finished.finishedAt!),
    );

    // The issues that stay: those edited after the run, and the one with somebody's sub-task under it.
    const kept = new Set([...editedAfter.map((i) => i.key), parent.targetKey]);
    expect(kept).toContain(edited.targetKey);
    // What the run made that a kept issue (or the sub-task) is in stays; the rest goes once its issues have gone.
    const holding = async (keys: string[]) =>
      new Set((await Promise.all(keys.map(holdsOf))).flat().filter((m) => made.includes(m)));
    const keptMade = await holding([...kept, subtask]);
    expect(keptMade.size).toBeGreaterThan(0);
    expect(keptMade.size).toBeLessThan(made.length);
    const removedOf = (kind: string, keptThings: Set<string>) =>
      ofKind(made, kind).filter((m) => !keptThings.has(m)).length;

    // Act: the preview
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const preview = await rollBack(run.id, { preview: true });
    const previewRequests = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string }[];

    // Assess: nothing written; the kept issues listed with why, every other issue of the run for deletion
    expect(previewRequests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(preview.summary).toMatchObject({
      preview: true,
      items: created.length + 2,
      deleted: created.length - kept.size,
      keptEdited: kept.size,
      keptFound: 2,
      gone: 0,
      // On the issues it found: what it added goes, the description and the parent changed since stay (listed),
      // a status move is listed and not moved back; the link from #25's issue, which stays (edited), is taken
      // off #56's
      removedComments: 0,
      removedIssueLinks: 1,
      removedRemoteLinks: added.remoteLinks,
      removedAttachments: added.attachments,
      restoredFields: untouchedFields,
      keptChanges: 2,
      changesGone: 0,
      statusesNotUndone: moved,
      removedSprints: removedOf('sprint', keptMade),
      removedComponents: removedOf('component', keptMade),
      keptMade: keptMade.size,
    });
    const madeLine = (lines: string[], thing: string) => lines.find((l) => l.startsWith(`,"${thing} `));
    for (const thing of keptMade) expect(madeLine(preview.lines, thing)).toContain('keep-not-empty');
    for (const thing of made.filter((m) => !keptMade.has(m)))
      expect(madeLine(preview.lines, thing)).toMatch(/,remove,$/);
    const lineOf = (lines: string[], key: string) => lines.find((l) => l.includes(`,${key},`));
    expect(lineOf(preview.lines, parent.targetKey)).toContain(`has a sub-task that stays (${subtask})`);
    expect(lineOf(preview.lines, edited.targetKey)).toContain('edited in Jira after the run');
    const linkLines = preview.lines.filter((l) => l.includes(`,${linkedKey} link `));
    expect(linkLines).toHaveLength(1);
    expect(linkLines[0]).toContain(story.targetKey);
    expect(linkLines[0]).toMatch(/,remove,$/);
    for (const field of ['description', 'parent'])
      expect(preview.lines.find((l) => l.includes(`,${foundKey} field ${field},`))).toContain(
        'keep-edited,changed in Jira after the run',
      );

    // Act: the rollback, resumed after its first block as after a crash
    const done = await rollBack(run.id, { preview: false }, { resumed: true });

    // Assess: it did what the preview said; the site as before the run, but for the kept issues and the sub-task
    expect(done.summary).toEqual({ ...preview.summary, preview: false });
    expect(await keysNow()).toEqual(new Set([...before, ...kept, subtask]));
    // What the run made is gone from Jira, but for what a kept issue is in
    expect(await madeNow()).toEqual(new Set([...madeBefore, ...keptMade]));
    // The deleted items are forgotten, so a later run creates them again; the kept ones are still known.
    const left = await h.app.store.idMap.all(h.tenant.tenantId, project.id);
    expect(new Set(left.map((e) => e.targetKey))).toEqual(new Set([...kept, foundKey, linkedKey]));
    // The issue it found: as before the run, but for the description edited since (and a status move)
    const foundNow = await issueState(foundKey);
    expect(foundNow.remoteLinks).toEqual(foundBefore.remoteLinks);
    expect(foundNow.fields.attachment).toEqual(foundBefore.fields.attachment);
    expect(foundNow.fields.description).toEqual(editedDescription);
    expect(foundNow.fields.parent).toBeUndefined();
    // ... and #56's without the link from #25's issue, which stays
    const linkedNow = await issueState(linkedKey);
    expect(linkTo(linkedNow, story.targetKey)).toEqual([]);
    expect(linkedNow.remoteLinks).toEqual(linkedBefore.remoteLinks);
    expect((await keysNow()).has(story.targetKey)).toBe(true);

    // Act + Assess: worked again (as a block is after a crash), it deletes nothing more: each issue it asks for
    // is gone already
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await rollBack(run.id, { preview: false });
    const againRequests = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
      method: string;
      status: number;
    }[];
    const deletes = againRequests.filter((r) => r.method === 'DELETE');
    expect(deletes).toHaveLength(done.summary.deleted as number);
    expect(deletes.every((r) => r.status === 404)).toBe(true);
    // (no sprint or component deleted again either: each removed one is found gone before any delete)
    expect(again.summary).toMatchObject({
      deleted: 0,
      gone: done.summary.deleted,
      keptEdited: kept.size,
      // (nor anything taken back from the issue it found: each record is forgotten once carried out)
      removedRemoteLinks: 0,
      removedAttachments: 0,
      removedIssueLinks: 0,
      changesGone: added.remoteLinks + added.attachments + untouchedFields + 1,
      keptChanges: 2,
      removedSprints: 0,
      removedComponents: 0,
      keptMade: keptMade.size,
    });
    expect(await keysNow()).toEqual(new Set([...before, ...kept, subtask]));
    expect(await madeNow()).toEqual(new Set([...madeBefore, ...keptMade]));

    // Act: edited issues included, previewed first (the admin saw them listed), then carried out
    const second = await rollBack(run.id, { preview: true, includeEdited: true });
    const all = await rollBack(run.id, { preview: false, includeEdited: true });

    // Assess: the edited ones go; the one with a sub-task that is not the run's stays, saying why
    expect(second.summary).toMatchObject({
      items: kept.size + 2,
      deleted: kept.size - 1,
      keptEdited: 1,
      restoredFields: 2,
      keptChanges: 0,
      statusesNotUndone: moved,
    });
    expect(all.summary).toEqual({ ...second.summary, preview: false });
    // ... and the description and parent changed after the run are put back as they were before the run
    const foundAfter = await issueState(foundKey);
    expect(foundAfter.fields.description).toEqual(foundBefore.fields.description);
    expect(foundAfter.fields.parent).toEqual(foundBefore.fields.parent);
    expect(lineOf(all.lines, parent.targetKey)).toContain(`has a sub-task that stays (${subtask})`);
    expect(await keysNow()).toEqual(new Set([...before, parent.targetKey, subtask]));
    // Only what the parent and its sub-task are in stays of what the run made
    const stillKept = await holding([parent.targetKey, subtask]);
    expect(all.summary).toMatchObject({
      removedSprints: ofKind(keptMade, 'sprint').filter((m) => !stillKept.has(m)).length,
      removedComponents: ofKind(keptMade, 'component').filter((m) => !stillKept.has(m)).length,
      keptMade: stillKept.size,
    });
    expect(await madeNow()).toEqual(new Set([...madeBefore, ...stillKept]));
    const decisions = all.lines.map((l) => l.split(',')[2] as RollbackDecision['action']);
    expect(decisions.filter((d) => d === 'delete')).toHaveLength(kept.size - 1);
  });
});

/**
 * Items the second run finds in Jira: issues made by hand before it with their src-id labels, each in the status
 * the run gives it (it moves none: a status move is not undone). #25 and #34 are Related in Azure DevOps ("same
 * root cause"); #25 is under feature #2; #60 names a person in its description.
 */
const FOUND = [
  { sourceId: 25, status: 'To Do' },
  { sourceId: 34, status: 'Done' },
  { sourceId: 60, status: 'To Do' },
];

/** An issue made in Jira by hand, labelled as item `sourceId`'s, in `status`: a run finds it by its label. */
async function madeByHand({ sourceId, status }: { sourceId: number; status: string }): Promise<string> {
  const res = await jiraFetch('POST', '/rest/api/3/issue', {
    fields: {
      project: { key: h.config.jira.projectKey },
      issuetype: { name: 'Task' },
      summary: `Made by hand for #${sourceId}`,
      labels: [`src-id-${sourceId}`],
      description: doc('Written in Jira before the migration'),
    },
  });
  expect(res.status).toBe(201);
  const { key } = (await res.json()) as { key: string };
  // Along the workflow: the status itself when a transition reaches it, else one not seen yet.
  const { target } = h.deps();
  const seen = new Set(['To Do']);
  while (!seen.has(status)) {
    const moves = await target.transitions(key);
    const move = moves.find((m) => m.to.name === status) ?? moves.find((m) => !seen.has(m.to.name));
    await target.transition(key, move!.id);
    seen.add(move!.to.name);
  }
  return key;
}

/** An issue's own path (its delete), not one of its comments', links' or files'. */
const isIssuePath = (path: string) => /^\/rest\/api\/3\/issue\/[^/?]+(\?|$)/.test(path);

/**
 * The artifact store the API and the engine share, as in one deployment; `killAt` (a key) kills the process
 * there once: the executions stop with it, and the write never happens.
 */
class KillableArtifacts extends DiskArtifactStore {
  killAt: { key: string; kill: () => Promise<void> } | undefined;
  override async put(key: string, body: string): Promise<void> {
    const kill = this.killAt;
    if (kill && key === kill.key) {
      this.killAt = undefined;
      await kill.kill();
      throw new Error('the process was killed');
    }
    return super.put(key, body);
  }
}

describe('rollback of a run through the run API and its state machine', () => {
  it('a FULL run, its preview, then the confirmed rollback, killed mid-way and resumed: Jira as before the run, nothing deleted twice', {
    timeout: 300_000,
  }, async () => {
    // Prepare: a tenant with people, a connected project, the API and the engine on one artifact store
    const t = await h.app.createTenant('RolledBack');
    const store = new KillableArtifacts(dir);
    artifacts.use(store);
    const engine = createEngineHandler({ store: () => h.app.store, artifacts: () => store, indexLagMs: 0 });
    const o = new LocalOrchestrator({ handler: engine, generationBudget: 50 });
    setOrchestrator(o);
    const project = await h.connectedProject(t.tenantId, 'Rolled back by API');
    const foundByHand = await Promise.all(FOUND.map(madeByHand));
    const before = await keysNow();
    const madeBefore = await madeNow();
    const stateBefore = await jiraState();
    // Links migrated (an issue link's comment is a comment on its issue); files and comments off, as threads cost
    // the most (each item's revision history is still a file on its issue; the comments phase's journal is
    // engine-transitions-comments.test.ts's)
    const run = await createRun(h.app.store, t.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    await o.start({ tenantId: t.tenantId, runId: run.id, generation: 0 });
    await o.idle(run.id);
    const finished = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(finished.status).toBe('COMPLETED');
    const projectStatus = (await h.app.store.projects.get(t.tenantId, project.id))?.status;
    const created = new Set([...(await keysNow())].filter((k) => !before.has(k)));
    expect(created.size).toBeGreaterThan(CHUNK_SIZE);
    const made = await madeByRun(t.tenantId, run.id, store);
    expect(made.length).toBeGreaterThan(0);
    expect(await madeNow()).toEqual(new Set([...madeBefore, ...made]));
    const madeOf = (kind: string) => made.filter((m) => m.startsWith(kind)).length;
    // What the run found already in Jira (the issues made by hand, and one an earlier test left there, with their
    // src-id labels) stays; what the run added to them and the fields it changed are what a rollback takes back.
    const entries = await h.app.store.idMap.all(t.tenantId, project.id);
    const found = entries.filter((e) => e.origin === 'found');
    const foundKeys = found.map((e) => e.targetKey);
    expect(foundKeys).toEqual(expect.arrayContaining(foundByHand));
    const stateRun = await jiraState();
    const added = addedTo(foundKeys, stateBefore, stateRun);
    expect(added.comments).toBe(1); // the Related link's comment ("same root cause"), on #25
    expect(added.issueLinks).toBe(2); // #25 Related #34; #25 TestedBy #56 (the issue the first test left)
    expect(added.remoteLinks).toBeGreaterThanOrEqual(foundByHand.length); // each one's link back to Azure DevOps
    expect(added.attachments).toBeGreaterThanOrEqual(foundByHand.length); // each one's revision history
    // #25 placed under feature #2's issue; #60's description written again, its mention resolved
    expect(added.fields).toEqual(
      expect.arrayContaining([`${foundByHand[0]} parent`, `${foundByHand[2]} description`]),
    );
    const undone =
      added.comments + added.issueLinks + added.remoteLinks + added.attachments + added.fields.length;
    // The issue links between an issue it found and one it created (#25 TestedBy #56, #3 TestedBy #34, #60 under
    // #33 as a Relates link): journalled on the found one, they go with the created one when the rollback deletes it
    const withCreated = foundKeys.reduce((n, key) => {
      const links = (stateRun[key]?.fields.issuelinks ?? []) as {
        outwardIssue?: { key: string };
        inwardIssue?: { key: string };
      }[];
      return n + links.filter((l) => created.has((l.outwardIssue ?? l.inwardIssue)?.key ?? '')).length;
    }, 0);
    expect(withCreated).toBeGreaterThan(1);
    expect(
      entries
        .filter((e) => e.origin === 'created')
        .map((e) => e.targetKey)
        .sort(),
    ).toEqual([...created].sort());
    const call = (method: string, path: string, body?: unknown) =>
      h.app.call(method, `/api/migrations/${run.id}${path}`, { token: t.admin.token, body });

    // Act: the preview, worked by the run's next execution
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const started = await call('POST', '/rollback', {});
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ id: run.id, status: 'ROLLING_BACK', preview: true });
    await o.idle(run.id);

    // Assess: nothing written to Jira, the run as it ended, the counts and the list
    const written = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string }[];
    expect(written.filter((r) => r.method !== 'GET')).toEqual([]);
    const previewed = await call('GET', '/rollback');
    expect(previewed.body).toMatchObject({
      status: 'COMPLETED',
      underWay: null,
      preview: {
        includeEdited: false,
        summary: {
          items: entries.length,
          deleted: created.size,
          keptEdited: 0,
          keptFound: found.length,
          gone: 0,
          removedComments: added.comments,
          removedIssueLinks: added.issueLinks,
          removedRemoteLinks: added.remoteLinks,
          removedAttachments: added.attachments,
          removedWorklogs: 0,
          restoredFields: added.fields.length,
          keptChanges: 0,
          changesGone: withCreated,
          statusesNotUndone: 0,
        },
      },
      rollback: null,
    });
    const list = await call('GET', '/rollback/list');
    expect(list.status).toBe(200);
    expect(list.text.trim().split('\r\n')).toHaveLength(
      entries.length + undone + withCreated + made.length + 1,
    );
    expect(list.text).toContain('goes with');

    // Act: the confirmed rollback; the process killed after its first block's deletes (before their record and
    // the checkpoint), then the service started again
    store.killAt = {
      key: artifactKeys.rollbackBlock(t.tenantId, run.id, 0, false),
      kill: () => o.stop(run.id),
    };
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const confirmed = await call('POST', '/rollback', { preview: false, confirm: true });
    expect(confirmed.status).toBe(202);
    await o.idle(run.id);
    const killed = (await h.app.store.runs.get(t.tenantId, run.id))!;
    expect(killed.status).toBe('ROLLING_BACK');
    const beforeKill = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
      method: string;
      path: string;
      status: number;
    }[];
    const removedBeforeKill = beforeKill
      .filter((r) => r.method === 'DELETE' && r.status === 204)
      .map((r) => r.path);
    // A field put back on an issue the run found (issue edits are the rollback's only PUTs)
    const restoredBeforeKill = beforeKill.filter((r) => r.method === 'PUT' && isIssuePath(r.path)).length;
    const deletedBeforeKill = new Set(removedBeforeKill.filter(isIssuePath));
    // The first block's deletes (its 50 items less any the run found), not the second's.
    expect(deletedBeforeKill.size).toBeGreaterThan(CHUNK_SIZE - found.length - 1);
    expect(deletedBeforeKill.size).toBeLessThan(created.size);
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    expect(await o.resumeInterrupted(h.app.store)).toEqual([run.id]);
    await o.idle(run.id);

    // Assess: the run ROLLED_BACK, Jira as before the run, its id map forgotten but for what it found
    const done = await call('GET', '/rollback');
    expect(done.body).toMatchObject({ status: 'ROLLED_BACK', underWay: null });
    const {
      removedComments,
      removedIssueLinks,
      removedRemoteLinks,
      removedAttachments,
      restoredFields,
      changesGone,
      ...counts
    } = done.body.rollback as Record<string, number>;
    expect(counts).toEqual({
      items: entries.length,
      deleted: created.size - deletedBeforeKill.size,
      keptEdited: 0,
      keptLaterRun: 0,
      keptFound: found.length,
      keptOtherRun: 0,
      // The first block worked again: the issues it deleted before the kill answer 404.
      gone: deletedBeforeKill.size,
      removedWorklogs: 0,
      removedTestSteps: 0,
      keptChanges: 0,
      statusesNotUndone: 0,
      removedSprints: madeOf('sprint'),
      removedComponents: madeOf('component'),
      keptMade: 0,
    });
    // Each thing the run added to an issue it found is removed, each field it changed restored; in the block worked
    // again after the kill, what was taken back before it is found undone (its record forgotten): not done again.
    // (Two of the found issues are in that block, the third after it.)
    const undoneBeforeKill = removedBeforeKill.length - deletedBeforeKill.size + restoredBeforeKill;
    expect(undoneBeforeKill).toBeGreaterThan(0);
    expect(changesGone).toBe(undoneBeforeKill + withCreated);
    expect(
      removedComments! + removedIssueLinks! + removedRemoteLinks! + removedAttachments! + restoredFields!,
    ).toBe(undone - undoneBeforeKill);
    expect(undone - undoneBeforeKill).toBeGreaterThan(0);
    // Jira as before the run, field by field, the issues it found included
    expect(await jiraState()).toEqual(stateBefore);
    expect(await keysNow()).toEqual(before);
    expect(await madeNow()).toEqual(madeBefore);
    expect(await h.app.store.idMap.all(t.tenantId, project.id)).toEqual(found);
    // Nothing deleted twice: after the restart, every DELETE of an issue deleted before answered 404.
    const after = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
      method: string;
      path: string;
      status: number;
    }[];
    const removedAfter = after.filter((r) => r.method === 'DELETE' && r.status === 204).map((r) => r.path);
    expect(removedAfter.filter((path) => removedBeforeKill.includes(path))).toEqual([]);
    expect(new Set([...removedBeforeKill, ...removedAfter]).size).toBe(
      removedBeforeKill.length + removedAfter.length,
    );
    // ... nor a field put back twice: after the restart, only the fields not restored before the kill
    expect(after.filter((r) => r.method === 'PUT' && isIssuePath(r.path))).toHaveLength(restoredFields!);
    const deletes = after.filter((r) => r.method === 'DELETE' && isIssuePath(r.path));
    expect(deletes.filter((r) => deletedBeforeKill.has(r.path)).every((r) => r.status === 404)).toBe(true);
    expect(deletes.filter((r) => r.status === 204)).toHaveLength(created.size - deletedBeforeKill.size);
    // The project keeps its status; the stream told the counts and the end
    expect((await h.app.store.projects.get(t.tenantId, project.id))?.status).toBe(projectStatus);
    const events = (await h.app.store.runs.events(t.tenantId, project.id, run.id, undefined, 1000)).map(
      (e) => e.event,
    );
    expect(
      events.filter((e) => e.type === 'rollback').map((e) => e.type === 'rollback' && e.summary.preview),
    ).toEqual([true, false]);
    expect(events.slice(-2)).toEqual([
      { type: 'status', status: 'rolled_back' },
      { type: 'done', stats: { created: finished.successCount, skipped: finished.skippedCount, failed: 0 } },
    ]);
    // A run rolled back is not rolled back again
    const again = await call('POST', '/rollback', {});
    expect(again.body).toMatchObject({ statusCode: 409, code: 'NOTHING_TO_ROLL_BACK' });
  });
});
