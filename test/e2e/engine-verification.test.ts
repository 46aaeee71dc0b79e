/**
 * Verification over the sandboxes ("check the check"): a FULL migration (attachments, comments, links) of a
 * generated project, then the verification phase worked as the runner works a phase. A clean run verifies every
 * item; then four issues are altered in the sandbox Jira through its REST API (a comment deleted, a label
 * changed, a table cell of a description edited, an attachment deleted), and verifying again (resumed after its
 * first block, in a fresh invocation, as after a crash) finds exactly those four differences, on those four
 * issues, and no other, with reads alone (each issue once, with its comments).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdfNode } from '../../functions/domain/adf/index.ts';
import type { ItemVerdict, VerificationSummary } from '../../functions/domain/verification/index.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { verificationPhase } from '../../functions/engine/phases/verify.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { workWholePhase } from '../support/phase-driver.ts';
import { createRun } from '../support/runs.ts';

const SEED = 7;
const ITEMS = 60;
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: SEED });
});
afterAll(async () => h?.close());

/**
 * The verification of a finished run, worked from its first unit to its audit; `resumed`: its first block in one
 * invocation, the rest in another from the checkpoint after it, as after a crash.
 */
async function verify(
  runId: string,
  opts: { resumed?: boolean } = {},
): Promise<{ summary: VerificationSummary; items: ItemVerdict[]; csv: string }> {
  const deps = h.deps();
  const run = (await h.app.store.runs.get(h.tenant.tenantId, runId))!;
  await workWholePhase(
    verificationPhase,
    async () => ({ deps, run, preflight: await loadPreflight(deps, run), invocation: new InvocationScope() }),
    opts,
  );
  const audit = JSON.parse(
    (await deps.artifacts.get(artifactKeys.verificationAudit(run.tenantId, run.id)))!,
  ) as {
    items: ItemVerdict[];
    summary: VerificationSummary;
  };
  const csv = (await deps.artifacts.get(artifactKeys.verificationAuditCsv(run.tenantId, run.id)))!;
  // The summary kept for the run says what the audit's does.
  const kept = await deps.artifacts.get(artifactKeys.verificationSummary(run.tenantId, run.id));
  expect(JSON.parse(kept!)).toEqual(audit.summary);
  return { ...audit, csv };
}

const jiraFetch = (method: string, path: string) =>
  fetch(`${h.sandboxes.jira.url}${path}`, {
    method,
    headers: {
      Authorization: `Basic ${Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64')}`,
    },
  });

const textNodes = (n: AdfNode): AdfNode[] => [
  ...(n.type === 'text' && n.text?.trim() ? [n] : []),
  ...(n.content ?? []).flatMap(textNodes),
];
const tablesOf = (n: AdfNode): AdfNode[] => [
  ...(n.type === 'table' ? [n] : []),
  ...(n.content ?? []).flatMap(tablesOf),
];

