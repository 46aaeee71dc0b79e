/**
 * INCREMENTAL runs over the sandboxes: after a FULL run, the source changes through Azure DevOps' own API (a
 * title and a state, a new comment, a new attachment, a new item under an existing parent); the incremental
 * run takes exactly the changed and new items, brings each change across once, writes nothing to any other
 * issue, and a second incremental run right after duplicates nothing. Rolled back newest first, the incremental
 * runs leave the FULL run's issues they changed listed in its preview as changed while they were at work, not as
 * edited by somebody.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import type { RollbackRequest } from '../../functions/domain/rollback/request.ts';
import { PHASES } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { startRollback } from '../../functions/services/rollback.ts';
import { artifactKeys } from '../../functions/store/artifact-store.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
/** The first test's runs and the issues its incremental runs changed, for the rollbacks after it. */
let runs: { full: string; incremental: string; again: string; changed: string[] } | undefined;

/**
 * A rollback pass of the run as the run API starts it (the run ROLLING_BACK at the phase after its last) and the
 * engine works it: its next execution, played here step by step, to the pass's end.
 */
async function rollBackByEngine(runId: string, request: RollbackRequest): Promise<void> {
  const deps = h.deps();
  const ports = {
    store: h.app.store,
    journal: new StoreRunJournal(h.app.store),
    orch: new RecordingOrchestrator(),
    artifacts: deps.artifacts,
  };
  await startRollback(ports, h.tenant.tenantId, runId, request);
  await h.drive(runId, deps);
  expect((await h.app.store.runs.get(h.tenant.tenantId, runId))?.status).not.toBe('ROLLING_BACK');
}

/** The run's last preview: its counts and its list's lines (CSV, header left out). */
async function passOf(runId: string) {
  const { artifacts } = h.deps();
  const { tenantId } = h.tenant;
  const summary = JSON.parse((await artifacts.get(artifactKeys.rollbackSummary(tenantId, runId, true)))!);
  const csv = (await artifacts.get(artifactKeys.rollbackList(tenantId, runId, true)))!;
  return { summary: summary as Record<string, unknown>, lines: csv.trim().split('\r\n').slice(1) };
}
beforeAll(async () => {
  h = await startEngineHarness({ items: 90, seed: 17 });
});
afterAll(async () => h?.close());

interface LoggedRequest {
  method: string;
  path: string;
}

const READS = [/\/search\/jql/, /\/rest\/api\/3\/search/];

