/**
 * Items are parsed on read (functions/store/stored-item.ts): an item of an older shape reads back as today's, an
 * item that does not read is refused with an error naming the entity and where it lives, never what it holds.
 * The long-lived items each have their case: the run, the id map entry and the preflight artifact (on disk: a
 * header and its manifest's slices today, one document before).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Run } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import type { EngineDeps, Preflight } from '../../functions/phase-kit/context.ts';
import { writePreflight } from '../../functions/phase-kit/preflight-artifact.ts';
import { newRun } from '../../functions/services/runs.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import {
  DASHBOARD_CONNECTION,
  type DashboardConnection,
} from '../../functions/store/dashboard-connections.ts';
import { ID_MAP_ENTRY, type IdMapEntry } from '../../functions/store/id-map.ts';
import { RUN, runItem } from '../../functions/store/runs.ts';
import { StoredItemError } from '../../functions/store/stored-item.ts';

const dir = mkdtempSync(join(tmpdir(), 'tms-stored-items-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A run item as a release before tags wrote it: keys, index keys and the run's fields, nothing else. */
function untaggedRunItem(run: Run): Record<string, unknown> {
  const { entity: _entity, v: _v, ...item } = runItem(run);
  return item;
}

const SEALED = 'sealed-SECRET-9c1f';

describe('the run item', () => {
  const run: Run = {
    ...newRun('tenant-1', 'project-1', 'FULL', { typeOverrides: { Bug: 'Defect' } }),
    cursor: { phase: 3, index: 50, done: [52, 53] },
    generation: 2,
    pauseReason: null,
    updatedAt: '2026-03-01T10:00:00.000Z',
  };

  it('written before tags, reads as the run it holds, without its keys', () => {
    const item = untaggedRunItem(run);
    expect(item).not.toHaveProperty('entity');
    expect(RUN.parse(item)).toEqual(run);
  });

  it('written today, carries its tag and version and reads back as the run', () => {
    const item = runItem(run);
    expect(item).toMatchObject({ entity: 'run', v: 1 });
    expect(RUN.parse(item)).toEqual(run);
  });

  it('that does not read names the entity, its key and the fields, never what it holds', () => {
    const item = {
      ...runItem(run),
      status: `${SEALED}-status`,
      failureReason: 7,
      options: { ...run.options, typeOverrides: { 'alice@example.com': 5 } },
    };
    const { cursor: _gone, ...withoutCursor } = item;
    expect(() => RUN.parse(withoutCursor)).toThrowError(
      new StoredItemError(
        `run TENANT#tenant-1 RUN#${run.id} does not read: status (invalid_value), ` +
          'options.typeOverrides.[key] (invalid_type: expected string), cursor (invalid_type: expected object), ' +
          'failureReason (invalid_type: expected string)',
      ),
    );
    try {
      RUN.parse(withoutCursor);
    } catch (err) {
      expect((err as Error).name).toBe('StoredItemError');
      expect((err as Error).message).not.toContain('SECRET');
      expect((err as Error).message).not.toContain('alice');
    }
  });

  it('of a newer version, or tagged as another entity, is refused by name and key', () => {
    expect(() => RUN.parse({ ...runItem(run), v: 2 })).toThrowError(
      new StoredItemError(
        `run TENANT#tenant-1 RUN#${run.id} has a schema version this release does not read (it reads up to 1)`,
      ),
    );
    expect(() => RUN.parse({ ...runItem(run), entity: 'idMapEntry' })).toThrowError(
      new StoredItemError(`run TENANT#tenant-1 RUN#${run.id} is tagged as another entity`),
    );
  });
});

