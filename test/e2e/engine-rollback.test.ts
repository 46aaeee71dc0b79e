/**
 * Rollback over the sandboxes: a FULL migration (its issues only: the claim is what a rollback deletes and keeps),
 * then two changes made in Jira after the run by somebody else (an issue's summary edited; a sub-task added under
 * another issue). The preview writes nothing and answers what the rollback then does; the rollback, resumed after
 * its first block in a fresh invocation as after a crash, deletes every issue the run created but the edited one,
 * forgets their id map entries, and deletes nothing twice when worked again. With edited issues included, the
 * edited one goes too, and the one with a sub-task that is not the run's stays, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RollbackDecision } from '../../functions/domain/rollback/plan.ts';
import { CHUNK_SIZE } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { type RollbackOptions, rollbackPhase } from '../../functions/engine/phases/rollback.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { workWholePhase } from '../support/phase-driver.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 60, seed: 7 });
});
afterAll(async () => h?.close());

/** The rollback worked from its first unit to its list; `resumed`: its first block, then the rest afresh. */
async function rollBack(runId: string, options: RollbackOptions, opts: { resumed?: boolean } = {}) {
  const deps = h.deps();
  const run = (await h.app.store.runs.get(h.tenant.tenantId, runId))!;
  const phase = rollbackPhase(options);
  await workWholePhase(
    phase,
    async () => ({ deps, run, preflight: await loadPreflight(deps, run), invocation: new InvocationScope() }),
    opts,
  );
  const summary = JSON.parse(
    (await deps.artifacts.get(artifactKeys.rollbackSummary(run.tenantId, run.id, options.preview)))!,
  ) as Record<string, number | boolean>;
  const csv = (await deps.artifacts.get(artifactKeys.rollbackList(run.tenantId, run.id, options.preview)))!;
  const lines = csv.trim().split('\r\n').slice(1);
  return { summary, lines };
}

const jiraFetch = (method: string, path: string, body?: unknown) =>
  fetch(`${h.sandboxes.jira.url}${path}`, {
    method,
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Basic ${Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64')}`,
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const keysNow = async () => new Set((await h.jiraIssues()).map((i) => i.key));

describe('rollback of a run', () => {
  it('deletes what the run created and nothing else, as its preview said; kept issues listed with why', {
    timeout: 300_000,
  }, async () => {
    // Prepare: the site before the run, then a FULL run of the project's issues
    const before = await keysNow();
    const project = await h.newProject('Rolled back');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
      migrateLinks: false,
    });
    await h.drive(run.id);
    const finished = (await h.app.store.runs.get(h.tenant.tenantId, run.id))!;
    expect(finished.status).toBe('COMPLETED');
    const created = (await h.app.store.idMap.all(h.tenant.tenantId, project.id)).filter(
      (e) => e.runId === run.id && e.origin === 'created',
    );
    expect(created.length).toBeGreaterThan(CHUNK_SIZE);

    // Prepare: after the run, somebody edits one issue and adds a sub-task under another
    const [edited, parent] = [created[3]!, created[5]!];
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

    // Act: the preview
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const preview = await rollBack(run.id, { preview: true });
    const previewRequests = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string }[];

    // Assess: nothing written; the kept issues listed with why, every other issue of the run for deletion
    expect(previewRequests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(preview.summary).toMatchObject({
      preview: true,
      items: created.length,
      deleted: created.length - kept.size,
      keptEdited: kept.size,
      gone: 0,
    });
    const lineOf = (lines: string[], key: string) => lines.find((l) => l.includes(`,${key},`));
    expect(lineOf(preview.lines, parent.targetKey)).toContain(`has a sub-task that stays (${subtask})`);
    expect(lineOf(preview.lines, edited.targetKey)).toContain('edited in Jira after the run');

    // Act: the rollback, resumed after its first block as after a crash
    const done = await rollBack(run.id, { preview: false }, { resumed: true });

    // Assess: it did what the preview said; the site as before the run, but for the kept issues and the sub-task
    expect(done.summary).toEqual({ ...preview.summary, preview: false });
    expect(await keysNow()).toEqual(new Set([...before, ...kept, subtask]));
    // The deleted items are forgotten, so a later run creates them again; the kept ones are still known.
    const left = await h.app.store.idMap.all(h.tenant.tenantId, project.id);
    expect(new Set(left.map((e) => e.targetKey))).toEqual(kept);

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
    expect(again.summary).toMatchObject({ deleted: 0, gone: done.summary.deleted, keptEdited: kept.size });
    expect(await keysNow()).toEqual(new Set([...before, ...kept, subtask]));

    // Act: edited issues included, previewed first (the admin saw them listed), then carried out
    const second = await rollBack(run.id, { preview: true, includeEdited: true });
    const all = await rollBack(run.id, { preview: false, includeEdited: true });

    // Assess: the edited ones go; the one with a sub-task that is not the run's stays, saying why
    expect(second.summary).toMatchObject({ items: kept.size, deleted: kept.size - 1, keptEdited: 1 });
    expect(all.summary).toEqual({ ...second.summary, preview: false });
    expect(lineOf(all.lines, parent.targetKey)).toContain(`has a sub-task that stays (${subtask})`);
    expect(await keysNow()).toEqual(new Set([...before, parent.targetKey, subtask]));
    const decisions = all.lines.map((l) => l.split(',')[2] as RollbackDecision['action']);
    expect(decisions.filter((d) => d === 'delete')).toHaveLength(kept.size - 1);
  });
});
