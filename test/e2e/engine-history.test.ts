/**
 * The revision history file over the sandboxes (phase 5, functions/engine/phases/history.ts): each item with
 * more than one revision gets exactly one `ado-history-<id>-r<rev>.html` listing every revision Azure DevOps
 * answers for it, with attachments on or off; a crash before the phase's checkpoint leaves still one; an
 * incremental run after an edit in Azure DevOps replaces it with one that has the new revision.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHistoryFileOf } from '../../functions/engine/phases/history.ts';
import { REVISION_SLICES } from '../../functions/engine/phases/history-reads.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 24, seed: 33 });
});
afterAll(async () => h?.close());

interface Dumped {
  key: string;
  fields: { labels?: string[]; attachment?: { id: string; filename: string; size: number }[] };
}

const srcOf = (i: Dumped) => Number((i.fields.labels ?? []).find((l) => l.startsWith('src-id-'))?.slice(7));
const historiesOf = (i: Dumped) =>
  (i.fields.attachment ?? []).filter((a) => isHistoryFileOf(srcOf(i), a.filename));

async function content(attachmentId: string): Promise<string> {
  const auth = Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64');
  const res = await fetch(
    `${h.sandboxes.jira.url}/rest/api/3/attachment/content/${attachmentId}?redirect=false`,
    {
      headers: { Authorization: `Basic ${auth}` },
    },
  );
  expect(res.status).toBe(200);
  return res.text();
}

/** Every issue: one history file with every revision ADO answers when it has more than one, else none. */
async function expectOneHistoryPerItem(): Promise<{ withHistory: number; revisions: number }> {
  const issues = (await h.jiraIssues()) as unknown as Dumped[];
  const ado = h.deps().source;
  let withHistory = 0;
  let total = 0;
  for (const issue of issues) {
    const id = srcOf(issue);
    const revisions = await ado.revisions(id);
    const files = historiesOf(issue);
    if (revisions.length <= 1) {
      expect(files, `#${id}`).toEqual([]);
      continue;
    }
    expect(
      files.map((f) => f.filename),
      `#${id}`,
    ).toEqual([`ado-history-${id}-r${revisions.at(-1)?.rev}.html`]);
    const html = await content(files[0]!.id);
    const listed = [...html.matchAll(/<section id="rev-(\d+)">/g)].map((m) => Number(m[1]));
    expect(listed, `#${id}`).toEqual(revisions.map((r) => r.rev));
    withHistory++;
    total += revisions.length;
  }
  return { withHistory, revisions: total };
}

describe('the revision history file', () => {
  it('attaches one per item with several revisions, listing every revision', async () => {
    const project = await h.newProject('History');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    const { withHistory, revisions } = await expectOneHistoryPerItem();
    expect(withHistory).toBeGreaterThan(5);
    expect(revisions).toBeGreaterThan(withHistory * 2);
  });

  it("reads a FULL run's revisions in batches of the whole project, not one call per item", async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('ado', 'DELETE', '/_sandbox/requests');
    const project = await h.newProject('History batched');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const log = (await h.control('ado', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    const perItem = log.filter((r) => /\/workitems\/\d+\/revisions/i.test(r.path));
    const batched = log.filter((r) => /\/reporting\/workitemrevisions/i.test(r.path));
    // The project's revisions, as many batches of 200 as the stream needs (read in spans of time side by side: at
    // most one more a span), read once for the run's items.
    let revisions = 0;
    for await (const batch of h.deps().source.reportingRevisions()) revisions += batch.length;
    expect(perItem).toEqual([]);
    expect(batched.length).toBeGreaterThanOrEqual(Math.ceil(revisions / 200));
    expect(batched.length).toBeLessThanOrEqual(Math.ceil(revisions / 200) + REVISION_SLICES - 1);
    const { withHistory } = await expectOneHistoryPerItem();
    expect(withHistory).toBeGreaterThan(batched.length * 5);
  });

  it('with attachments off and crashes before the checkpoint, still exactly one', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('History crash');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    await h.driveThrough(run.id, 4);
    // The next checkpoints are phase 5's: killed twice after its uploads, before the cursor moves.
    let kills = 0;
    const deps = h.deps({
      crash: (point) => {
        if (point !== 'before-checkpoint' || kills >= 2) return;
        kills++;
        throw new SimulatedCrash('killed before the checkpoint');
      },
    });
    const issuesBefore = (await h.jiraIssues()) as unknown as Dumped[];
    expect(issuesBefore.flatMap(historiesOf)).toEqual([]);
    await h.drive(run.id, deps, (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
    });
    expect(kills).toBe(2);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    const { withHistory } = await expectOneHistoryPerItem();
    expect(withHistory).toBeGreaterThan(5);
    // Only history files: attachments are off (a cut description's full text aside).
    const issues = (await h.jiraIssues()) as unknown as Dumped[];
    for (const i of issues)
      for (const a of i.fields.attachment ?? [])
        expect(a.filename).toMatch(/^(ado-history-\d+-r\d+|description-\d+)\.html$/);

    // A re-run finds every file in place: nothing uploaded.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    await h.drive(again.id);
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    expect(log.filter((r) => r.method !== 'GET' && r.path.includes('/attachment'))).toEqual([]);
  });

  it('an incremental run after an edit in Azure DevOps leaves one file, with the new revision', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('History incremental');
    const full = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    expect((await h.drive(full.id)).at(-1)).toBe('done');

    const deps = h.deps();
    const ids = await deps.source.idsInScope();
    const [edited, single] = await Promise.all([
      deps.source.workItem(ids[3]!),
      deps.source.workItems(ids).then((all) => all.find((i) => i.rev === 1)),
    ]);
    const ado = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    await ado.patchFields(edited.id, {
      'System.Title': 'Renamed after the first run',
      'System.History': '<p>Renamed <b>on purpose</b></p>',
    });
    // As a crash between the new file's upload and the older one's delete would leave it: deleted too.
    const entry = (await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, [edited.id])).get(
      edited.id,
    );
    await deps.target.attach(entry!.targetKey, `ado-history-${edited.id}.html`, async () => ({
      stream: new Blob(['<p>an older history</p>']).stream(),
      contentType: 'text/html',
    }));
    // An item that had one revision gets its first history file with its second.
    if (single) await ado.addComment(single.id, 'A second revision');

    const incremental = await createRun(h.app.store, h.tenant.tenantId, project.id, 'INCREMENTAL', {
      migrateComments: false,
    });
    expect((await h.drive(incremental.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, incremental.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    await expectOneHistoryPerItem();

    const issues = (await h.jiraIssues()) as unknown as Dumped[];
    const issue = issues.find((i) => srcOf(i) === edited.id)!;
    const [file] = historiesOf(issue);
    expect(file?.filename).toBe(`ado-history-${edited.id}-r${edited.rev + 1}.html`);
    const html = await content(file!.id);
    expect(html).toContain(`<section id="rev-${edited.rev + 1}">`);
    expect(html).toContain('Renamed after the first run');
    expect(html).toContain('<div class="comment">Renamed on purpose</div>');
    if (single) {
      const files = historiesOf(issues.find((i) => srcOf(i) === single.id)!);
      expect(files.map((f) => f.filename)).toEqual([`ado-history-${single.id}-r2.html`]);
    }
  });
});