describe('the id map entry', () => {
  const entry: IdMapEntry = {
    sourceId: 12,
    targetKey: 'MIG-3',
    targetId: '10003',
    sourceType: 'Bug',
    origin: 'created',
    recovered: true,
    runId: 'run-1',
    phasesDone: [2, 3],
    updatedAt: '2026-03-01T10:00:00.000Z',
  };
  const keys = { pk: 'TENANT#tenant-1#PROJECT#project-1', sk: 'IDMAP#0000000012' };

  it('written before tags, reads as the entry it holds', () => {
    expect(ID_MAP_ENTRY.parse({ ...keys, ...entry })).toEqual(entry);
  });

  it('written today, reads back without its keys, tag and version', () => {
    expect(ID_MAP_ENTRY.parse({ ...keys, ...ID_MAP_ENTRY.tag, ...entry })).toEqual(entry);
  });

  it('that does not read names the entry by its key', () => {
    expect(() =>
      ID_MAP_ENTRY.parse({ ...keys, ...entry, origin: 'guessed', phasesDone: ['2'] }),
    ).toThrowError(
      new StoredItemError(
        `idMapEntry ${keys.pk} ${keys.sk} does not read: origin (invalid_value), ` +
          'phasesDone.0 (invalid_type: expected number)',
      ),
    );
  });
});

