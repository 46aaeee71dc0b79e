/**
 * The run reports over a real store (DynamoDB Local) and the disk artifact store: contents exactly, CSV
 * escaping, (item, phase) groups cut by page ends, and the same reports whatever the page size.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField } from '../../functions/domain/csv.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { writePreview, writeRunReports } from '../../functions/engine/reports.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import { keys } from '../../functions/store/keys.ts';
import { idMapEntry } from '../support/id-map.ts';
import { createRun } from '../support/runs.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;
let deps: EngineDeps;
const dir = mkdtempSync(join(tmpdir(), 'tms-reports-unit-'));
const tenantId = randomUUID();
const projectId = randomUUID();

beforeAll(async () => {
  ({ db, store } = await freshTable());
  // The reports need the store and the artifacts only; never a tracker, nor the run journal.
  deps = {
    store,
    journal: {} as never,
    artifacts: new DiskArtifactStore(dir),
    source: {} as never,
    target: {} as never,
    indexLagMs: 0,
    pluginDefinitions: [],
  };
});
afterAll(() => {
  db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const entry = idMapEntry;

async function reports(run: Run) {
  const get = async (key: string) => (await deps.artifacts.get(key)) ?? 'missing';
  return {
    json: await get(artifactKeys.failureReport(run.tenantId, run.id)),
    csv: await get(artifactKeys.failureReportCsv(run.tenantId, run.id)),
    idMap: await get(artifactKeys.idMapExport(run.tenantId, run.id)),
  };
}

describe('run reports', () => {
  it('list every failed item per phase with all its reasons, type, key; and export the id map', async () => {
    const run = await createRun(store, tenantId, projectId, 'FULL');
    await deps.artifacts.put(
      artifactKeys.preflight(tenantId, run.id),
      JSON.stringify({
        manifest: [
          { id: 3, type: 'Epic', parentId: null },
          { id: 5, type: 'User Story', parentId: 3 },
          { id: 9, type: 'Bug', parentId: null },
          { id: 12, type: 'Task', parentId: 5 },
        ],
        plugins: ['time-logs'],
        // The rest of a preflight, which the reports do not read.
        projectKey: 'MIG',
        typeMap: {},
        typeLevels: {},
        storyPointsFieldId: null,
        priorityNames: [],
        users: {},
        unmappedUsers: [],
        warnings: [],
      }),
    );
    await store.idMap.putMany(tenantId, projectId, [
      entry(5, 'User Story', 1),
      entry(9, 'Bug', 2, { origin: 'found', runId: 'run-0' }),
      entry(12, 'Task', 3, { runId: run.id }),
    ]);
    const fail = (sourceId: number, phase: number, reason: string, at: string) =>
      store.runFailures.record(tenantId, projectId, run.id, {
        sourceId,
        phase,
        reason,
        at: `2026-01-01T${at}Z`,
      });
    // Recorded out of order: the report orders items, then phases, then reasons by time.
    await fail(9, 8, 'worklog: "2h" refused, retry later', '10:09:00.000');
    await fail(5, 4, 'Relates MIG-9: refused', '10:05:02.000');
    await fail(3, 2, '=HYPERLINK("x"): summary refused', '10:02:00.000');
    await fail(5, 3, 'its Azure DevOps parent #3 was not created in Jira', '10:03:00.000');
    await fail(5, 4, 'Blocks MIG-2: refused', '10:05:01.000');

    await writeRunReports(deps, run);
    const { json, csv, idMap } = await reports(run);
    expect(JSON.parse(json)).toEqual({
      runId: run.id,
      projectId,
      failures: [
        {
          sourceId: 3,
          sourceType: 'Epic',
          phase: 2,
          phaseName: 'create',
          reasons: ['=HYPERLINK("x"): summary refused'],
          targetKey: null,
        },
        {
          sourceId: 5,
          sourceType: 'User Story',
          phase: 3,
          phaseName: 'hierarchy',
          reasons: ['its Azure DevOps parent #3 was not created in Jira'],
          targetKey: 'MIG-1',
        },
        {
          sourceId: 5,
          sourceType: 'User Story',
          phase: 4,
          phaseName: 'links',
          reasons: ['Blocks MIG-2: refused', 'Relates MIG-9: refused'],
          targetKey: 'MIG-1',
        },
        {
          sourceId: 9,
          sourceType: 'Bug',
          phase: 8,
          phaseName: 'plugin:time-logs',
          reasons: ['worklog: "2h" refused, retry later'],
          targetKey: 'MIG-2',
        },
      ],
    });
    expect(csv).toBe(
      [
        'source_id,source_type,phase,phase_name,reasons,target_key',
        `3,Epic,2,create,"'=HYPERLINK(""x""): summary refused",`,
        '5,User Story,3,hierarchy,its Azure DevOps parent #3 was not created in Jira,MIG-1',
        '5,User Story,4,links,Blocks MIG-2: refused | Relates MIG-9: refused,MIG-1',
        '9,Bug,8,plugin:time-logs,"worklog: ""2h"" refused, retry later",MIG-2',
        '',
      ].join('\r\n'),
    );
    expect(idMap).toBe(
      [
        'source_id,source_type,target_key,origin,run_id',
        '5,User Story,MIG-1,created,run-a',
        '9,Bug,MIG-2,found,run-0',
        `12,Task,MIG-3,created,${run.id}`,
        '',
      ].join('\r\n'),
    );

    // A page of one or two items cuts the (5, links) group and every other: the reports stay the same.
    for (const pageSize of [1, 2, 3]) {
      await writeRunReports(deps, run, { pageSize });
      expect(await reports(run)).toEqual({ json, csv, idMap });
    }
  });

  it('are written, empty but well-formed, for a run without failures in a project without items', async () => {
    const run = await createRun(store, tenantId, randomUUID(), 'FULL', { dryRun: true });
    await writeRunReports(deps, run);
    const { json, csv, idMap } = await reports(run);
    expect(JSON.parse(json)).toEqual({ runId: run.id, projectId: run.projectId, failures: [] });
    expect(csv).toBe('source_id,source_type,phase,phase_name,reasons,target_key\r\n');
    expect(idMap).toBe('source_id,source_type,target_key,origin,run_id\r\n');
  });
});

describe('the dry-run preview', () => {
  it('counts what a real run would do from the id map a page of items at a time, and streams the warnings out', async () => {
    const project = randomUUID();
    const run = await createRun(store, tenantId, project, 'FULL', { dryRun: true });
    await deps.artifacts.put(
      artifactKeys.preflight(tenantId, run.id),
      JSON.stringify({
        manifest: [
          { id: 3, type: 'Epic', parentId: null },
          { id: 5, type: 'User Story', parentId: 3 },
          { id: 9, type: 'Bug', parentId: null },
          { id: 12, type: 'User Story', parentId: 3 },
          { id: 14, type: 'Bug', parentId: null },
        ],
        typeMap: {
          Epic: { id: '1', name: 'Epic' },
          'User Story': { id: '2', name: 'Story' },
          Bug: { id: '3', name: 'Bug' },
        },
        unmappedUsers: ['ghost@contoso.com'],
        warnings: ['#7: undated iteration'],
        sprints: [],
        components: [{ name: 'Web', id: null, areaPaths: ['Contoso\\Web'], created: true }],
        plugins: [],
        // The rest of a preflight, which the preview does not read.
        projectKey: 'MIG',
        typeLevels: {},
        storyPointsFieldId: null,
        priorityNames: [],
        users: {},
      }),
    );
    await store.idMap.putMany(tenantId, project, [entry(5, 'User Story', 1), entry(14, 'Bug', 2)]);
    // Three checkpoint moves' warnings, as the run journal keeps them.
    for (const [move, messages] of [
      ['0002-00000', ['#5: no story points field']],
      ['0004-00000', ['#9: link to #99 outside the project', '#12: link to #98 outside the project']],
      ['0005-00000', ['#14: attachment too large']],
    ] as const)
      await db.send(
        new PutCommand({
          TableName: store.table.name,
          Item: {
            ...keys.runWarnings(tenantId, project, run.id, move),
            messages,
            at: '2026-01-01T10:00:00.000Z',
          },
        }),
      );
    // What the preview reads and how it writes, seen through the store and the artifact store it is given.
    const idMapAsks: number[] = [];
    const written: string[] = [];
    const watched: EngineDeps = {
      ...deps,
      store: {
        ...store,
        idMap: Object.assign(Object.create(store.idMap), {
          getMany: (t: string, p: string, ids: number[]) => {
            idMapAsks.push(ids.length);
            return store.idMap.getMany(t, p, ids);
          },
        }),
      },
      artifacts: {
        get: (key) => deps.artifacts.get(key),
        put: (key, body) => {
          written.push(`put ${key.split('/').at(-1)}`);
          return deps.artifacts.put(key, body);
        },
        putStream: (key, body) => {
          written.push(`stream ${key.split('/').at(-1)}`);
          return deps.artifacts.putStream(key, body);
        },
        remove: (keys) => deps.artifacts.remove(keys),
        removeUnder: (prefix) => deps.artifacts.removeUnder(prefix),
      },
    };

    await writePreview(watched, run, { pageSize: 2 });

    expect(idMapAsks).toEqual([2, 2, 1]);
    expect(written).toEqual(['stream preview.json']);
    const preview = JSON.parse(
      (await deps.artifacts.get(artifactKeys.preview(tenantId, run.id))) ?? 'missing',
    );
    expect(preview).toEqual({
      runId: run.id,
      type: 'FULL',
      totalItems: 5,
      countsPerType: { Epic: 1, 'User Story': 2, Bug: 2 },
      wouldCreate: 3,
      alreadyInJira: 2,
      wouldUpdate: 0,
      mapping: { types: { Epic: 'Epic', 'User Story': 'Story', Bug: 'Bug' } },
      unmappedUsers: ['ghost@contoso.com'],
      warnings: [
        '#7: undated iteration',
        '#5: no story points field',
        '#9: link to #99 outside the project',
        '#12: link to #98 outside the project',
        '#14: attachment too large',
      ],
      sprints: [],
      components: [{ name: 'Web', areaPaths: ['Contoso\\Web'], action: 'create' }],
    });
  });
});

describe('CSV fields', () => {
  it('quote separators, quotes and line breaks, and defuse formulas', () => {
    expect(csvField('plain text')).toBe('plain text');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('-2')).toBe("'-2");
    expect(csvField(-2)).toBe('-2');
    expect(csvField(null)).toBe('');
  });
});
