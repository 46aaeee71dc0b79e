/**
 * Jira's 32,767-character limit on a description, end to end over the sandboxes: Jira refuses a longer one
 * (create and edit), and an item whose description is 100 kB of HTML still lands: with a valid description
 * under the limit that ends with a note, the full original HTML attached as description-<id>.html, and a
 * warning in the run's log. A second run uploads nothing again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdfNode, adfLength, JIRA_TEXT_LIMIT, validateAdf } from '../../functions/domain/adf/index.ts';
import { AdoClient } from '../../functions/trackers/ado/client.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 12, seed: 8 });
});
afterAll(async () => h.close());

const TOO_LONG = 'The entered text is too long. It exceeds the allowed limit of 32,767 characters.';
const textOf = (n: AdfNode): string => n.text ?? (n.content ?? []).map(textOf).join('');

function jira(method: string, path: string, body?: unknown) {
  const auth = Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64');
  return fetch(`${h.sandboxes.jira.url}${path}`, {
    method,
    headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** 100 kB of what a long description holds: headings, paragraphs with marks and links, lists, tables, code. */
function hundredKb(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < 100 * 1024; i++) {
    parts.push(
      `<h3>Log excerpt ${i}</h3><p>Customer report ${i}: the checkout <b>fails</b> after the voucher step, see <a href="https://support.example/t/${i}">ticket ${i}</a>.</p>`,
      `<ul><li>Browser: Edge ${100 + i}</li><li>Cart: ${i} items<ul><li>one with a voucher</li></ul></li></ul>`,
      `<table><tr><th>Step</th><th>Result</th></tr><tr><td>${i}</td><td>HTTP 500 &quot;voucher&quot;</td></tr></table>`,
      `<pre>POST /api/checkout/${i}\n{"voucher": "V-${i}"}</pre>`,
    );
  }
  return `${parts.join('')}<p>THE LAST LINE</p>`;
}

