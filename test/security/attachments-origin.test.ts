/**
 * Issue 17, point 1 (and "Attachments and inline images"): an Azure DevOps user who can edit one work item
 * must not make a run send the connection's credential, or fetch anything, anywhere but the connected
 * organisation's own attachments. A loopback listener plays the attacker (or a loopback-only service) and must
 * get zero requests: an inline image naming it (the unanchored `/_apis/wit/attachments/` trick and an
 * attachment-shaped path on its origin) and an AttachedFile relation naming it. The images stay links in the
 * description and the run says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdoClient, type AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type Attacker, startAttacker } from '../support/attacker.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
let attacker: Attacker;
beforeAll(async () => {
  attacker = await startAttacker();
  h = await startEngineHarness({ items: 2, seed: 17 });
});
afterAll(async () => {
  await h.close();
  await attacker.close();
});

/** The text of every node of an ADF document, and the hrefs of its link marks. */
function linksOf(doc: unknown): string[] {
  const out: string[] = [];
  const walk = (n: unknown) => {
    if (!n || typeof n !== 'object') return;
    const node = n as { marks?: { type: string; attrs?: { href?: string } }[]; content?: unknown[] };
    for (const m of node.marks ?? []) if (m.type === 'link' && m.attrs?.href) out.push(m.attrs.href);
    for (const c of node.content ?? []) walk(c);
  };
  walk(doc);
  return out;
}

describe('attachments and inline images of a run', () => {
  it('never fetches an image or a relation off the organisation, and never sends it the credential', async () => {
    const guid = '00000000-0000-4000-8000-0000000000aa';
    const trick = `${attacker.url}/x.png?x=/_apis/wit/attachments/&fileName=x.png`;
    const lookalike = `${attacker.url}/${h.config.ado.org}/_apis/wit/attachments/${guid}?fileName=y.png`;
    const relation = `${attacker.url}/${h.config.ado.org}/_apis/wit/attachments/${guid}?fileName=z.bin`;
    const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const item = await src.createWorkItem('Task', {
      'System.Title': 'Looks harmless',
      'System.Description': `<div>See <img src="${trick}"> and <img src="${lookalike}"></div>`,
    });
    // The sandbox keeps AttachedFile relations to its own files only; a hostile or broken answer naming
    // another host is played by the source client's answer (the download itself goes the real way).
    class HostileAnswer extends AdoClient {
      override async workItems(ids: number[], opts?: Parameters<AdoClient['workItems']>[1]) {
        const items: AdoWorkItem[] = await super.workItems(ids, opts);
        return items.map((i) =>
          i.id === item.id
            ? {
                ...i,
                relations: [
                  ...(i.relations ?? []),
                  { rel: 'AttachedFile', url: relation, attributes: { name: 'z.bin', resourceSize: 10 } },
                ],
              }
            : i,
        );
      }
    }
    const source = new HostileAnswer({
      organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
      project: h.config.ado.project,
      token: h.config.ado.pat,
    });
    const project = await h.newProject('Hostile images');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    expect((await h.drive(run.id, h.deps({ source }))).at(-1)).toBe('done');

    expect(attacker.requests).toEqual([]);
    const issue = (await h.jiraIssues()).find((i) => (i.fields.labels ?? []).includes(`src-id-${item.id}`));
    expect(issue).toBeDefined();
    // Left as links to where they pointed; nothing of the attacker's was uploaded.
    expect(linksOf(issue?.fields.description)).toEqual(expect.arrayContaining([trick, lookalike]));
    const files = ((issue?.fields.attachment as { filename: string }[] | undefined) ?? []).map(
      (a) => a.filename,
    );
    expect(files).not.toContain('x.png');
    expect(files).not.toContain('y.png');
    expect(files).not.toContain('z.bin');
    // The run says so, once per URL, naming no query string.
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id);
    const warnings = events
      .map((e) => (e.event.type === 'log' ? e.event.message : ''))
      .filter((m) => m.includes('not an attachment of the connected Azure DevOps organisation'));
    expect(warnings).toHaveLength(3);
    expect(warnings.join('\n')).not.toContain('fileName=');
  });

  it('the source client itself refuses to open a URL off its organisation', async () => {
    const ado = h.deps().source;
    await expect(
      ado.openAttachment(
        `${attacker.url}/${h.config.ado.org}/_apis/wit/attachments/00000000-0000-4000-8000-000000000001`,
      ),
    ).rejects.toThrow(/not allowed/);
    await expect(
      ado.openAttachment(
        `${h.sandboxes.ado.url}/other-org/_apis/wit/attachments/00000000-0000-4000-8000-000000000001`,
      ),
    ).rejects.toThrow(/not allowed/);
    expect(attacker.requests).toEqual([]);
  });
});
