/**
 * The reports of a run whose preflight keeps its manifest in slices (functions/phase-kit/preflight-artifact.ts),
 * over a real store (DynamoDB Local) and the disk artifact store: they read the manifest a slice at a time and use
 * each slice before reading the next, never the whole manifest at once; a failure report reads only the slices
 * it needs a type from. A report of several pages is written as it is read, a page at a time. What they write is
 * the reports' format, unchanged (test/unit/reports.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../functions/domain/manifest.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { writePreview, writeRunReports } from '../../functions/engine/reports.ts';
import type { EngineDeps, Preflight } from '../../functions/phase-kit/context.ts';
import { writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import { idMapEntry } from '../support/id-map.ts';
import { createRun } from '../support/runs.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;
const dir = mkdtempSync(join(tmpdir(), 'tms-reports-sliced-'));
const artifacts = new DiskArtifactStore(dir);
const tenantId = randomUUID();

beforeAll(async () => {
  ({ db, store } = await freshTable());
});
afterAll(() => {
  db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** 2,500 items: three slices of the stored manifest (1,000, 1,000, 500). */
const ITEMS = 2500;
const manifest: ManifestItem[] = Array.from({ length: ITEMS }, (_, i) => ({
  id: 1 + i,
  type: i % 5 === 0 ? 'Epic' : 'Bug',
  parentId: null,
}));

const preflightOf = (items: ManifestItem[]): Preflight => ({
  manifest: items,
  projectKey: 'MIG',
  typeMap: { Epic: { id: '1', name: 'Epic' }, Bug: { id: '3', name: 'Bug' } },
  typeLevels: {},
  storyPointsFieldId: null,
  priorityNames: [],
  users: {},
  unmappedUsers: [],
  warnings: ['#7: undated iteration'],
  plugins: [],
  sprintFieldId: null,
  boardId: null,
  sprints: [],
  components: [],
});

const entry = (sourceId: number, n: number) => idMapEntry(sourceId, 'Bug', n);

/** The engine's dependencies, with what the reports read and write told in `seen`, in order. */
function watched(seen: string[]): EngineDeps {
  const name = (key: string) => key.split('/').at(-1) ?? key;
  return {
    store: {
      ...store,
      idMap: Object.assign(Object.create(store.idMap), {
        getMany: (t: string, p: string, ids: number[]) => {
          seen.push(`id map ${ids.length}`);
          return store.idMap.getMany(t, p, ids);
        },
      }),
    },
    journal: {} as never,
    artifacts: {
      get: (key) => {
        seen.push(`get ${name(key)}`);
        return artifacts.get(key);
      },
      put: (key, body) => {
        seen.push(`put ${name(key)}`);
        return artifacts.put(key, body);
      },
      putStream: (key, body) => {
        seen.push(`stream ${name(key)}`);
        return artifacts.putStream(key, body);
      },
      remove: (keys) => artifacts.remove(keys),
      removeUnder: (prefix) => artifacts.removeUnder(prefix),
    },
    source: {} as never,
    target: {} as never,
    indexLagMs: 0,
    pluginDefinitions: [],
  };
}

async function runWithPreflight(dryRun: boolean): Promise<Run> {
  const run = await createRun(store, tenantId, randomUUID(), 'FULL', { dryRun });
  await writePreflight(artifacts, { tenantId, runId: run.id }, preflightOf(manifest));
  return run;
}