/** An item with an inline image gets a description of over 100 kB (once; the same text on later calls). */
async function lengthenADescription() {
  const ado = new AdoClient({
    organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
    project: h.config.ado.project,
    token: h.config.ado.pat,
  });
  const items = await ado.workItems(Array.from({ length: 12 }, (_, i) => i + 1));
  // An item with an inline image, so phase 5 rebuilds (and cuts) the description again with media.
  const item = items.find((i) => String(i.fields['System.Description'] ?? '').includes('<img'))!;
  expect(item).toBeDefined();
  const before = String(item.fields['System.Description'] ?? '');
  const html = before.endsWith('<p>THE LAST LINE</p>') ? before : `${before}${hundredKb()}`;
  expect(html.length).toBeGreaterThan(100 * 1024);
  const auth = Buffer.from(`:${h.config.ado.pat}`).toString('base64');
  const patched = await fetch(
    `${h.sandboxes.ado.url}/${h.config.ado.org}/${h.config.ado.project}/_apis/wit/workitems/${item.id}?api-version=7.1`,
    {
      method: 'PATCH',
      headers: { Authorization: `Basic ${auth}`, 'Content-Type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'add', path: '/fields/System.Description', value: html }]),
    },
  );
  expect(patched.status).toBe(200);
  return { item, html };
}

describe('a description over Jira’s limit', () => {
  it('is refused by Jira on create and on edit, with Jira’s message', async () => {
    const big = {
      type: 'doc',
      version: 1,
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x'.repeat(JIRA_TEXT_LIMIT) }] }],
    };
    const fields = {
      project: { key: h.config.jira.projectKey },
      issuetype: { name: 'Task' },
      summary: 'long',
    };
    const created = await jira('POST', '/rest/api/3/issue', { fields: { ...fields, description: big } });
    expect(created.status).toBe(400);
    expect(await created.json()).toEqual({ errorMessages: [], errors: { description: TOO_LONG } });
    const ok = await jira('POST', '/rest/api/3/issue', { fields });
    expect(ok.status).toBe(201);
    const { key } = (await ok.json()) as { key: string };
    const edited = await jira('PUT', `/rest/api/3/issue/${key}`, { fields: { description: big } });
    expect(edited.status).toBe(400);
    expect(((await edited.json()) as { errors: unknown }).errors).toEqual({ description: TOO_LONG });
    await h.control('jira', 'POST', '/_sandbox/reset');
  });

  it('lands cut, valid and under the limit, with the whole HTML attached and a warning logged', async () => {
    const { item, html } = await lengthenADescription();

    const project = await h.newProject('Long descriptions');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });

    const issue = (await h.jiraIssues()).find((i) => i.fields.labels?.includes(`src-id-${item.id}`))!;
    const description = issue.fields.description as { type: 'doc'; content: AdfNode[] };
    expect(validateAdf(description)).toEqual([]);
    expect(adfLength(description)).toBeLessThanOrEqual(JIRA_TEXT_LIMIT);
    const text = description.content.map(textOf).join('\n');
    expect(text).toContain('Customer report 0: the checkout fails');
    expect(text).not.toContain('THE LAST LINE');
    // The note, then the footer naming the ADO item (kept whole under the limit).
    expect(textOf(description.content.at(-3)!)).toContain(`attached as description-${item.id}.html`);
    expect(description.content.at(-2)).toEqual({ type: 'rule' });
    expect(textOf(description.content.at(-1)!)).toMatch(
      new RegExp(`^Migrated from Azure DevOps #${item.id} \\(.*/_workitems/edit/${item.id}\\)`),
    );
    // Rebuilt in phase 5 with the uploaded inline image in place, and cut again.
    expect(JSON.stringify(description)).toContain('"type":"media"');

    const files = issue.fields.attachment as { id: string; filename: string; size: number }[];
    const full = files.find((f) => f.filename === `description-${item.id}.html`)!;
    expect(full).toBeDefined();
    const content = await jira('GET', `/rest/api/3/attachment/content/${full.id}?redirect=false`);
    const body = await content.text();
    expect(body).toContain(html);
    expect(Number(full.size)).toBe(Buffer.byteLength(body));

    const lines = (await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000))
      .flatMap((e) => (e.event.type === 'log' ? e.event.message.split('\n') : []))
      .filter((l) => l.startsWith(`#${item.id}`));
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^#${item.id}: warning: description measures \\d+ characters as ADF, over Jira's limit of 32767`,
        ),
      ),
    );

    // Run again: the full text is there already.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    await h.drive(again.id);
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    expect(log.filter((r) => r.method === 'POST' && r.path.includes('/attachments'))).toEqual([]);
  });

  it('still gets its full text attached when the run migrates no attachments, and nothing else', async () => {
    const { item, html } = await lengthenADescription();
    await h.control('jira', 'POST', '/_sandbox/reset');
    const project = await h.newProject('Long descriptions, no attachments');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const issues = await h.jiraIssues();
    // Revision histories (ado-history-*.html) come with attachments off too (engine-history.test.ts).
    const files = (i: (typeof issues)[number]) =>
      ((i.fields.attachment ?? []) as { filename: string }[])
        .map((f) => f.filename)
        .filter((n) => !n.startsWith('ado-history-'));
    expect(issues.flatMap(files)).toEqual([`description-${item.id}.html`]);
    const issue = issues.find((i) => i.fields.labels?.includes(`src-id-${item.id}`))!;
    const full = (issue.fields.attachment as { id: string; filename: string }[]).find(
      (a) => a.filename === `description-${item.id}.html`,
    )!;
    expect(
      await (await jira('GET', `/rest/api/3/attachment/content/${full.id}?redirect=false`)).text(),
    ).toContain(html);
    // Attachments off marked no item done: a later run with them on brings the files.
    const entries = await h.app.store.idMap.all(h.tenant.tenantId, project.id);
    expect(entries.filter((e) => e.phasesDone.includes(5))).toEqual([]);
  });
});
