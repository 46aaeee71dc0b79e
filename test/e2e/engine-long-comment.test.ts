/**
 * Jira's 32,767-character limit on a comment, end to end over the sandboxes: Jira refuses a longer comment body
 * (POST, PUT, and an edit's `update.comment`) with the description's message, under `errors.comment`; and an
 * ADO comment of 40,000 characters still lands, through crashes: cut at a block boundary under the limit, its
 * header and marker kept, ending with a note, the whole comment attached once as comment-<id>.html, and the
 * thread going on after it, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdfNode, adfLength, JIRA_TEXT_LIMIT, validateAdf } from '../../functions/domain/adf/index.ts';
import { markerOf } from '../../functions/engine/phases/comments-format.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 10, seed: 4 });
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

const docOf = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

/** 40,000 characters of HTML: numbered paragraphs, a list and a code block, then a last line. */
function fortyThousand(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < 40_000; i++)
    parts.push(
      i % 10 === 9
        ? `<ul><li>step ${i}: retry</li><li>step ${i}: give up</li></ul><pre>trace ${i}\nat checkout()</pre>`
        : `<p>Paragraph ${i} of the pasted log: the voucher service answered <b>HTTP 500</b> after ${i} ms.</p>`,
    );
  return `${parts.join('')}<p>THE LAST LINE</p>`;
}

describe('a comment over Jira’s limit', () => {
  it('is refused by Jira on POST, PUT and an edit, with the description’s message under `comment`', async () => {
    const created = await jira('POST', '/rest/api/3/issue', {
      fields: { project: { key: h.config.jira.projectKey }, issuetype: { name: 'Task' }, summary: 'c' },
    });
    const { key } = (await created.json()) as { key: string };
    // The JSON of this document measures exactly the limit: taken.
    const shell = JSON.stringify(docOf('')).length;
    const fits = await jira('POST', `/rest/api/3/issue/${key}/comment`, {
      body: docOf('x'.repeat(JIRA_TEXT_LIMIT - shell)),
    });
    expect(fits.status).toBe(201);
    const { id } = (await fits.json()) as { id: string };
    const over = docOf('x'.repeat(JIRA_TEXT_LIMIT - shell + 1));
    const posted = await jira('POST', `/rest/api/3/issue/${key}/comment`, { body: over });
    expect(posted.status).toBe(400);
    expect(await posted.json()).toEqual({ errorMessages: [], errors: { comment: TOO_LONG } });
    const put = await jira('PUT', `/rest/api/3/issue/${key}/comment/${id}`, { body: over });
    expect(put.status).toBe(400);
    expect(await put.json()).toEqual({ errorMessages: [], errors: { comment: TOO_LONG } });
    const edit = await jira('PUT', `/rest/api/3/issue/${key}`, {
      update: { comment: [{ add: { body: over } }] },
    });
    expect(edit.status).toBe(400);
    expect(((await edit.json()) as { errors: unknown }).errors).toEqual({ comment: TOO_LONG });
    // A PUT within the limit edits the comment.
    const ok = await jira('PUT', `/rest/api/3/issue/${key}/comment/${id}`, { body: docOf('edited') });
    expect(ok.status).toBe(200);
    expect(textOf(((await ok.json()) as { body: AdfNode }).body)).toBe('edited');
    await h.control('jira', 'POST', '/_sandbox/reset');
  });

  it('lands cut with the whole comment attached, and the thread goes on after it, through crashes', async () => {
    const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const item = await src.createWorkItem('Bug', { 'System.Title': 'Checkout fails with a voucher' });
    const html = fortyThousand();
    expect(html.length).toBeGreaterThanOrEqual(40_000);
    const before = await src.addComment(item.id, '<p>Seen on Monday.</p>');
    const long = await src.addComment(item.id, html);
    const after = await src.addComment(item.id, '<p>Fixed by the retry.</p>');

    // A Jira client that dies right after the comment before the long one is posted, and right after the
    // first upload of the full comment: the write done, nothing recorded.
    class Crashing extends JiraClient {
      uploads = 0;
      beforePosts = 0;
      longPosts = 0;
      override async attach(...args: Parameters<JiraClient['attach']>) {
        const out = await super.attach(...args);
        if (args[1] === `comment-${long.id}.html` && ++this.uploads === 1)
          throw new SimulatedCrash('after upload');
        return out;
      }
      override async addComment(key: string, body: unknown, opts: { urgent?: boolean } = {}) {
        const out = await super.addComment(key, body, opts);
        if (markerOf(body) === long.id) this.longPosts++;
        if (markerOf(body) === before.id && ++this.beforePosts === 1)
          throw new SimulatedCrash('after a post');
        return out;
      }
    }
    const target = new Crashing(
      { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
      { initialDelayMs: 20 },
    );
    const project = await h.newProject('Long comments');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    const crashes: unknown[] = [];
    const answers = await h.drive(run.id, h.deps({ target }), (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
      crashes.push(err);
    });
    expect(answers.at(-1)).toBe('done');
    expect(crashes).toHaveLength(2);
    expect(target.uploads).toBe(1);
    expect(target.beforePosts).toBe(1);
    expect(target.longPosts).toBe(1);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });

    const issue = (await h.jiraIssues()).find((i) => i.fields.labels?.includes(`src-id-${item.id}`))!;
    const comments = (issue.fields.comment as { comments: { body: { type: 'doc'; content: AdfNode[] } }[] })
      .comments;
    // Each comment once, in ADO's order: the thread went on after the long one.
    expect(comments.map((c) => markerOf(c.body))).toEqual([before.id, long.id, after.id]);
    const cut = comments[1]!.body;
    expect(validateAdf(cut)).toEqual([]);
    expect(adfLength(cut)).toBeLessThanOrEqual(JIRA_TEXT_LIMIT);
    expect(textOf(cut.content[0]!)).toMatch(
      new RegExp(`^Originally posted by .+ on .+ UTC \\(Azure DevOps comment ${long.id}\\)$`),
    );
    const text = cut.content.map(textOf).join('\n');
    expect(text).toContain('Paragraph 0 of the pasted log');
    expect(text).not.toContain('THE LAST LINE');
    expect(textOf(cut.content.at(-1)!)).toContain(`attached as comment-${long.id}.html`);
    expect(textOf(comments[2]!.body.content[1]!)).toBe('Fixed by the retry.');

    // The whole comment attached once (the resume found the file and did not upload it again).
    const files = issue.fields.attachment as { id: string; filename: string; size: number }[];
    const full = files.filter((f) => f.filename === `comment-${long.id}.html`);
    expect(full).toHaveLength(1);
    const body = await (
      await jira('GET', `/rest/api/3/attachment/content/${full[0]!.id}?redirect=false`)
    ).text();
    expect(body).toContain(html);
    expect(body).toContain(`(Azure DevOps comment ${long.id})`);

    const lines = (await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000))
      .flatMap((e) => (e.event.type === 'log' ? e.event.message.split('\n') : []))
      .filter((l) => l.startsWith(`#${item.id} `));
    expect(lines.join('\n')).toMatch(
      new RegExp(`comment ${long.id} measures \\d+ characters as ADF, over Jira's limit: cut`),
    );

    // A second run writes nothing: no upload, no comment.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    expect((await h.drive(again.id)).at(-1)).toBe('done');
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    expect(log.filter((r) => r.method === 'POST' && /\/(attachments|comment)$/.test(r.path))).toEqual([]);
  });
});
