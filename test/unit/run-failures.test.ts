/**
 * Run failures keep every reason (per item, phase and reason), and the id map reads a page at a time: both
 * against DynamoDB Local, on a table of this file's own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { IdMapEntry } from '../../functions/store/id-map.ts';
import type { Store } from '../../functions/store/index.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;
const tenantId = randomUUID();
const projectId = randomUUID();

beforeAll(async () => {
  ({ db, store } = await freshTable());
});
afterAll(() => db?.destroy());

describe('run failures', () => {
  it('keep a later failure of the same item in another phase beside the earlier one', async () => {
    const runId = randomUUID();
    const first = { sourceId: 42, phase: 2, reason: 'summary: too long', at: '2026-01-01T10:00:00.000Z' };
    const later = {
      sourceId: 42,
      phase: 5,
      reason: 'big.zip is over the limit',
      at: '2026-01-01T10:05:00.000Z',
    };
    expect(await store.runFailures.record(tenantId, projectId, runId, first)).toBe(true);
    expect(await store.runFailures.record(tenantId, projectId, runId, later)).toBe(true);
    expect(await store.runFailures.list(tenantId, projectId, runId)).toEqual([first, later]);
  });

  it('keep several reasons of one item in one phase, and the same reason once (its first time)', async () => {
    const runId = randomUUID();
    const a = { sourceId: 7, phase: 4, reason: 'Blocks MIG-2: refused', at: '2026-01-01T10:00:00.000Z' };
    const b = { sourceId: 7, phase: 4, reason: 'Relates MIG-3: refused', at: '2026-01-01T10:00:01.000Z' };
    expect(await store.runFailures.record(tenantId, projectId, runId, a)).toBe(true);
    expect(await store.runFailures.record(tenantId, projectId, runId, b)).toBe(true);
    // The chunk worked again after a crash records the same reason again: kept once, with its first time.
    expect(
      await store.runFailures.record(tenantId, projectId, runId, { ...a, at: '2026-01-01T11:00:00.000Z' }),
    ).toBe(false);
    const listed = await store.runFailures.list(tenantId, projectId, runId);
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(expect.arrayContaining([a, b]));
  });

  it('list by item, then phase, across pages, and never another run', async () => {
    const runId = randomUUID();
    const other = randomUUID();
    const recorded = [];
    for (const sourceId of [300, 5, 1200]) {
      for (const phase of [6, 2, 3]) {
        const f = { sourceId, phase, reason: `#${sourceId} in ${phase}`, at: '2026-01-01T10:00:00.000Z' };
        recorded.push(f);
        await store.runFailures.record(tenantId, projectId, runId, f);
      }
    }
    await store.runFailures.record(tenantId, projectId, other, { ...(recorded[0] as (typeof recorded)[0]) });
    const expected = [...recorded].sort((x, y) => x.sourceId - y.sourceId || x.phase - y.phase);
    expect(await store.runFailures.list(tenantId, projectId, runId)).toEqual(expected);
    const pages = [];
    for await (const page of store.runFailures.pages(tenantId, projectId, runId, 4)) pages.push(page);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 1]);
    expect(pages.flat()).toEqual(expected);
  });
});

describe('the id map, a page at a time', () => {
  it('yields every entry once, in source id order, without storage keys', async () => {
    const project = randomUUID();
    const entries: IdMapEntry[] = Array.from({ length: 230 }, (_, i) => ({
      sourceId: 1000 - i * 3,
      targetKey: `MIG-${i + 1}`,
      targetId: String(10000 + i),
      sourceType: i % 2 ? 'Bug' : 'User Story',
      origin: i % 5 ? 'created' : 'found',
      runId: 'run-1',
      phasesDone: [2],
      updatedAt: '2026-01-01T10:00:00.000Z',
    }));
    await store.idMap.putMany(tenantId, project, entries);
    const pages: IdMapEntry[][] = [];
    for await (const page of store.idMap.pages(tenantId, project, 100)) pages.push(page);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 30]);
    expect(pages.flat()).toEqual([...entries].sort((a, b) => a.sourceId - b.sourceId));
  });
});