describe('an incremental run', () => {
  it('brings across exactly what changed since the last successful run, once', async () => {
    const { tenantId } = h.tenant;
    const project = await h.newProject('Incremental');
    const full = await createRun(h.app.store, tenantId, project.id, 'FULL');
    expect((await h.drive(full.id)).at(-1)).toBe('done');
    expect((await h.app.store.runs.get(tenantId, full.id))?.status).toBe('COMPLETED');

    const deps = h.deps();
    const ids = await deps.source.idsInScope();
    const items = await deps.source.workItems(ids);
    const typeOf = (i: AdoWorkItem) => String(i.fields['System.WorkItemType']);
    const pick = (type: string, n = 0) => {
      const found = items.filter((i) => typeOf(i) === type)[n];
      if (!found) throw new Error(`the generated world has no ${type} #${n}`);
      return found;
    };
    const retitled = pick('Task');
    const commented = pick('Task', 1);
    const attachedTo = pick('Bug');
    const feature = pick('Feature');
    const entries = await h.app.store.idMap.getMany(tenantId, project.id, [
      retitled.id,
      commented.id,
      attachedTo.id,
      feature.id,
    ]);
    const keyOf = (id: number) => entries.get(id)?.targetKey as string;

    const ado = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const newTitle = `Renamed after the first run (${retitled.id})`;
    const closed = retitled.fields['System.State'] === 'Closed' ? 'Active' : 'Closed';
    await ado.patchFields(retitled.id, { 'System.Title': newTitle, 'System.State': closed });
    await ado.addComment(commented.id, '<p>A comment written after the first run</p>');
    await ado.uploadAndAttach(attachedTo.id, 'after-first-run.txt', 'new evidence', 'added later');
    const created = await ado.createWorkItem(
      'User Story',
      { 'System.Title': 'A story written after the first run' },
      { parent: feature.id },
    );

    const issuesBefore = await h.jiraIssues();
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const incremental = await createRun(h.app.store, tenantId, project.id, 'INCREMENTAL');
    expect((await h.drive(incremental.id)).at(-1)).toBe('done');
    const done = await h.app.store.runs.get(tenantId, incremental.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, totalItems: 4, successCount: 4 });

    // Exactly the changed and new items, parents first.
    const preflight = await loadPreflight(deps, done as NonNullable<typeof done>);
    expect(preflight.manifest.map((m) => m.id).sort((a, b) => a - b)).toEqual(
      [retitled.id, commented.id, attachedTo.id, created.id].sort((a, b) => a - b),
    );
    expect(preflight.manifest.find((m) => m.id === created.id)?.parentId).toBe(feature.id);

    const issuesAfter = await h.jiraIssues();
    expect(issuesAfter).toHaveLength(issuesBefore.length + 1);
    const newIssue = issuesAfter.find((i) => i.fields.labels?.includes(`src-id-${created.id}`));
    expect(newIssue?.fields.parent?.key).toBe(keyOf(feature.id));

    const jira = deps.target;
    const renamed = await jira.getIssue(keyOf(retitled.id), ['summary', 'status']);
    expect(renamed.fields?.summary).toBe(newTitle);
    const status = renamed.fields?.status as { statusCategory?: { key?: string } } | undefined;
    const category = status?.statusCategory?.key;
    expect(category).toBe(closed === 'Closed' ? 'done' : 'indeterminate');

    const comments = async (key: string) =>
      (await jira.http.request<{ total: number }>('GET', `/rest/api/3/issue/${key}/comment`)).body.total;
    const adoComments = async (id: number) => {
      let n = 0;
      for await (const _ of deps.source.comments(id)) n++;
      return n;
    };
    expect(await comments(keyOf(commented.id))).toBe(await adoComments(commented.id));
    const files = async (key: string) =>
      (((await jira.getIssue(key, ['attachment'])).fields?.attachment ?? []) as { filename: string }[]).map(
        (a) => a.filename,
      );
    expect((await files(keyOf(attachedTo.id))).filter((f) => f === 'after-first-run.txt')).toHaveLength(1);

    // Nothing written to an issue that did not change.
    const changedKeys = new Set([
      keyOf(retitled.id),
      keyOf(commented.id),
      keyOf(attachedTo.id),
      newIssue?.key as string,
    ]);
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as LoggedRequest[];
    const writes = log.filter((r) => r.method !== 'GET' && !READS.some((p) => p.test(r.path)));
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) {
      const key = /\/issue\/([A-Z][A-Z0-9]*-\d+)/.exec(w.path)?.[1];
      if (key) expect(changedKeys, `${w.method} ${w.path}`).toContain(key);
    }

    // Right after, another incremental run: the same items are taken again (they changed within the clock
    // margin) and nothing is duplicated.
    const counts = {
      comments: await comments(keyOf(commented.id)),
      files: (await files(keyOf(attachedTo.id))).length,
    };
    const again = await createRun(h.app.store, tenantId, project.id, 'INCREMENTAL');
    expect((await h.drive(again.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(tenantId, again.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    expect(await h.jiraIssues()).toHaveLength(issuesAfter.length);
    expect(await comments(keyOf(commented.id))).toBe(counts.comments);
    expect(await files(keyOf(attachedTo.id))).toHaveLength(counts.files);
    const entry = (await h.app.store.idMap.getMany(tenantId, project.id, [retitled.id])).get(retitled.id);
    expect(entry).toMatchObject({ updatedByRun: again.id });
    expect(entry?.phasesDone).toContain(PHASES.comments);
    runs = {
      full: full.id,
      incremental: incremental.id,
      again: again.id,
      changed: [keyOf(retitled.id), keyOf(commented.id), keyOf(attachedTo.id)],
    };
  });

  it("rolled back newest first, the FULL run's preview keeps what the incremental runs changed as theirs, not as edits", async () => {
    // Prepare: the two incremental runs rolled back, newest first, then somebody edits one of the FULL run's
    // issues nobody changed
    const { tenantId } = h.tenant;
    const { full, incremental, again, changed } = runs!;
    for (const runId of [again, incremental]) {
      await rollBackByEngine(runId, { preview: true });
      await rollBackByEngine(runId, { preview: false, confirm: true });
      expect((await h.app.store.runs.get(tenantId, runId))?.status).toBe('ROLLED_BACK');
    }
    const { projectId, finishedAt: ended } = (await h.app.store.runs.get(tenantId, full))!;
    const fullsIssues = new Set(
      (await h.app.store.idMap.all(tenantId, projectId))
        .filter((e) => e.runId === full)
        .map((e) => e.targetKey),
    );
    const changedSince = new Set(
      (await h.jiraIssues())
        .filter((i) => fullsIssues.has(i.key) && Date.parse(String(i.fields.updated)) > Date.parse(ended!))
        .map((i) => i.key),
    );
    for (const key of changed) expect(changedSince).toContain(key);
    const edited = (await h.jiraIssues()).find((i) => fullsIssues.has(i.key) && !changedSince.has(i.key))!;
    await h.deps().target.editIssue(edited.key, { fields: { summary: 'Edited in Jira after the runs' } });

    // Act: the FULL run's preview
    await rollBackByEngine(full, { preview: true });
    const preview = await passOf(full);

    // Assess: each issue the incremental runs changed (and their rollbacks put back) is kept as changed while
    // one of them was at work, naming it; the one somebody edited after them is kept as edited; the rest go
    expect(preview.summary).toMatchObject({ keptLaterRun: changedSince.size });
    const lineOf = (key: string) => preview.lines.find((l) => l.split(',')[1] === key) ?? '';
    for (const key of changedSince)
      expect(lineOf(key)).toMatch(
        new RegExp(
          `,keep-later-run,"changed after the run, last while run (${incremental}|${again}) \\(a later run`,
        ),
      );
    expect(lineOf(edited.key)).toContain(',keep-edited,edited in Jira after the run');
    // (and an issue one of those is a sub-task of stays with it)
    for (const line of preview.lines.filter((l) => l.includes(',keep-edited,') && !l.includes(edited.key)))
      expect(line).toContain('has a sub-task that stays');
  });

  it('takes the whole scope when the project has no earlier successful run', async () => {
    const project = await h.newProject('Incremental first');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'INCREMENTAL', { dryRun: true });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const preflight = await loadPreflight(h.deps(), done as NonNullable<typeof done>);
    expect(preflight.warnings).toContain(
      'No earlier successful run of this project: this incremental run takes the whole scope',
    );
    expect(preflight.manifest.length).toBe(done?.totalItems);
    expect(done?.totalItems).toBeGreaterThan(80);
  });
});
