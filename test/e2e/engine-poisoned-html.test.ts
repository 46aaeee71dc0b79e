/**
 * Rich text written to stall the run, end to end over the sandboxes: unclosed `<b>` by the hundred thousand
 * (what any Azure DevOps contributor can put in a field or a comment; parsed, 1 MB of it held the event loop for
 * tens of seconds a time and failed the run). Two items carry it in their description (1 MB: over the length
 * limit; 400 kB: under it, over the depth limit), a third in a comment: the run ends COMPLETED, each poisoned
 * field a note naming the file that keeps it (description-<id>.html, comment-<id>.html, uploaded whole), with a
 * warning in the log; the thread goes on after the comment, and every other item is migrated as it always is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdfNode,
  MAX_HTML_DEPTH,
  MAX_HTML_LENGTH,
  validateAdf,
} from '../../functions/domain/adf/index.ts';
import { markerOf } from '../../functions/engine/phases/comments-format.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 12, seed: 29 });
});
afterAll(async () => h?.close());

/** Unclosed `<b>` to `size` characters. */
const poison = (size: number) => `<p>Steps to reproduce</p>${'<b>'.repeat(size / 3)}boom`;
const LONG = poison(1_050_000);
const DEEP = poison(400_000);
const count = (n: number) => n.toLocaleString('en-US');
const WHY = {
  [LONG]: `${count(LONG.length)} characters, over the limit of ${count(MAX_HTML_LENGTH)}`,
  [DEEP]: `elements nested over ${MAX_HTML_DEPTH} deep`,
};
const textOf = (n: AdfNode): string => n.text ?? (n.content ?? []).map(textOf).join('');
const em = [{ type: 'em' }];
const note = (text: string): AdfNode => ({ type: 'paragraph', content: [{ type: 'text', text, marks: em }] });

async function attachment(issue: JiraIssueDump, fileName: string): Promise<string> {
  const files = (issue.fields.attachment ?? []) as { id: string; filename: string }[];
  const file = files.filter((f) => f.filename === fileName);
  expect(file, `${issue.key} has ${fileName} once`).toHaveLength(1);
  const auth = Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64');
  const res = await fetch(
    `${h.sandboxes.jira.url}/rest/api/3/attachment/content/${file[0]!.id}?redirect=false`,
    { headers: { Authorization: `Basic ${auth}` } },
  );
  expect(res.status).toBe(200);
  return res.text();
}

describe('poisoned rich text', () => {
  it('fails no run: the fields are a note and a file each, everything else as always', async () => {
    expect(DEEP.length).toBeLessThan(MAX_HTML_LENGTH);
    const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const poisoned = [
      {
        html: LONG,
        ...(await src.createWorkItem('Bug', { 'System.Title': 'Crash', 'System.Description': LONG })),
      },
      {
        html: DEEP,
        ...(await src.createWorkItem('Task', {
          'System.Title': 'Retry the upload',
          'System.Description': DEEP,
          'Microsoft.VSTS.Common.AcceptanceCriteria': '<p>The file is there</p>',
        })),
      },
    ];
    const talked = await src.createWorkItem('Bug', {
      'System.Title': 'Voucher refused',
      'System.Description': '<p>The voucher <b>V-12</b> is refused.</p>',
    });
    const before = await src.addComment(talked.id, '<p>Seen on Monday.</p>');
    const bad = await src.addComment(talked.id, DEEP);
    const after = await src.addComment(talked.id, '<p>Fixed by the retry.</p>');

    const project = await h.newProject('Poisoned rich text');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const ended = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(ended).toMatchObject({ status: 'COMPLETED', failureCount: 0 });

    const issues = await h.jiraIssues();
    const issueOf = (id: number) => issues.find((i) => i.fields.labels?.includes(`src-id-${id}`))!;
    const descriptionOf = (id: number) =>
      issueOf(id).fields.description as { type: 'doc'; content: AdfNode[] };
    const lines = (
      await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000)
    ).flatMap((e) => (e.event.type === 'log' ? e.event.message.split('\n') : []));

    // Each poisoned description: the note for its HTML, its other sections, the footer; the file keeps it whole.
    for (const item of poisoned) {
      const description = descriptionOf(item.id);
      expect(validateAdf(description)).toEqual([]);
      const original = `description-${item.id}.html`;
      const why = WHY[item.html];
      expect(description.content[0]).toEqual(
        note(`The original HTML was not converted (${why}): it is attached as ${original}.`),
      );
      expect(textOf(description.content.at(-1)!)).toMatch(
        new RegExp(`^Migrated from Azure DevOps #${item.id} `),
      );
      expect(await attachment(issueOf(item.id), original)).toContain(item.html);
      expect(lines).toContainEqual(
        `#${item.id}: warning: description: HTML not converted (${why}): the original is attached as ${original}`,
      );
    }
    expect(descriptionOf(poisoned[1]!.id).content.slice(1, 3).map(textOf)).toEqual([
      'Acceptance criteria',
      'The file is there',
    ]);

    // The thread: the poisoned comment is its header and the note, the file attached; the next one follows.
    const comments = (issueOf(talked.id).fields.comment as { comments: { body: { content: AdfNode[] } }[] })
      .comments;
    expect(comments.map((c) => markerOf(c.body))).toEqual([before.id, bad.id, after.id]);
    expect(comments[1]!.body.content[1]).toEqual(
      note(`The original HTML was not converted (${WHY[DEEP]}): it is attached as comment-${bad.id}.html.`),
    );
    expect(textOf(comments[2]!.body.content[1]!)).toBe('Fixed by the retry.');
    expect(await attachment(issueOf(talked.id), `comment-${bad.id}.html`)).toContain(DEEP);

    // Every other item: its description converted (no note), ending with its footer.
    const others = issues.filter((i) => !poisoned.some((p) => i.fields.labels?.includes(`src-id-${p.id}`)));
    expect(issues).toHaveLength(ended!.totalItems);
    expect(others).toHaveLength(ended!.totalItems - 2);
    for (const issue of others) {
      const description = issue.fields.description as { content: AdfNode[] } | undefined;
      const text = (description?.content ?? []).map(textOf).join('\n');
      expect(text, issue.key).not.toContain('was not converted');
      expect(text, issue.key).toMatch(/Migrated from Azure DevOps #\d+/);
    }
    expect(textOf(descriptionOf(talked.id).content[0]!)).toBe('The voucher V-12 is refused.');
  });
});