describe('the reports of a run whose manifest is kept in slices', () => {
  it('a dry run’s preview counts the manifest a slice at a time, each used before the next is read', async () => {
    const run = await runWithPreflight(true);
    await store.idMap.putMany(tenantId, run.projectId, [entry(3, 1), entry(1500, 2), entry(2500, 3)]);
    const seen: string[] = [];

    await writePreview(watched(seen), run);

    expect(seen).toEqual([
      'get preflight.json',
      'get manifest-00000.json',
      'id map 1000',
      'get manifest-00001.json',
      'id map 1000',
      'get manifest-00002.json',
      'id map 500',
      'stream preview.json',
    ]);
    const preview = JSON.parse((await artifacts.get(artifactKeys.preview(tenantId, run.id))) ?? 'missing');
    expect(preview).toEqual({
      runId: run.id,
      type: 'FULL',
      totalItems: ITEMS,
      countsPerType: { Epic: 500, Bug: 2000 },
      wouldCreate: ITEMS - 3,
      alreadyInJira: 3,
      wouldUpdate: 0,
      mapping: { types: { Epic: 'Epic', Bug: 'Bug' } },
      unmappedUsers: [],
      warnings: ['#7: undated iteration'],
      sprints: [],
      components: [],
    });
  });

  it('a failure report reads only the slices that hold the types it lacks', async () => {
    const run = await runWithPreflight(false);
    await store.idMap.putMany(tenantId, run.projectId, [entry(2400, 1)]);
    // Item 6 (an Epic) was never created: its type is the manifest's (in its first slice); 2400 has an id map entry.
    await store.runFailures.record(tenantId, run.projectId, run.id, {
      sourceId: 6,
      phase: 2,
      reason: 'summary refused',
      at: '2026-01-01T10:02:00.000Z',
    });
    await store.runFailures.record(tenantId, run.projectId, run.id, {
      sourceId: 2400,
      phase: 4,
      reason: 'Relates MIG-9: refused',
      at: '2026-01-01T10:04:00.000Z',
    });
    const seen: string[] = [];

    await writeRunReports(watched(seen), run);

    // The JSON and the CSV each read the failures anew: the header and the first slice each time, never the rest.
    expect(seen.filter((s) => s.startsWith('get '))).toEqual([
      'get preflight.json',
      'get manifest-00000.json',
      'get preflight.json',
      'get manifest-00000.json',
    ]);
    expect(await artifacts.get(artifactKeys.failureReportCsv(tenantId, run.id))).toBe(
      [
        'source_id,source_type,phase,phase_name,reasons,target_key',
        '6,Epic,2,create,summary refused,',
        '2400,Bug,4,links,Relates MIG-9: refused,MIG-1',
        '',
      ].join('\r\n'),
    );
  });
});

describe('a report of several pages', () => {
  it('is written as it is read: each page of failures goes out before the next is read', async () => {
    const run = await createRun(store, tenantId, randomUUID(), 'FULL');
    await writePreflight(artifacts, { tenantId, runId: run.id }, preflightOf(manifest.slice(0, 10)));
    await store.idMap.putMany(tenantId, run.projectId, [entry(1, 1), entry(2, 2), entry(3, 3)]);
    for (const sourceId of [1, 2, 3])
      await store.runFailures.record(tenantId, run.projectId, run.id, {
        sourceId,
        phase: 4,
        reason: `link ${sourceId} refused`,
        at: '2026-01-01T10:04:00.000Z',
      });
    const seen: string[] = [];
    const deps = watched([]);
    const streamed: EngineDeps = {
      ...deps,
      store: {
        ...deps.store,
        runFailures: Object.assign(Object.create(store.runFailures), {
          pages: async function* (t: string, p: string, r: string, size?: number) {
            for await (const page of store.runFailures.pages(t, p, r, size)) {
              seen.push(`read failures ${page.map((f) => f.sourceId).join(' ')}`);
              yield page;
            }
          },
        }),
      },
      artifacts: {
        ...deps.artifacts,
        // The artifact store is handed each piece as the report makes it.
        putStream: (key, body) => {
          const name = key.split('/').at(-1);
          async function* told() {
            for await (const piece of body) {
              seen.push(`write ${name} ${String(piece).split('\r\n').filter(Boolean).length} line(s)`);
              yield piece;
            }
          }
          return name === 'failures.csv' ? artifacts.putStream(key, told()) : artifacts.putStream(key, body);
        },
      },
    };

    await writeRunReports(streamed, run, { pageSize: 1 });

    // An (item, phase) group may go on in the next page: each is written once the page after it was read.
    expect(seen.slice(-7)).toEqual([
      'write failures.csv 1 line(s)',
      'read failures 1',
      'read failures 2',
      'write failures.csv 1 line(s)',
      'read failures 3',
      'write failures.csv 1 line(s)',
      'write failures.csv 1 line(s)',
    ]);
    expect(await artifacts.get(artifactKeys.failureReportCsv(tenantId, run.id))).toBe(
      [
        'source_id,source_type,phase,phase_name,reasons,target_key',
        '1,Bug,4,links,link 1 refused,MIG-1',
        '2,Bug,4,links,link 2 refused,MIG-2',
        '3,Bug,4,links,link 3 refused,MIG-3',
        '',
      ].join('\r\n'),
    );
  });
});
