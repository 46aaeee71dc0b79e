/**
 * The final description over the sandboxes: phase 5 writes each description again once every item exists, so
 * mentions are Jira mentions (a person without a Jira account stays text, with a warning), `#123` references
 * are the migrated issues (items created later in the run included), every inline image is its OWN file even
 * when two pasted images share a name (bytes compared), and every description ends with a footer naming its
 * Azure DevOps item; it is written beside the upload unless it shows an image the upload brings. Also with
 * attachments off, and the same document again after an incremental update.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdfNode, validateAdf } from '../../functions/domain/adf/index.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

const SEED = 23;
let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 40, seed: SEED });
});
afterAll(async () => h?.close());

type Doc = { type: 'doc'; content: AdfNode[] };
const textOf = (n: AdfNode): string => n.text ?? (n.content ?? []).map(textOf).join('');
const nodesOf = (n: AdfNode, type: string): AdfNode[] => [
  ...(n.type === type ? [n] : []),
  ...(n.content ?? []).flatMap((c) => nodesOf(c, type)),
];
const srcOf = (i: JiraIssueDump) =>
  Number((i.fields.labels ?? []).find((l) => l.startsWith('src-id-'))?.slice(7));
const descriptionOf = (i: JiraIssueDump) => i.fields.description as Doc;
type Attachment = { id: string; filename: string; size: number };
type LogEntry = { method: string; path: string; at: string; receivedAt: string };

async function jiraBytes(attachmentId: string): Promise<Buffer> {
  const auth = Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64');
  const res = await fetch(
    `${h.sandboxes.jira.url}/rest/api/3/attachment/content/${attachmentId}?redirect=false`,
    { headers: { Authorization: `Basic ${auth}` } },
  );
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function logLines(projectId: string, runId: string): Promise<string[]> {
  return (await h.app.store.runs.events(h.tenant.tenantId, projectId, runId, undefined, 5000)).flatMap((e) =>
    e.event.type === 'log' ? e.event.message.split('\n') : [],
  );
}

const PICTURE_A = Buffer.from('first pasted picture '.repeat(300));
const PICTURE_B = Buffer.from('the second one, another picture altogether '.repeat(150));

/**
 * Crafted through ADO's API: an item whose description holds two pasted `image.png` (different files), a
 * mention of a person with a Jira account and one of a person without, and a reference to an item created
 * after it. Once per harness.
 */
let crafted:
  | Promise<{
      id: number;
      laterId: number;
      mapped: { displayName: string; jiraAccountId: string };
      unmapped: { displayName: string; adoId: string };
    }>
  | undefined;
function craft() {
  crafted ??= (async () => {
    const deps = h.deps();
    const scope = await deps.source.workItems(await deps.source.idsInScope(), { expand: 'none' });
    // A mention resolves through an identity some item names (a mention carries only a GUID and a name).
    const named = new Set(
      scope.flatMap((i) =>
        Object.values(i.fields).flatMap((v) =>
          v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string'
            ? [(v as { id: string }).id.toLowerCase()]
            : [],
        ),
      ),
    );
    const people = sandboxPeople(SEED);
    const mapped = people.find((p) => p.on === 'both' && named.has(p.adoId.toLowerCase()));
    const unmapped = people.find((p) => p.on === 'ado');
    if (!mapped || !unmapped) throw new Error('the sandbox people lack a mapped or an unmapped person');
    const ado = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const a = await ado.uploadAttachment('image.png', PICTURE_A);
    const b = await ado.uploadAttachment('image.png', PICTURE_B);
    const item = await ado.createWorkItem('Task', { 'System.Title': 'Two pasted screenshots' });
    const later = await ado.createWorkItem('Task', { 'System.Title': 'Created after it' });
    expect(later.id).toBeGreaterThan(item.id);
    const src = (url: string) => (url.includes('fileName=') ? url : `${url}?fileName=image.png`);
    const mention = (p: { adoId: string; displayName: string }) =>
      `<a href="#" data-vss-mention="version:2.0,${p.adoId}">@${p.displayName}</a>`;
    await ado.patchFields(item.id, {
      'System.Description':
        `<p>Before the fix: <img src="${src(a.url)}"></p>` +
        `<p>After the fix: <img src="${src(b.url)}"></p>` +
        `<p>Ask ${mention(mapped)} and ${mention(unmapped)} about #${later.id}.</p>`,
    });
    return { id: item.id, laterId: later.id, mapped, unmapped };
  })();
  return crafted;
}

