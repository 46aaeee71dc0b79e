/**
 * Run reports and retries over the sandboxes. Jira is told to refuse the creation of a few items (one of them a
 * parent); the run ends PARTIAL and its failure report and id-map export must say exactly what the sandboxes
 * say: the refused items (create) and the children of the refused parent (hierarchy), with their types and
 * keys; every issue Jira holds, with its source. A dry run leaves reports too. Then the refusal is lifted and a
 * second FULL run creates exactly the refused items, skips the rest, and ends COMPLETED with one issue per item.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_MIGRATED_TYPES } from '../../functions/domain/mapping/issue-types.ts';
import { CHUNK_SIZE } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import type { FailureReportRow } from '../../functions/engine/reports.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { type EngineHarness, type JiraIssueDump, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

const REFUSAL = 'Issue creation was refused by a workflow validator (e2e).';
const PARENT_REL = 'System.LinkTypes.Hierarchy-Reverse';
const BULK_CREATE = '/rest/api/3/issue/bulk';
const SINGLE_CREATE = '/rest/api/3/issue';
/** The refusals and their consequences are the create and hierarchy phases': the rest would only add traffic. */
const QUICK = { migrateAttachments: false, migrateComments: false };

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 60, seed: 31 });
});
afterAll(async () => {
  await h?.close();
});

interface SourceItem {
  id: number;
  type: string;
  parentId: number | null;
}

/** The source's truth, read through its API: the items a run migrates, their types and in-scope parents. */
async function sourceItems(): Promise<Map<number, SourceItem>> {
  const source = h.deps().source;
  const all = await source.workItems(await source.idsInScope(), { expand: 'relations' });
  const migrated = all.filter((i) => !NOT_MIGRATED_TYPES.includes(String(i.fields['System.WorkItemType'])));
  const ids = new Set(migrated.map((i) => i.id));
  return new Map(
    migrated.map((i) => {
      const rel = (i.relations ?? []).find((r) => r.rel === PARENT_REL);
      const parent = rel ? Number(/(\d+)$/.exec(rel.url)?.[1]) : null;
      return [
        i.id,
        {
          id: i.id,
          type: String(i.fields['System.WorkItemType']),
          parentId: parent !== null && ids.has(parent) ? parent : null,
        },
      ];
    }),
  );
}

/** Jira's truth: source id -> its issues, by the `src-id-N` label. */
function issuesBySource(issues: JiraIssueDump[]): Map<number, JiraIssueDump[]> {
  const out = new Map<number, JiraIssueDump[]>();
  for (const issue of issues)
    for (const label of issue.fields.labels ?? []) {
      const m = /^src-id-(\d+)$/.exec(label);
      if (m) out.set(Number(m[1]), [...(out.get(Number(m[1])) ?? []), issue]);
    }
  return out;
}

async function artifact(key: string): Promise<string> {
  const body = await h.deps().artifacts.get(key);
  if (body === undefined) throw new Error(`artifact ${key} missing`);
  return body;
}

