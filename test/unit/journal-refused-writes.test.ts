/**
 * A write to an issue the run did not create is journalled before it is made (#phase-kit/write-journal.ts); when
 * Jira refuses it (a 4xx: nothing was written) its record is forgotten, so a rollback's preview lists no change
 * the run never made ("gone, no longer in Jira"); a write whose answer never came (a 5xx, a reset) keeps it: it
 * may have happened. Each phase that journals is driven as the runner drives it (open, then a unit) against a
 * target that refuses, its journal and id map the real store's (DynamoDB Local), the rest fakes at the ports.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../functions/domain/rollback/journal.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { PHASES } from '../../functions/domain/runs.ts';
import { attachmentsPhase } from '../../functions/engine/phases/attachments.ts';
import { commentsPhase } from '../../functions/engine/phases/comments.ts';
import { hierarchyPhase } from '../../functions/engine/phases/hierarchy.ts';
import { linksPhase } from '../../functions/engine/phases/links.ts';
import { transitionsPhase } from '../../functions/engine/phases/transitions.ts';
import { updateKnownItems } from '../../functions/engine/phases/update.ts';
import {
  type EngineDeps,
  emptyOutcome,
  type PhaseContext,
  type RunPreflight,
} from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { manifestInMemory } from '../../functions/phase-kit/manifest-slices.ts';
import { runArtifactKey } from '../../functions/phase-kit/toolkit.ts';
import { WriteJournal } from '../../functions/phase-kit/write-journal.ts';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { IdMapEntry } from '../../functions/store/id-map.ts';
import type { Store } from '../../functions/store/index.ts';
import type { AdoComment, AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { TrackerHttpError, TrackerUnreachableError } from '../../functions/trackers/tracker-errors.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  ({ db, store } = await freshTable());
});
afterAll(() => db?.destroy());

/** Jira's refusal of a write (a 4xx), and an answer that never came back whole (a 5xx). */
const refused = (status = 400) =>
  new TrackerHttpError('target', status, 'POST', '/rest/api/3/issue/WEB-7', {
    errorMessages: ['You do not have permission to do that.'],
  });
const broken = () => new TrackerHttpError('target', 502, 'POST', '/rest/api/3/issue/WEB-7', undefined);

const SOURCE_ID = 7;
const KEY = 'WEB-7';

/** The item the run found in Jira (an earlier run's issue): every write to it is journalled. */
const foundEntry = (sourceId = SOURCE_ID, sourceType = 'Task'): IdMapEntry => ({
  sourceId,
  sourceType,
  targetKey: `WEB-${sourceId}`,
  targetId: String(10_000 + sourceId),
  origin: 'found',
  runId: 'an-earlier-run',
  phasesDone: [PHASES.create],
  updatedAt: '2026-12-07T09:00:00.000Z',
});

const itemOf = (fields: Record<string, unknown> = {}): AdoWorkItem => ({
  id: SOURCE_ID,
  // One revision: no history page to bring.
  rev: 1,
  fields: { 'System.Title': 'Found task', 'System.WorkItemType': 'Task', 'System.State': 'Done', ...fields },
  relations: [],
});

/**
 * A run over items found in Jira (by default the one task), their id map entries in the real store; `deps` the
 * phase's fakes.
 */
async function runOver(
  deps: { source?: object; target: object },
  artifacts = new Map<string, string>(),
  items: { id: number; type: string; parentId: number | null }[] = [
    { id: SOURCE_ID, type: 'Task', parentId: null },
  ],
) {
  const run = {
    id: randomUUID(),
    tenantId: randomUUID(),
    projectId: randomUUID(),
    type: 'FULL',
    options: {},
    cursor: { phase: PHASES.comments, index: 0 },
  } as unknown as Run;
  await store.idMap.putMany(
    run.tenantId,
    run.projectId,
    items.map((i) => foundEntry(i.id, i.type)),
  );
  const ctx: PhaseContext = {
    deps: {
      store,
      artifacts: {
        get: async (key: string) => artifacts.get(key),
        put: async (key: string, body: string) => {
          artifacts.set(key, body);
        },
      },
      source: {
        organizationUrl: 'https://dev.azure.com/contoso',
        connection: { project: 'Web' },
        ...deps.source,
      },
      target: { connection: { baseUrl: 'https://contoso.atlassian.net' }, ...deps.target },
    } as unknown as EngineDeps,
    run,
    preflight: {
      manifest: manifestInMemory(items),
      users: {},
      unmappedUsers: [],
      typeMap: { Task: { id: '10001', name: 'Task' }, Feature: { id: '10000', name: 'Epic' } },
      typeLevels: { Epic: 1, Task: 0 },
      priorityNames: ['Medium'],
      projectKey: 'WEB',
    } as unknown as RunPreflight,
    invocation: new InvocationScope(),
  };
  const journal = (sourceId = SOURCE_ID) =>
    store.writeJournal.ofItem({ tenantId: run.tenantId, projectId: run.projectId, runId: run.id }, sourceId);
  return { ctx, run, journal, artifacts };
}

