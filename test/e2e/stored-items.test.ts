/**
 * Items are parsed on read, and the long-lived ones carry their entity and schema version: a run over the
 * sandboxes writes its run item, the project's id map entries and the preflight artifact tagged, and each reads
 * back through the store as exactly what it holds, without its keys, tag or version (the preflight: its header
 * and its manifest's one slice).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { keys, TABLE_KEYS } from '../../functions/store/keys.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 12, seed: 5 });
});
afterAll(async () => {
  await h.close();
});

/** What an item holds beside the storage attributes: keys, index keys, tag and version. */
function held(item: Record<string, unknown>): Record<string, unknown> {
  const storage = new Set<string>([
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    TABLE_KEYS.gsi1.partitionKey,
    TABLE_KEYS.gsi1.sortKey,
    'entity',
    'v',
  ]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => !storage.has(name)));
}

describe('a run written by today’s code', () => {
  it('leaves its run item, id map entries and preflight artifact tagged, and each reads back as it holds', async () => {
    const { app, tenant: t } = h;
    const project = await h.newProject('Tagged');
    const run = await createRun(app.store, t.tenantId, project.id, 'FULL');
    const deps = h.deps();
    expect((await h.drive(run.id, deps)).at(-1)).toBe('done');

    const runItem = (
      await app.store.table.db.send(
        new GetCommand({
          TableName: app.store.table.name,
          Key: keys.run(t.tenantId, run.id),
          ConsistentRead: true,
        }),
      )
    ).Item as Record<string, unknown>;
    expect(runItem).toMatchObject({ entity: 'run', v: 1, status: 'COMPLETED' });
    expect(await app.store.runs.get(t.tenantId, run.id)).toEqual(held(runItem));

    const idMap = keys.idMapPrefix(t.tenantId, project.id);
    const entryItems = (
      await app.store.table.db.send(
        new QueryCommand({
          TableName: app.store.table.name,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
          ExpressionAttributeValues: { ':pk': idMap.pk, ':sk': idMap.skPrefix },
          ConsistentRead: true,
        }),
      )
    ).Items as Record<string, unknown>[];
    expect(entryItems.length).toBeGreaterThan(0);
    for (const item of entryItems) expect(item).toMatchObject({ entity: 'idMapEntry', v: 1 });
    expect(await app.store.idMap.all(t.tenantId, project.id)).toEqual(entryItems.map(held));

    const artifact = JSON.parse(
      (await deps.artifacts.get(artifactKeys.preflight(t.tenantId, run.id))) ?? 'null',
    ) as Record<string, unknown>;
    expect(artifact).toMatchObject({ entity: 'preflight', v: 2, projectKey: h.config.jira.projectKey });
    const { manifestSlices, ...header } = held(artifact);
    const slice = JSON.parse(
      (await deps.artifacts.get(artifactKeys.preflightSlice(t.tenantId, run.id, 0))) ?? 'null',
    ) as { items: unknown[] };
    expect(slice).toMatchObject({ entity: 'preflightSlice', v: 1 });
    expect(manifestSlices).toEqual({ length: slice.items.length, sliceItems: 1000 });
    expect(slice.items.length).toBeGreaterThan(0);
    expect(await loadPreflight(deps, run)).toEqual({ ...header, manifest: slice.items });
  });
});