describe('the preflight artifact', () => {
  const artifacts = new DiskArtifactStore(dir);
  const deps = { artifacts } as unknown as EngineDeps;
  const run = newRun('tenant-1', 'project-1', 'FULL');
  const key = artifactKeys.preflight(run.tenantId, run.id);
  /** What every preflight artifact has held since the first one. */
  const first = {
    manifest: [
      { id: 3, type: 'Epic', parentId: null },
      { id: 5, type: 'User Story', parentId: 3 },
    ],
    projectKey: 'MIG',
    typeMap: { Epic: { id: '1', name: 'Epic' }, 'User Story': { id: '2', name: 'Story' } },
    typeLevels: { Epic: 1, Story: 0 },
    storyPointsFieldId: null,
    priorityNames: ['High', 'Medium'],
    users: { 'ann@example.com': 'acc-1' },
    unmappedUsers: [],
    warnings: ['bob@example.com has no Jira account: their items are left unassigned'],
    plugins: [],
  };
  const sprint = {
    iterationPath: 'P\\Sprint 1',
    name: 'Sprint 1',
    startDate: '2026-01-01T00:00:00.000Z',
    endDate: '2026-01-14T23:59:59.000Z',
    state: 'closed' as const,
    id: 11,
    jiraState: 'future' as const,
    created: true,
  };
  const setup = {
    sprintFieldId: 'customfield_10020',
    boardId: 1,
    sprints: [sprint],
    components: [{ name: 'Web', id: '100', created: true, areaPaths: ['P\\Web'] }],
  };
  const mappings = {
    confirmedAt: '2026-01-01T09:00:00.000Z',
    states: { Done: 'Closed' },
    linkTypes: {},
    customFields: [
      { source: 'Custom.Team', fieldId: 'customfield_10050', name: 'Team', shape: 'string' as const },
    ],
    users: { 'bob@example.com': null },
  };

  const read = async (stored: unknown) => {
    await artifacts.put(key, JSON.stringify(stored));
    return loadPreflight(deps, run);
  };

  it('from before the sprint and component setup, reads with none of them and its mappings still absent', async () => {
    const preflight = await read(first);
    expect(preflight).toEqual({ ...first, sprintFieldId: null, boardId: null, sprints: [], components: [] });
    expect(preflight).not.toHaveProperty('mappings');
  });

  it('from before closableAt, reads its sprints without it (their steps wait for the phase end)', async () => {
    const preflight = await read({ ...first, ...setup, mappings });
    expect(preflight).toEqual({ ...first, ...setup, mappings });
    expect(preflight.sprints[0]).not.toHaveProperty('closableAt');
  });

  it('of version 1, the whole preflight in one document, reads back as written', async () => {
    const whole: Preflight = { ...first, ...setup, sprints: [{ ...sprint, closableAt: 2 }], mappings };
    const preflight = await read({ entity: 'preflight', v: 1, ...whole });
    expect(preflight).toEqual(whole);
  });

  it('written today, is a tagged header and its manifest in tagged slices of 1,000, and reads back as written', async () => {
    const manifest = Array.from({ length: 1001 }, (_, i) => ({ id: i + 1, type: 'Bug', parentId: null }));
    const today: Preflight = {
      ...first,
      manifest,
      ...setup,
      sprints: [{ ...sprint, closableAt: 2 }],
      mappings,
    };
    await writePreflight(artifacts, { tenantId: run.tenantId, runId: run.id }, today);
    const { manifest: _inSlices, ...header } = today;
    expect(JSON.parse((await artifacts.get(key)) ?? 'missing')).toEqual({
      entity: 'preflight',
      v: 2,
      ...header,
      manifestSlices: { length: 1001, sliceItems: 1000 },
    });
    const slice = (n: number) => artifacts.get(artifactKeys.preflightSlice(run.tenantId, run.id, n));
    expect(JSON.parse((await slice(0)) ?? 'missing')).toEqual({
      entity: 'preflightSlice',
      v: 1,
      items: manifest.slice(0, 1000),
    });
    expect(JSON.parse((await slice(1)) ?? 'missing')).toEqual({
      entity: 'preflightSlice',
      v: 1,
      items: manifest.slice(1000),
    });
    expect(await loadPreflight(deps, run)).toEqual(today);
  });

  it('written today, whose slice is missing, short or does not read, is refused by the slice’s key', async () => {
    const manifest = Array.from({ length: 1500 }, (_, i) => ({ id: i + 1, type: 'Bug', parentId: null }));
    const ref = { tenantId: run.tenantId, runId: run.id };
    await writePreflight(artifacts, ref, { ...first, manifest, ...setup });
    const second = artifactKeys.preflightSlice(run.tenantId, run.id, 1);
    await artifacts.put(
      second,
      JSON.stringify({ entity: 'preflightSlice', v: 1, items: manifest.slice(1000, 1499) }),
    );
    await expect(loadPreflight(deps, run)).rejects.toThrowError(
      new StoredItemError(`preflightSlice ${second} holds 499 items, not 500`),
    );
    await artifacts.put(
      second,
      JSON.stringify({ entity: 'preflightSlice', v: 1, items: [{ id: 'ann@example.com' }] }),
    );
    await expect(loadPreflight(deps, run)).rejects.toThrowError(
      new StoredItemError(
        `preflightSlice ${second} does not read: items.0.id (invalid_type: expected number), ` +
          'items.0.type (invalid_type: expected string), items.0.parentId (invalid_type: expected number)',
      ),
    );
    await writePreflight(artifacts, ref, { ...first, manifest: manifest.slice(0, 1000), ...setup });
    await artifacts.put(
      key,
      JSON.stringify({
        entity: 'preflight',
        v: 2,
        ...first,
        manifest: undefined,
        ...setup,
        manifestSlices: { length: 1500, sliceItems: 1000 },
      }),
    );
    await rm(join(dir, second));
    await expect(loadPreflight(deps, run)).rejects.toThrowError(
      new StoredItemError(`preflightSlice ${second} is missing`),
    );
  });

  it('of version 1 but missing what version 1 wrote is refused, not upgraded', async () => {
    await expect(read({ entity: 'preflight', v: 1, ...first })).rejects.toThrowError(
      new StoredItemError(
        `preflight ${key} does not read: sprintFieldId (invalid_type: expected string), ` +
          'boardId (invalid_type: expected number), sprints (invalid_type: expected array), ' +
          'components (invalid_type: expected array)',
      ),
    );
  });

  it('that is not JSON is refused by its key, without quoting it', async () => {
    await artifacts.put(key, '{"users":{"ann@example.com":"acc-1"}');
    await expect(loadPreflight(deps, run)).rejects.toThrowError(
      new StoredItemError(`preflight ${key} is not JSON`),
    );
  });
});

describe('the dashboard connection', () => {
  const connection: DashboardConnection = {
    connectionId: 'conn-1',
    tenantId: 'tenant-1',
    userId: 'user-1',
    tokenVersion: 3,
    connectedAt: '2026-03-01T10:00:00.000Z',
    ttl: 1_772_366_400,
  };
  const keys = { pk: 'WSCONN#conn-1', sk: 'WSCONN' };

  it('stored before token versions were kept, reads as version 0 (it ends once its user changed)', () => {
    const { tokenVersion: _none, ...before } = connection;
    expect(DASHBOARD_CONNECTION.parse({ ...keys, ...before })).toEqual({ ...connection, tokenVersion: 0 });
  });

  it('stored today, reads back as it was written, without its keys', () => {
    expect(DASHBOARD_CONNECTION.parse({ ...keys, ...connection })).toEqual(connection);
  });
});