describe('verification of a run', () => {
  it('a clean run verifies every item; four changes in Jira are found, exactly', {
    timeout: 300_000,
  }, async () => {
    // Prepare: a FULL run through the sandboxes
    const project = await h.newProject('Verified');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: true,
      migrateComments: true,
      migrateLinks: true,
    });
    await h.drive(run.id);
    const finished = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(finished?.status).toBe('COMPLETED');

    // Act + Assess: every item faithful
    const clean = await verify(run.id);
    const unfaithful = clean.items.filter((v) => v.result !== 'pass');
    expect(unfaithful).toEqual([]);
    expect(clean.summary.itemsChecked).toBe(finished?.successCount);
    expect(clean.summary).toMatchObject({
      fullyFaithful: clean.summary.itemsChecked,
      differencesByField: {},
    });

    // Prepare: four issues altered in Jira, each a different way
    const target = h.deps().target;
    const issues = (await h.jiraIssues()).filter((i) =>
      i.fields.labels?.some((l) => l.startsWith('src-id-')),
    );
    const used = new Set<string>();
    const pick = async (fits: (i: (typeof issues)[number]) => boolean | Promise<boolean>) => {
      for (const i of issues) if (!used.has(i.key) && (await fits(i))) return used.add(i.key) && i;
      throw new Error('no issue fits');
    };
    const ourComments = async (key: string) => {
      const all = [];
      for await (const c of target.comments(key))
        if (JSON.stringify(c.body).includes('(Azure DevOps comment ')) all.push(c);
      return all;
    };

    const commented = await pick(async (i) => (await ourComments(i.key)).length > 0);
    const [removed] = await ourComments(commented.key);
    expect(
      (await jiraFetch('DELETE', `/rest/api/3/issue/${commented.key}/comment/${removed!.id}`)).status,
    ).toBe(204);

    const labelled = await pick((i) => (i.fields.labels ?? []).some((l) => !l.startsWith('src-id-')));
    const labels = labelled.fields.labels ?? [];
    const old = labels.find((l) => !l.startsWith('src-id-'))!;
    await target.editIssue(labelled.key, {
      fields: { labels: labels.map((l) => (l === old ? `${l}-changed` : l)) },
    });

    const tabled = await pick((i) =>
      tablesOf(i.fields.description as AdfNode).some((t) => textNodes(t).length > 0),
    );
    const description = structuredClone(tabled.fields.description) as AdfNode;
    const cellText = textNodes(tablesOf(description)[0]!)[0]!;
    cellText.text = `${cellText.text} (edited in Jira)`;
    await target.editIssue(tabled.key, { fields: { description } });

    const own = /^(ado-history-|description-\d+\.html$|comment-\d+\.html$)/;
    const attachmentOf = (i: (typeof issues)[number]) =>
      ((i.fields.attachment ?? []) as { id: string; filename: string }[]).find((a) => !own.test(a.filename));
    const attached = await pick((i) => attachmentOf(i) !== undefined);
    await target.deleteAttachment(attachmentOf(attached)!.id);

    // Act
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const after = await verify(run.id, { resumed: true });
    const requests = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
      method: string;
      path: string;
    }[];

    // Assess: exactly those four differences, on those four issues
    const found = after.items
      .filter((v) => v.result === 'differs')
      .map((v) => ({ key: v.key, fields: v.differences.map((d) => d.field) }))
      .sort((a, b) => a.key.localeCompare(b.key));
    expect(found).toEqual(
      [
        { key: commented.key, fields: ['comments'] },
        { key: labelled.key, fields: ['labels'] },
        { key: tabled.key, fields: ['description.tables'] },
        { key: attached.key, fields: ['attachments'] },
      ].sort((a, b) => a.key.localeCompare(b.key)),
    );
    const byKey = new Map(after.items.map((v) => [v.key, v]));
    expect(byKey.get(labelled.key)?.differences[0]?.actual).toContain(`${old}-changed`);
    expect(byKey.get(tabled.key)?.differences[0]?.actual).toContain('(edited in Jira)');
    expect(byKey.get(attached.key)?.differences[0]).toMatchObject({
      expected: expect.stringContaining(attachmentOf(attached)!.filename),
      actual: '(none)',
    });
    expect(after.summary).toEqual({
      itemsChecked: clean.summary.itemsChecked,
      fullyFaithful: clean.summary.itemsChecked - 4,
      differencesByField: { comments: 1, labels: 1, 'description.tables': 1, attachments: 1 },
      itemsWithNotes: after.summary.itemsWithNotes,
      unverified: 0,
    });
    // Verification only reads Jira: each issue once, its comments (a page of them at a time), link types once a
    // block of 50 items.
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    const issueReads = requests.filter((r) => /^\/rest\/api\/3\/issue\/[^/?]+\?/.test(r.path));
    const commentPages = requests.filter((r) => /^\/rest\/api\/3\/issue\/[^/?]+\/comment(\?|$)/.test(r.path));
    expect(issueReads).toHaveLength(after.summary.itemsChecked);
    expect(new Set(commentPages.map((r) => r.path.split('/comment')[0])).size).toBe(
      after.summary.itemsChecked,
    );
    expect(requests.length - issueReads.length - commentPages.length).toBeLessThanOrEqual(
      Math.ceil(after.summary.itemsChecked / 50),
    );
    // The CSV says the same, a line per difference.
    expect(after.csv.split('\r\n').filter((l) => l.includes(',differs,'))).toHaveLength(4);
  });
});
