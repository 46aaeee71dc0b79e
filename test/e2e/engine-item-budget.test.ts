/**
 * One item's time budget (phase-kit/toolkit.ts withinItemBudget) in runs over the sandboxes. With no time at all
 * (EngineDeps.itemBudgetMs: 0), every item with files to bring (phase 5) or comments to post (phase 7) is past
 * its budget at its first check, before it writes anything: each fails with the reason, the run goes on through
 * every phase and ends PARTIAL, never FAILED. The next run, with the budget as it is, brings what they lacked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHASES } from '../../functions/domain/runs.ts';
import { markerOf } from '../../functions/engine/phases/comments-format.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 12, seed: 17 });
});
afterAll(async () => h?.close());

const REASON = 'stopped after 0 s, the most one item may take';
const srcOf = (labels: string[] | undefined) =>
  Number((labels ?? []).find((l) => l.startsWith('src-id-'))?.slice('src-id-'.length));

describe('an item past its time budget', () => {
  it('fails alone, before it writes: the run ends PARTIAL, and the next one brings what it lacked', async () => {
    const ado = h.deps().source;
    const project = await h.newProject('Item budget');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    expect((await h.drive(run.id, h.deps({ itemBudgetMs: 0 }))).at(-1)).toBe('done');
    const ended = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(ended).toMatchObject({ status: 'PARTIAL' });

    // Every issue is there; none has a file or an Azure DevOps comment: each item stopped before its first write.
    const issues = await h.jiraIssues();
    expect(issues).toHaveLength(ended!.totalItems);
    const migrated = (comments: unknown) =>
      ((comments as { comments: { body: unknown }[] } | undefined)?.comments ?? []).flatMap(
        (c) => markerOf(c.body) ?? [],
      );
    for (const issue of issues) {
      expect(issue.fields.attachment ?? [], issue.key).toEqual([]);
      expect(migrated(issue.fields.comment), issue.key).toEqual([]);
    }
    // The items that had something to bring or post failed, each with the reason; nothing else failed.
    const ids = issues.map((i) => srcOf(i.fields.labels));
    const items = await ado.workItems(ids, { expand: 'relations' });
    const withComments = items
      .filter((i) => Number(i.fields['System.CommentCount'] ?? 0) > 0)
      .map((i) => i.id);
    expect(withComments.length).toBeGreaterThan(0);
    const failures = await h.app.store.runFailures.list(h.tenant.tenantId, project.id, run.id);
    expect(failures.every((f) => f.reason === REASON)).toBe(true);
    expect(
      failures
        .filter((f) => f.phase === PHASES.comments)
        .map((f) => f.sourceId)
        .sort(),
    ).toEqual(withComments.sort());
    expect(failures.filter((f) => f.phase === PHASES.attachments).length).toBeGreaterThan(0);
    expect(failures.filter((f) => f.phase !== PHASES.comments && f.phase !== PHASES.attachments)).toEqual([]);
    expect(ended?.failureCount).toBe(new Set(failures.map((f) => f.sourceId)).size);

    // The next run, with the budget as it is, posts the comments and brings the files.
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    expect((await h.drive(again.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, again.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    const after = await h.jiraIssues();
    for (const id of withComments) {
      const issue = after.find((i) => srcOf(i.fields.labels) === id)!;
      const posted = migrated(issue.fields.comment);
      const comments: number[] = [];
      for await (const c of ado.comments(id)) comments.push(c.id);
      expect(posted, `#${id}`).toEqual(comments);
    }
    const attachmentFailures = failures.filter((f) => f.phase === PHASES.attachments).map((f) => f.sourceId);
    for (const id of attachmentFailures)
      expect(after.find((i) => srcOf(i.fields.labels) === id)?.fields.attachment, `#${id}`).not.toEqual([]);
  });
});