/** Every description: valid, ending with the footer that names its own ADO item and links to it. */
function expectFooters(issues: JiraIssueDump[]) {
  expect(issues.length).toBeGreaterThan(30);
  for (const issue of issues) {
    const doc = descriptionOf(issue);
    const id = srcOf(issue);
    expect(validateAdf(doc), issue.key).toEqual([]);
    expect(doc.content.at(-2), issue.key).toEqual({ type: 'rule' });
    const footer = doc.content.at(-1)!;
    expect(textOf(footer), issue.key).toMatch(
      new RegExp(`^Migrated from Azure DevOps #${id} \\(http[^)]*/_workitems/edit/${id}\\) · created by \\S`),
    );
    const hrefs = (footer.content ?? []).flatMap((n) => (n.marks ?? []).map((m) => m.attrs?.href));
    expect(hrefs, issue.key).toContainEqual(expect.stringMatching(new RegExp(`/_workitems/edit/${id}$`)));
  }
}

describe('the final description', () => {
  it('shows each pasted image from its own file, resolves mentions and later items, and ends with the footer', async () => {
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    const c = await craft();
    const project = await h.newProject('Final descriptions');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    const issues = await h.jiraIssues();
    expectFooters(issues);
    const issue = issues.find((i) => srcOf(i) === c.id)!;
    const later = issues.find((i) => srcOf(i) === c.laterId)!;

    // A description that shows no image of its unit's upload is written beside the upload: its PUT arrived before
    // the upload was answered. One that shows them waits for their media ids: after.
    const sent = (await h.control('jira', 'GET', '/_sandbox/requests')) as LogEntry[];
    const writesTo = (key: string) => ({
      put: sent.find((r) => r.method === 'PUT' && r.path === `/rest/api/3/issue/${key}`),
      upload: sent.find((r) => r.method === 'POST' && r.path === `/rest/api/3/issue/${key}/attachments`),
    });
    const beside = issues.filter((i) => {
      const { put, upload } = writesTo(i.key);
      return put && upload && Date.parse(put.receivedAt) < Date.parse(upload.at);
    });
    expect(beside.length).toBeGreaterThan(5);
    const pictured = writesTo(issue.key);
    expect(Date.parse(pictured.put!.receivedAt)).toBeGreaterThanOrEqual(Date.parse(pictured.upload!.at));
    const doc = descriptionOf(issue);

    // Two media nodes, two files: the first image's bytes under the first, the second's under the second.
    const media = nodesOf({ type: 'doc', content: doc.content }, 'media').map((m) => String(m.attrs?.id));
    expect(media).toHaveLength(2);
    expect(new Set(media).size).toBe(2);
    const jira = h.deps().target;
    const files = (issue.fields.attachment ?? []) as Attachment[];
    const byMedia = new Map(
      await Promise.all(files.map(async (f) => [await jira.attachmentMediaId(f.id), f] as const)),
    );
    const shown = media.map((m) => byMedia.get(m)!);
    expect(shown.every(Boolean)).toBe(true);
    expect(shown[0]!.filename).not.toBe(shown[1]!.filename);
    expect(shown.map((f) => f.filename)).toEqual([
      expect.stringMatching(/^[0-9a-f]{8}-image\.png$/),
      expect.stringMatching(/^[0-9a-f]{8}-image\.png$/),
    ]);
    expect((await jiraBytes(shown[0]!.id)).equals(PICTURE_A)).toBe(true);
    expect((await jiraBytes(shown[1]!.id)).equals(PICTURE_B)).toBe(true);

    // The mapped person is a mention of their account; the other stays text, and the run says so.
    const body = { type: 'doc', content: doc.content } as AdfNode;
    expect(nodesOf(body, 'mention').map((m) => m.attrs?.id)).toEqual([c.mapped.jiraAccountId]);
    expect(textOf(body)).toContain(`@${c.unmapped.displayName}`);
    expect(await logLines(project.id, run.id)).toContainEqual(
      `#${c.id}: warning: description: @${c.unmapped.displayName} (${c.unmapped.adoId}) has no Jira account; kept as text`,
    );
    // The item created after it: its key, as comments show it.
    expect(nodesOf(body, 'inlineCard').map((n) => n.attrs?.url)).toEqual([
      `${h.sandboxes.jira.url}/browse/${later.key}`,
    ]);
    expect(textOf(body)).not.toContain(`#${c.laterId}`);

    // The generated items' mentions and references came across too.
    const all = issues.map((i) => descriptionOf(i) as unknown as AdfNode);
    expect(all.flatMap((d) => nodesOf(d, 'mention')).length).toBeGreaterThan(1);
    expect(all.flatMap((d) => nodesOf(d, 'inlineCard')).length).toBeGreaterThan(1);

    // An incremental update writes the description again (images unresolved), phase 5 makes it final: the
    // same document as before, and no file uploaded twice.
    const ado = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    await ado.patchFields(c.id, { 'System.Title': 'Two pasted screenshots, retitled' });
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'INCREMENTAL', {
      migrateComments: false,
    });
    expect((await h.drive(again.id)).at(-1)).toBe('done');
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    expect(
      log.filter((r) => r.method === 'PUT' && r.path.endsWith(`/issue/${issue.key}`)).length,
    ).toBeGreaterThanOrEqual(2);
    const after = (await h.jiraIssues()).find((i) => srcOf(i) === c.id)!;
    expect(descriptionOf(after)).toEqual(doc);
    // (The retitled item's new revision history is a new file: engine-history.test.ts.)
    const images = ((after.fields.attachment ?? []) as Attachment[]).filter((f) =>
      f.filename.endsWith('image.png'),
    );
    expect(images.map((f) => f.id).sort()).toEqual(shown.map((f) => f.id).sort());
  }, 240_000);

  it('a worker killed in the middle of the images resumes with each image once, each in its place', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    const c = await craft();
    const project = await h.newProject('Final descriptions, killed');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    // Killed at the first piece of bytes, then every few: the crafted item's images are cut off at least once.
    let pieces = 0;
    let kills = 0;
    const deps = h.deps({
      crash: (point) => {
        if (point !== 'mid-attachment' || ++pieces % 7 !== 1 || kills >= 6) return;
        kills++;
        throw new Error('killed in the middle of a file');
      },
    });
    expect((await h.drive(run.id, deps, () => undefined)).at(-1)).toBe('done');
    expect(kills).toBeGreaterThan(1);
    const issue = (await h.jiraIssues()).find((i) => srcOf(i) === c.id)!;
    const files = (issue.fields.attachment ?? []) as Attachment[];
    const images = files.filter((f) => f.filename.endsWith('image.png'));
    expect(images).toHaveLength(2);
    expect(new Set(images.map((f) => f.filename)).size).toBe(2);
    const jira = h.deps().target;
    const byMedia = new Map(
      await Promise.all(images.map(async (f) => [await jira.attachmentMediaId(f.id), f] as const)),
    );
    const media = nodesOf(issue.fields.description as AdfNode, 'media').map((m) => String(m.attrs?.id));
    expect(media).toHaveLength(2);
    expect((await jiraBytes(byMedia.get(media[0]!)!.id)).equals(PICTURE_A)).toBe(true);
    expect((await jiraBytes(byMedia.get(media[1]!)!.id)).equals(PICTURE_B)).toBe(true);
  }, 240_000);

  it('with attachments off, still resolves mentions and references and ends with the footer', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    const c = await craft();
    const project = await h.newProject('Final descriptions, no attachments');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const issues = await h.jiraIssues();
    expectFooters(issues);
    const issue = issues.find((i) => srcOf(i) === c.id)!;
    const later = issues.find((i) => srcOf(i) === c.laterId)!;

    const body = issue.fields.description as AdfNode;
    expect(nodesOf(body, 'mention').map((m) => m.attrs?.id)).toEqual([c.mapped.jiraAccountId]);
    expect(nodesOf(body, 'inlineCard').map((n) => n.attrs?.url)).toEqual([
      `${h.sandboxes.jira.url}/browse/${later.key}`,
    ]);
    // No image uploaded: each stays its name, linked to its source.
    expect(nodesOf(body, 'media')).toEqual([]);
    expect(
      issues
        .flatMap((i) => (i.fields.attachment ?? []) as Attachment[])
        .filter((f) => /image/.test(f.filename)),
    ).toEqual([]);
  }, 240_000);
});