/** The CSV the reports must hold, written here independently of the engine (no field here needs quoting). */
function csv(header: string, rows: (string | number | null)[][]): string {
  for (const row of rows) for (const f of row) expect(String(f ?? '')).not.toMatch(/[",\r\n]/);
  return [header, ...rows.map((r) => r.map((f) => f ?? '').join(','))].map((l) => `${l}\r\n`).join('');
}

/** Jira's create calls in its request log: bulk ones, and single ones (which the engine should never make). */
async function createCalls(): Promise<{ bulk: number; single: number }> {
  const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
  const posts = log.filter((r) => r.method === 'POST').map((r) => r.path.split('?')[0]);
  return {
    bulk: posts.filter((p) => p === BULK_CREATE).length,
    single: posts.filter((p) => p === SINGLE_CREATE).length,
  };
}

describe('run reports, and a later run that retries only what failed', () => {
  let items: Map<number, SourceItem>;
  let refused: number[];
  let parent: SourceItem;
  let orphans: SourceItem[];
  let projectId: string;
  let firstRunId: string;

  it('a PARTIAL run reports exactly the refused items and their consequences, and exports the id map', async () => {
    items = await sourceItems();
    const childrenOf = (id: number) => [...items.values()].filter((i) => i.parentId === id);
    // The refusals: the first item with children in scope, and three leaves outside its family.
    parent = [...items.values()].find((i) => childrenOf(i.id).length > 0) as SourceItem;
    expect(parent).toBeDefined();
    orphans = childrenOf(parent.id);
    const leaves = [...items.values()].filter(
      (i) => childrenOf(i.id).length === 0 && i.parentId !== parent.id && i.id !== parent.id,
    );
    refused = [parent.id, ...leaves.slice(-3).map((i) => i.id)].sort((a, b) => a - b);
    expect(refused).toHaveLength(4);
    await h.control('jira', 'PUT', '/_sandbox/jira/refusals', {
      labels: refused.map((id) => `src-id-${id}`),
      message: REFUSAL,
    });

    const project = await h.newProject('Reports');
    projectId = project.id;
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', QUICK);
    firstRunId = run.id;
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(done).toMatchObject({ status: 'PARTIAL', totalItems: items.size });

    const jira = issuesBySource(await h.jiraIssues());
    expect([...jira.keys()].sort((a, b) => a - b)).toEqual(
      [...items.keys()].filter((id) => !refused.includes(id)).sort((a, b) => a - b),
    );
    const keyOf = (id: number) => (jira.get(id) as JiraIssueDump[])[0]?.key as string;

    // The failure report: each refused item in create, each child of the refused parent in hierarchy.
    const expected: FailureReportRow[] = [
      ...refused.map((id) => ({
        sourceId: id,
        sourceType: (items.get(id) as SourceItem).type,
        phase: 2,
        phaseName: 'create',
        reasons: [REFUSAL],
        targetKey: null,
      })),
      ...orphans.map((c) => ({
        sourceId: c.id,
        sourceType: c.type,
        phase: 3,
        phaseName: 'hierarchy',
        reasons: [`its Azure DevOps parent #${parent.id} was not created in Jira`],
        targetKey: keyOf(c.id),
      })),
    ].sort((a, b) => a.sourceId - b.sourceId || a.phase - b.phase);
    expect(orphans.length).toBeGreaterThan(0);
    expect(JSON.parse(await artifact(artifactKeys.failureReport(h.tenant.tenantId, run.id)))).toEqual({
      runId: run.id,
      projectId,
      failures: expected,
    });
    expect(await artifact(artifactKeys.failureReportCsv(h.tenant.tenantId, run.id))).toBe(
      csv(
        'source_id,source_type,phase,phase_name,reasons,target_key',
        expected.map((r) => [
          r.sourceId,
          r.sourceType,
          r.phase,
          r.phaseName,
          r.reasons.join(' | '),
          r.targetKey,
        ]),
      ),
    );
    // The run counted one failure per unit, as the report lists them.
    expect(done?.failureCount).toBe(expected.length);

    // The id-map export: every issue Jira holds, with its source, created by this run.
    expect(await artifact(artifactKeys.idMapExport(h.tenant.tenantId, run.id))).toBe(
      csv(
        'source_id,source_type,target_key,origin,run_id',
        [...jira.keys()]
          .sort((a, b) => a - b)
          .map((id) => [id, (items.get(id) as SourceItem).type, keyOf(id), 'created', run.id]),
      ),
    );
  });

  it('a dry run leaves its reports too: no failures, and the id map as it stands', async () => {
    const before = (await h.jiraIssues()).length;
    const run = await createRun(h.app.store, h.tenant.tenantId, projectId, 'FULL', { dryRun: true });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    expect((await h.jiraIssues()).length).toBe(before);
    expect(JSON.parse(await artifact(artifactKeys.failureReport(h.tenant.tenantId, run.id)))).toEqual({
      runId: run.id,
      projectId,
      failures: [],
    });
    expect(await artifact(artifactKeys.failureReportCsv(h.tenant.tenantId, run.id))).toBe(
      'source_id,source_type,phase,phase_name,reasons,target_key\r\n',
    );
    // Nothing recorded since the first run: the same export, byte for byte.
    expect(await artifact(artifactKeys.idMapExport(h.tenant.tenantId, run.id))).toBe(
      await artifact(artifactKeys.idMapExport(h.tenant.tenantId, firstRunId)),
    );
  });

  it('once Jira accepts them, a FULL run creates exactly the failed items and skips the others', async () => {
    await h.control('jira', 'PUT', '/_sandbox/jira/refusals', { labels: [] });
    const before = new Set((await h.jiraIssues()).map((i) => i.key));
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const run = await createRun(h.app.store, h.tenant.tenantId, projectId, 'FULL', QUICK);
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      totalItems: items.size,
      successCount: refused.length,
      skippedCount: items.size - refused.length,
      failureCount: 0,
    });

    const issues = await h.jiraIssues();
    const jira = issuesBySource(issues);
    // One issue per source item, and the new ones are exactly the refused items.
    expect([...jira.keys()].sort((a, b) => a - b)).toEqual([...items.keys()].sort((a, b) => a - b));
    expect([...jira.values()].filter((list) => list.length !== 1)).toEqual([]);
    const fresh = issues.filter((i) => !before.has(i.key));
    expect(
      fresh.map((i) =>
        Number(/^src-id-(\d+)$/.exec(i.fields.labels?.find((l) => l.startsWith('src-id-')) ?? '')?.[1]),
      ),
    ).toEqual(expect.arrayContaining(refused));
    expect(fresh).toHaveLength(refused.length);
    // Jira's request log: one bulk create per chunk of the manifest that holds a refused item, nothing more.
    const manifest = (await loadPreflight(h.deps(), done as NonNullable<typeof done>)).manifest;
    const chunks = new Set(
      manifest.flatMap((m, i) => (refused.includes(m.id) ? [Math.floor(i / CHUNK_SIZE)] : [])),
    );
    const { bulk, single } = await createCalls();
    expect({ bulk, single }).toEqual({ bulk: chunks.size, single: 0 });
    // So a chunk without a refused item made no create call at all.
    expect(chunks.size).toBeLessThan(Math.ceil(manifest.length / CHUNK_SIZE));
    console.log(
      `reports e2e: ${items.size} items; refused ${refused.join(', ')} (parent #${parent.id} ${parent.type} with ` +
        `${orphans.length} children); run 2: ${bulk} bulk create calls for ${refused.length} issues`,
    );

    // The children of the once refused parent are under it now.
    const keyOf = (id: number) => (jira.get(id) as JiraIssueDump[])[0] as JiraIssueDump;
    for (const child of orphans) {
      const issue = keyOf(child.id);
      const links = (issue.fields.issuelinks ?? []) as {
        outwardIssue?: { key: string };
        inwardIssue?: { key: string };
      }[];
      const underParent =
        issue.fields.parent?.key === keyOf(parent.id).key ||
        links.some((l) => (l.outwardIssue ?? l.inwardIssue)?.key === keyOf(parent.id).key);
      expect(underParent, `#${child.id} under #${parent.id}`).toBe(true);
    }

    // Its reports: no failures; the id map with the retried items recorded by this run, the rest by the first.
    expect(
      JSON.parse(await artifact(artifactKeys.failureReport(h.tenant.tenantId, run.id))).failures,
    ).toEqual([]);
    expect(await artifact(artifactKeys.idMapExport(h.tenant.tenantId, run.id))).toBe(
      csv(
        'source_id,source_type,target_key,origin,run_id',
        [...items.keys()]
          .sort((a, b) => a - b)
          .map((id) => [
            id,
            (items.get(id) as SourceItem).type,
            keyOf(id).key,
            'created',
            refused.includes(id) ? run.id : firstRunId,
          ]),
      ),
    );
  });
});