const writesOf = (records: JournalRecord[]) =>
  records.map((r) => r.write).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('the journal of a write Jira refused', () => {
  it('forgets its records on a 4xx, keeps them on a 5xx or no answer, and never forgets an earlier field record', async () => {
    // Prepare: the description's value before the run, journalled by an earlier phase whose write went in
    const { ctx, journal } = await runOver({ target: {} });
    const wj = WriteJournal.of(ctx);
    const entry = foundEntry();
    const first = await wj.fieldsBefore(entry, PHASES.create, { description: 'by hand' });

    // Act: a later write of the description, refused; a remote link refused; one whose answer was a 502, one
    // whose connection was reset; a 403 and a 404
    const later = await wj.fieldsBefore(entry, PHASES.attachments, { description: 'written by the run' });
    await expect(wj.attempt(later, () => Promise.reject(refused()))).rejects.toThrow(TrackerHttpError);
    const tries = [
      ['ado:1', refused(400)],
      ['ado:2', broken()],
      ['ado:3', new TrackerUnreachableError('target', 'contoso.atlassian.net', 'ECONNRESET')],
      ['ado:4', refused(403)],
      ['ado:5', refused(404)],
    ] as const;
    for (const [globalId, err] of tries) {
      const records = await wj.intend(entry, PHASES.links, [{ kind: 'remoteLink', globalId }]);
      await expect(wj.attempt(records, () => Promise.reject(err))).rejects.toBe(err);
    }

    // Assess: the first value before stays (the later record was never written), the refused links are gone
    expect(first).toHaveLength(1);
    expect(later).toEqual([]);
    expect(writesOf(await journal())).toEqual([
      { kind: 'field', field: 'description', before: 'by hand' },
      { kind: 'remoteLink', globalId: 'ado:2' },
      { kind: 'remoteLink', globalId: 'ado:3' },
    ]);
  });

  it('comments: a comment Jira refused, and the next one never sent, leave no record; one answered 502 keeps its own', async () => {
    for (const [answer, tries, kept] of [
      [refused(), 2, []],
      [broken(), 1, [{ kind: 'comment', find: '(Azure DevOps comment 501)', id: null }]],
    ] as const) {
      // Prepare: two comments of the found item not in Jira yet; Jira refuses (or breaks off) every post
      const comments: AdoComment[] = [
        { id: 501, text: '<p>First</p>', createdDate: '2026-01-01T00:00:00Z' },
        { id: 502, text: '<p>Second</p>', createdDate: '2026-01-02T00:00:00Z' },
      ];
      const posts: string[] = [];
      const { ctx, journal } = await runOver({
        source: {
          workItems: async () => [itemOf({ 'System.CommentCount': 2 })],
          comments: () =>
            (async function* () {
              yield* comments;
            })(),
        },
        target: {
          comments: () => (async function* () {})(),
          addComment: async (key: string) => {
            posts.push(key);
            throw answer;
          },
        },
      });

      // Act
      const worker = await commentsPhase.open(ctx);
      const outcome = await worker.work(0, () => false).catch((err: unknown) => err);
      await worker.close?.();

      // Assess: the first comment tried (as converted, then as plain text after the 4xx), the second never
      expect(posts).toEqual(Array(tries).fill(KEY));
      if (answer.status === 400) expect(outcome).toMatchObject({ failure: 1 });
      else expect(outcome).toBe(answer);
      expect(writesOf(await journal())).toEqual(kept);
    }
  });

  it('transitions: a move Jira refused, the issue still where it was, leaves no status record', async () => {
    // Prepare: the found issue in "To Do", the item "Done" in Azure DevOps; Jira refuses the one transition
    const artifacts = new Map<string, string>();
    const { ctx, run, journal } = await runOver(
      {
        source: { workItems: async () => [itemOf()] },
        target: {
          getIssue: async () => ({ fields: { status: { name: 'To Do' }, issuetype: { name: 'Task' } } }),
          transitions: async () => [{ id: '31', name: 'Done', to: { name: 'Done' } }],
          transition: async () => {
            throw refused(403);
          },
        },
      },
      artifacts,
    );
    artifacts.set(runArtifactKey(run, 'transitions-units.json'), JSON.stringify([SOURCE_ID]));
    artifacts.set(
      runArtifactKey(run, 'state-map.json'),
      JSON.stringify({
        mapping: { map: { Task: { Done: { status: { id: '3', name: 'Done' } } } }, warnings: [] },
        doneStatuses: {},
      }),
    );

    // Act
    const worker = await transitionsPhase.open(ctx);
    const outcome = await worker.work(0, () => false);
    await worker.close?.();

    // Assess
    expect(outcome).toMatchObject({ failure: 1 });
    expect(await journal()).toEqual([]);
  });

  it('attachments: a file Jira refused leaves no record', async () => {
    // Prepare: the item's one file, not on the found issue; Jira refuses its upload
    const file = 'https://dev.azure.com/contoso/_apis/wit/attachments/0a1b2c3d-0000-4000-8000-000000000001';
    const { ctx, journal } = await runOver({
      source: {
        workItems: async () => [
          {
            ...itemOf(),
            relations: [
              { rel: 'AttachedFile', url: file, attributes: { name: 'spec.pdf', resourceSize: 9 } },
            ],
          },
        ],
        openAttachment: async () => new Response('pdf bytes'),
      },
      target: {
        attachmentSettings: async () => ({ enabled: true, uploadLimit: 10_000_000 }),
        getIssue: async () => ({ fields: { attachment: [] } }),
        attachFiles: async () => {
          throw refused(403);
        },
      },
    });

    // Act
    const worker = await attachmentsPhase.open(ctx);
    const outcome = await worker.work(0, () => false);
    await worker.close?.();

    // Assess
    expect(outcome).toMatchObject({ failure: 1 });
    expect(await journal()).toEqual([]);
  });

  it('links: an issue link and the remote links Jira refused leave no record', async () => {
    // Prepare: #7 relates to #8, both found in Jira; each has its link back to Azure DevOps to get
    const related = {
      rel: 'System.LinkTypes.Related',
      url: 'https://dev.azure.com/contoso/_apis/wit/workItems/8',
      attributes: {},
    };
    const writes: string[] = [];
    const { ctx, journal } = await runOver(
      {
        source: {
          workItems: async (ids: number[]) =>
            ids.map((id) => ({ ...itemOf(), id, relations: id === SOURCE_ID ? [related] : [] })),
        },
        target: {
          linkTypes: async () => [
            { id: '10003', name: 'Relates', inward: 'relates to', outward: 'relates to' },
          ],
          search: async () => [7, 8].map((n) => ({ id: String(10_000 + n), key: `WEB-${n}`, fields: {} })),
          remoteLinks: async () => [],
          createIssueLink: async () => {
            writes.push('issue link');
            throw refused(400);
          },
          addRemoteLink: async (key: string) => {
            writes.push(`remote link on ${key}`);
            throw refused(403);
          },
        },
      },
      new Map(),
      [
        { id: 7, type: 'Task', parentId: null },
        { id: 8, type: 'Task', parentId: null },
      ],
    );

    // Act
    const worker = await linksPhase.open(ctx);
    const outcomes = [];
    for (let i = 0; i < (await linksPhase.units(ctx)); i++) outcomes.push(await worker.work(i, () => false));
    await worker.close?.();

    // Assess
    expect(writes.sort()).toEqual(['issue link', 'remote link on WEB-7', 'remote link on WEB-8']);
    expect(outcomes.reduce((n, o) => n + o.failure, 0)).toBe(3);
    expect([...(await journal(7)), ...(await journal(8))]).toEqual([]);
  });

  it('hierarchy: a parent refused both ways, then its Relates link refused, leave no record', async () => {
    // Prepare: #7 (a task) under #8 (a feature, an epic in Jira), both found in Jira, #7 under no parent there
    const asked: string[] = [];
    const { ctx, journal } = await runOver(
      {
        target: {
          linkTypes: async () => [
            { id: '10003', name: 'Relates', inward: 'relates to', outward: 'relates to' },
          ],
          search: async () => [{ id: '10007', key: 'WEB-7', fields: { parent: null, issuelinks: [] } }],
          editIssue: async () => {
            asked.push('parent');
            throw refused(400);
          },
          moveToEpic: async () => {
            asked.push('epic');
            throw refused(400);
          },
          createIssueLink: async () => {
            asked.push('relates');
            throw refused(400);
          },
        },
      },
      new Map(),
      [
        { id: 8, type: 'Feature', parentId: null },
        { id: 7, type: 'Task', parentId: 8 },
      ],
    );

    // Act
    const worker = await hierarchyPhase.open(ctx);
    const outcome = await worker.work(0, () => false);
    await worker.close?.();

    // Assess
    expect(asked).toEqual(['parent', 'epic', 'relates']);
    expect(outcome).toMatchObject({ failure: 1 });
    expect([...(await journal(7)), ...(await journal(8))]).toEqual([]);
  });

  it('fields: an update of an issue it found that Jira refused leaves no value before', async () => {
    // Prepare: the found task changed in Azure DevOps since; Jira refuses the edit
    const edits: string[] = [];
    const { ctx, journal } = await runOver({
      source: { workItems: async () => [itemOf({ 'System.Title': 'Renamed in Azure DevOps' })] },
      target: {
        getIssue: async () => ({ fields: { summary: 'Found task', description: null, labels: [] } }),
        editIssue: async (key: string) => {
          edits.push(key);
          throw refused(400);
        },
      },
    });
    const outcome = { processed: 1, ...emptyOutcome() };

    // Act
    await updateKnownItems(
      ctx,
      [foundEntry()],
      new Map([[SOURCE_ID, { id: SOURCE_ID, type: 'Task', parentId: null }]]),
      outcome,
    );

    // Assess
    expect(edits).toEqual([KEY]);
    expect(outcome).toMatchObject({ failure: 1 });
    expect(await journal()).toEqual([]);
  });
});
