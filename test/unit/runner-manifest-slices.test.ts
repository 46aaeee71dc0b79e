/**
 * The engine's invocation reads the manifest a slice at a time (functions/phase-kit/manifest-slices.ts), over a
 * real store (DynamoDB Local) and the disk artifact store: the runner opens the preflight's header only, and a
 * phase parses the slices its units are at, never the whole project's manifest joined into one list; the units
 * of the phases after create (migratedUnits) are found with one id map read per slice, not one over the project.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import type { ManifestItem } from '../../functions/domain/manifest.ts';
import { LAST_CORE_PHASE, PHASES, type Run } from '../../functions/domain/runs.ts';
import { runBatch } from '../../functions/engine/runner.ts';
import {
  type EngineDeps,
  emptyOutcome,
  type PhaseModule,
  type Preflight,
} from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { openPreflight, writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { migratedUnits } from '../../functions/phase-kit/toolkit.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import { idMapEntry } from '../support/id-map.ts';
import { createRun } from '../support/runs.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;
const dir = mkdtempSync(join(tmpdir(), 'tms-runner-slices-'));
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
  type: 'Bug',
  parentId: null,
}));

const preflightOf = (plugins: string[]): Preflight => ({
  manifest,
  projectKey: 'MIG',
  typeMap: { Bug: { id: '3', name: 'Bug' } },
  typeLevels: {},
  storyPointsFieldId: null,
  priorityNames: [],
  users: {},
  unmappedUsers: [],
  warnings: [],
  plugins,
  sprintFieldId: null,
  boardId: null,
  sprints: [],
  components: [],
});

/** The engine's dependencies, the artifacts it read and the id map reads (their sizes) told in `seen`. */
function watched(seen: string[], plugins: Record<string, PhaseModule> = {}): EngineDeps {
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
    journal: new StoreRunJournal(store),
    artifacts: {
      get: (key) => {
        seen.push(`get ${name(key)}`);
        return artifacts.get(key);
      },
      put: (key, body) => artifacts.put(key, body),
      putStream: (key, body) => artifacts.putStream(key, body),
      remove: (keys) => artifacts.remove(keys),
      removeUnder: (prefix) => artifacts.removeUnder(prefix),
    },
    source: {} as never,
    target: {} as never,
    indexLagMs: 0,
    plugins,
    pluginDefinitions: [],
  };
}

/** A run whose preflight (with the plugins) is written, its cursor at `phase`. */
async function runAt(phase: number, plugins: string[]): Promise<Run> {
  const run = await createRun(store, tenantId, randomUUID(), 'FULL');
  await writePreflight(artifacts, { tenantId, runId: run.id }, preflightOf(plugins));
  const journal = new StoreRunJournal(store);
  expect(
    await journal.checkpoint(run, { from: run.cursor, to: { phase, index: 0 }, progressPercent: 0 }),
  ).toBe(true);
  return (await store.runs.get(tenantId, run.id)) as Run;
}

describe('the manifest in an engine invocation', () => {
  it('a RunBatch invocation parses the slices its units are at, not the whole manifest', async () => {
    const run = await runAt(LAST_CORE_PHASE + 1, ['probe']);
    // A phase whose units are the manifest's items, each reading its own item; the invocation's time runs out
    // once 100 units are worked, so its units are all in the first slice.
    const worked: number[] = [];
    const probe: PhaseModule = {
      units: (ctx) => ctx.preflight.manifest.length,
      open: (ctx) => ({
        work: async (index) => {
          const item = await ctx.preflight.manifest.at(index);
          worked.push(item?.id ?? -1);
          return { ...emptyOutcome(), success: 1 };
        },
      }),
    };
    const seen: string[] = [];

    const answer = await runBatch(
      watched(seen, { probe }),
      { tenantId, runId: run.id },
      () => (worked.length < 100 ? 900_000 : 0),
      'MIG',
    );

    expect(answer).toBe('batch');
    expect(worked.length).toBeGreaterThanOrEqual(100);
    expect(worked.every((id, n) => id === worked[0]! + n && id <= 1000)).toBe(true);
    // The header, then the one slice the units are at: the other two are never read.
    expect(seen.filter((s) => s.startsWith('get '))).toEqual([
      'get preflight.json',
      'get manifest-00000.json',
    ]);
    const after = (await store.runs.get(tenantId, run.id)) as Run;
    expect(after.cursor.phase).toBe(LAST_CORE_PHASE + 1);
    expect(after.cursor.index).toBe(worked.length);
  });

  it('the units of a phase after create are found with one id map read per slice of the manifest', async () => {
    const run = await runAt(PHASES.transitions, []);
    await store.idMap.putMany(
      tenantId,
      run.projectId,
      [3, 1500, 2500].map((id, n) => idMapEntry(id, 'Bug', n + 1)),
    );
    const seen: string[] = [];
    const deps = watched(seen);
    // The preflight as the runner opens it: the header, the manifest to be read a slice at a time.
    const { header, manifest: slices } = await openPreflight(deps.artifacts, { tenantId, runId: run.id });
    const ctx = { deps, run, preflight: { ...header, manifest: slices }, invocation: new InvocationScope() };

    expect(await migratedUnits(ctx, 'probe-units.json')).toEqual([3, 1500, 2500]);

    expect(seen).toEqual([
      'get preflight.json',
      'get probe-units.json',
      'get manifest-00000.json',
      'id map 1000',
      'get manifest-00001.json',
      'id map 1000',
      'get manifest-00002.json',
      'id map 500',
    ]);
    // Kept for the run: asked again, the list is read back, the manifest and the id map are not.
    seen.length = 0;
    expect(await migratedUnits(ctx, 'probe-units.json')).toEqual([3, 1500, 2500]);
    expect(seen).toEqual(['get probe-units.json']);
  });
});
