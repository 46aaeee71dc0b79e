/**
 * A run's Jira import files (functions/domain/jira-import/run-files.ts) kept as run artifacts
 * (functions/store/import-files.ts): the manifest's items in batches of the project's size, labelled with the
 * run, each file valid and free of anything secret, the index written last and parsed on read.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ImportFileSchema,
  type ImportMapping,
  issueOf,
  planningStandIn,
  planRunFiles,
  planRunFilesByBlock,
  runFileOf,
  runFilesOfIssues,
  runImportFiles,
  type SourceRecord,
} from '../../functions/domain/jira-import/index.ts';
import { carriedIssues } from '../../functions/engine/phases/verify.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { type ArtifactStore, artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { ImportFileArchive } from '../../functions/store/import-files.ts';
import { adoIdentity } from '../support/ado-identity.ts';
import { importItemFields } from '../support/import-items.ts';

const ORG = 'https://dev.azure.com/fabrikam';
const PAT_LIKE = 'token=ado-secret-7f3a';
const ana = adoIdentity(ORG, 'Ana Silva', 'ana.silva@fabrikam.com', 'a1', `?${PAT_LIKE}`);
const carla = adoIdentity(ORG, 'Carla Diaz', 'carla.diaz@fabrikam.com', 'c3', `?${PAT_LIKE}`);
const ANA = '5b10ac8d82e05b22cc7d4ef5';
const RUN = '0193a2f4-7c1e-7a00-8b00-00000000abcd';
const TENANT = 'tenant-1';

const mapping: ImportMapping = {
  projectKey: 'MIG',
  typeMap: { Bug: { id: '10004', name: 'Bug' }, Task: { id: '10003', name: 'Subtask' } },
  typeLevels: { Bug: 0, Subtask: -1 },
  states: {
    Bug: { New: { status: { id: '10000', name: 'To Do' } } },
    Task: { New: { status: { id: '10000', name: 'To Do' } } },
  },
  doneStatuses: { bug: ['Done'], subtask: ['Done'] },
  priorityNames: ['Highest', 'High', 'Medium', 'Low'],
  users: { 'ana.silva@fabrikam.com': ANA },
};

const record = (id: number, type: string, parent?: number): SourceRecord => ({
  item: {
    id,
    url: `${ORG}/_apis/wit/workItems/${id}?${PAT_LIKE}`,
    fields: {
      ...importItemFields(id, type, id === 3 ? carla : ana),
      // A link the author wrote is their text, kept as the REST mode keeps it; the API's own addresses are not.
      'System.Description': '<p>See <a href="https://wiki.fabrikam.example/runbook">the runbook</a></p>',
      ...(parent ? { 'System.Parent': parent } : {}),
    },
  },
  revisions: [],
  comments: [
    {
      id: 100 + id,
      text: '<p>Repro on Safari</p>',
      createdBy: { displayName: 'Ana Silva', uniqueName: 'ana.silva@fabrikam.com' },
      createdDate: '2024-05-01T09:00:00Z',
    },
  ],
});

const records = [
  record(1, 'Bug'),
  record(2, 'Task', 1),
  record(3, 'Bug'),
  record(4, 'Bug'),
  record(5, 'Task', 99),
];

describe("a run's import files", () => {
  let dir: string;
  let artifacts: ArtifactStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-files-'));
    artifacts = new DiskArtifactStore(dir);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('batches the items at the run size, labels each issue with the run and indexes what is left to REST', () => {
    const { files, index } = runImportFiles(records, mapping, { runId: RUN, size: 2 });
    expect(files.map((f) => f.number)).toEqual([1, 2]);
    expect(index).toEqual({
      runId: RUN,
      size: 2,
      batches: [
        { number: 1, label: `tms-import-${RUN}-1`, sourceIds: [1, 2] },
        { number: 2, label: `tms-import-${RUN}-2`, sourceIds: [3, 4] },
      ],
      parents: [],
      links: [],
      leftOut: [
        {
          sourceId: 5,
          reason: 'its parent #99 is not in the import: the importer creates no sub-task without one',
        },
      ],
      unmappedPeople: ['carla.diaz@fabrikam.com'],
      warnings: [],
    });
    const first = ImportFileSchema.parse(JSON.parse(files[0]?.text ?? ''));
    expect(first.projects[0]?.issues.map((i) => [i.externalId, i.labels])).toEqual([
      ['1', ['src-id-1', `tms-import-${RUN}-1`]],
      ['2', ['src-id-2', `tms-import-${RUN}-1`]],
    ]);
    expect(first.links).toEqual([{ name: 'sub-task-link', sourceId: '2', destinationId: '1' }]);
  });

  it('cut batch by batch from stand-ins, the files and index are those of the whole run, byte for byte', () => {
    // Prepare: links inside a batch (3 -> 4) and across two (1 -> 4), a sub-task with its parent.
    const related = (to: number) => ({
      rel: 'System.LinkTypes.Related',
      url: `${ORG}/_apis/wit/workItems/${to}`,
    });
    const linked = records.map((r) =>
      r.item.id === 1 || r.item.id === 3 ? { ...r, item: { ...r.item, relations: [related(4)] } } : r,
    );
    const built = linked.map((r) => issueOf(r.item, r.revisions, r.comments, mapping));
    const options = { runId: RUN, size: 2, availableTypes: ['Relates'] };
    const whole = runFilesOfIssues(built, 'MIG', options);
    // Act
    const index = planRunFiles(built.map(planningStandIn), 'MIG', options);
    const byId = new Map(built.map((b) => [b.sourceId, b]));
    const files = index.batches.map((b) => ({
      number: b.number,
      text: runFileOf(
        b.sourceIds.map((id) => byId.get(id) as (typeof built)[number]),
        b.number,
        'MIG',
        options,
      ),
    }));
    // Assess
    expect(index).toEqual(whole.index);
    expect(files).toEqual(whole.files);
    expect(index.links).toEqual([{ type: 'Relates', from: 1, to: 4 }]);
    expect(JSON.parse(files[1]?.text ?? '').links).toEqual([
      { name: 'Relates', sourceId: '3', destinationId: '4' },
    ]);
  });

  it('plans the files from the built blocks one at a time, holding no issue past its block: the same index', async () => {
    // Prepare: links inside a batch (3 -> 4) and across two (1 -> 4), a sub-task with its parent, a sub-task whose
    // parent is not in the run. The source hands out blocks of two built issues, each issue (and all it holds) a
    // revocable proxy, revoked when the next block is read: a planner that kept an issue past its block (to plan
    // from every issue at once) touches a revoked one and fails.
    const related = (to: number) => ({
      rel: 'System.LinkTypes.Related',
      url: `${ORG}/_apis/wit/workItems/${to}`,
    });
    const built = records
      .map((r) =>
        r.item.id === 1 || r.item.id === 3 ? { ...r, item: { ...r.item, relations: [related(4)] } } : r,
      )
      .map((r) => issueOf(r.item, r.revisions, r.comments, mapping));
    const options = { runId: RUN, size: 2, availableTypes: ['Relates'] };
    const blocks = [built.slice(0, 2), built.slice(2, 4), built.slice(4)];
    let open: (() => void)[] = [];
    const held = <T extends object>(value: T): T => {
      const { proxy, revoke } = Proxy.revocable(value, {
        get: (target, key, receiver) => {
          const got = Reflect.get(target, key, receiver);
          return got !== null && typeof got === 'object' ? held(got) : got;
        },
      });
      open.push(revoke);
      return proxy;
    };
    const reads: number[] = [];
    const source = {
      count: blocks.length,
      read: async (n: number) => {
        for (const revoke of open) revoke();
        open = [];
        reads.push(n);
        return (blocks[n] ?? []).map(held);
      },
    };
    // Act
    const index = await planRunFilesByBlock(source, options);
    for (const revoke of open) revoke();
    // Assess: the index of the whole run, each block read twice, one after another.
    expect(index).toEqual(runFilesOfIssues(built, 'MIG', options).index);
    expect(index.links).toEqual([{ type: 'Relates', from: 1, to: 4 }]);
    expect(index.leftOut.map((l) => l.sourceId)).toEqual([5]);
    expect(reads).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('keeps each file and the index as run artifacts, with nothing secret in them, the index last', async () => {
    const built = runImportFiles(records, mapping, { runId: RUN, size: 2 });
    const written: string[] = [];
    const recording: ArtifactStore = {
      put: async (key, body) => {
        written.push(key);
        await artifacts.put(key, body);
      },
      get: (key) => artifacts.get(key),
      putStream: (key, body) => artifacts.putStream(key, body),
      remove: (keys) => artifacts.remove(keys),
      removeUnder: (prefix) => artifacts.removeUnder(prefix),
    };
    const archive = new ImportFileArchive(recording);
    expect(await archive.index(TENANT, RUN)).toBeUndefined();
    await archive.write(TENANT, RUN, built);
    const listed = `tenants/${TENANT}/runs/${RUN}/import/written.json`;
    expect(written).toEqual([
      artifactKeys.importFile(TENANT, RUN, 1),
      listed,
      artifactKeys.importFile(TENANT, RUN, 2),
      listed,
      artifactKeys.importIndex(TENANT, RUN),
    ]);
    expect(await archive.written(TENANT, RUN, built.index)).toEqual(new Set([1, 2]));
    expect(await archive.file(TENANT, RUN, 1)).toBe(built.files[0]?.text);
    expect(await archive.file(TENANT, RUN, 3)).toBeUndefined();
    expect(await archive.index(TENANT, RUN)).toEqual(built.index);

    // Every byte kept: no token, no tracker address (the item's, its people's), no e-mail of a person with an account.
    const kept = join(dir, 'tenants', TENANT, 'runs', RUN, 'import');
    const names = (await readdir(kept)).sort();
    expect(names).toEqual(['batch-00001.json', 'batch-00002.json', 'index.json', 'written.json']);
    for (const name of names.filter((n) => n.startsWith('batch-'))) {
      const text = await readFile(join(kept, name), 'utf8');
      for (const secret of ['token', 'ado-secret', 'dev.azure.com', 'vssps', 'ana.silva@'])
        expect(text.toLowerCase()).not.toContain(secret);
    }
  });

  it('removes the copies one file names once its batch is in Jira, and every copy of the run at its end', async () => {
    // Prepare: items 1 and 3 with a file each, in batches 1 and 2; a copy of an item no file carries (left out).
    const withFile = (r: SourceRecord, copy: string) =>
      issueOf(r.item, r.revisions, r.comments, mapping, {
        attachments: [{ copy, name: `${copy}.log`, by: undefined, created: '2024-03-04T09:15:02Z' }],
      });
    const built = records.map((r) =>
      r.item.id === 1
        ? withFile(r, 'guid-1')
        : r.item.id === 3
          ? withFile(r, 'guid-3')
          : issueOf(r.item, r.revisions, r.comments, mapping),
    );
    const archive = new ImportFileArchive(artifacts);
    await archive.write(TENANT, RUN, runFilesOfIssues(built, 'MIG', { runId: RUN, size: 2 }));
    const copy = (id: string) => artifactKeys.importCopy(TENANT, RUN, id);
    for (const id of ['guid-1', 'guid-3', 'guid-5']) await artifacts.put(copy(id), id);
    // Act: batch 1 verified.
    expect(await archive.removeCopies(TENANT, RUN, 1)).toBe(1);
    // Assess: its copy gone; batch 2's kept for its download.
    expect(await artifacts.get(copy('guid-1'))).toBeUndefined();
    expect(await artifacts.get(copy('guid-3'))).toBe('guid-3');
    // Act: the run's end. Assess: every copy gone, the files and index kept.
    await archive.removeAllCopies(TENANT, RUN);
    for (const id of ['guid-3', 'guid-5']) expect(await artifacts.get(copy(id))).toBeUndefined();
    expect(await archive.file(TENANT, RUN, 2)).toContain('"uri": "tms-copy:guid-3"');
  });

  it("is read for a verification once per invocation, not once per block: the last file's issues are kept", async () => {
    const built = runImportFiles(records, mapping, { runId: RUN, size: 2 });
    await new ImportFileArchive(artifacts).write(TENANT, RUN, built);
    const reads: string[] = [];
    const get = artifacts.get.bind(artifacts);
    artifacts.get = async (key: string) => {
      reads.push(key);
      return get(key);
    };
    const ctx = {
      run: { tenantId: TENANT, id: RUN },
      deps: { artifacts },
      invocation: new InvocationScope(),
    };
    const carried = ctx as unknown as Parameters<typeof carriedIssues>[0];
    // Two blocks of batch 1's items, then one of batch 2's: the index once, each file once.
    expect([...(await carriedIssues(carried, [1])).keys()]).toEqual([1]);
    expect([...(await carriedIssues(carried, [2])).keys()]).toEqual([2]);
    expect([...(await carriedIssues(carried, [3, 99])).keys()]).toEqual([3]);
    expect(reads).toEqual([
      artifactKeys.importIndex(TENANT, RUN),
      artifactKeys.importFile(TENANT, RUN, 1),
      artifactKeys.importFile(TENANT, RUN, 2),
    ]);
    // A new invocation reads again.
    ctx.invocation = new InvocationScope();
    await carriedIssues(carried, [1]);
    expect(reads).toHaveLength(5);
  });
});
