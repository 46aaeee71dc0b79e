/**
 * The history file's batched revision reads (functions/engine/phases/history-reads.ts) against the Azure DevOps
 * sandbox over HTTP: every item gets the revisions the per-item route answers, from one pass of the reporting
 * stream per window and no per-item call; a window that would hold too much shrinks and a later one reads the
 * rest; an item changed since the pass is read on its own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHUNK_SIZE, type Run } from '../../functions/domain/runs.ts';
import {
  historyRevisions,
  readHistoryAhead,
  type WindowLimits,
} from '../../functions/engine/phases/history-reads.ts';
import type { EngineDeps, Preflight } from '../../functions/phase-kit/context.ts';
import { AdoClient, type AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 120, seed: 21 });
});
afterAll(() => ado.close());
beforeEach(async () => {
  await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
});

/** A fresh client (the engine has one per invocation, and a window lives with it). */
const client = () =>
  new AdoClient({
    organization: `${ado.url}/${ado.config.ado.org}`,
    project: ado.config.ado.project,
    token: ado.config.ado.pat,
  });

const ctxOf = (source: AdoClient, type: Run['type'] = 'FULL') => ({
  deps: { source } as unknown as EngineDeps,
  run: { type, options: {} } as unknown as Run,
  preflight: {
    manifest: ado.state.world.workItems.map((i) => ({ id: i.id, type: i.type, parentId: null })),
  } as unknown as Preflight,
});

async function requests(): Promise<{ perItem: number; batched: number }> {
  const log = (await (await ado.call('/_sandbox/requests', { version: null })).json()) as { path: string }[];
  return {
    perItem: log.filter((r) => /\/workitems\/\d+\/revisions/i.test(r.path)).length,
    batched: log.filter((r) => /\/reporting\/workitemrevisions/i.test(r.path)).length,
  };
}

/** Every item's history revisions, chunk by chunk as phase 5 asks (a chunk's items side by side). */
async function readAll(source: AdoClient, limits?: WindowLimits, type: Run['type'] = 'FULL') {
  const ctx = ctxOf(source, type);
  const items = await source.workItems(ado.state.world.workItems.map((i) => i.id));
  const out = new Map<number, AdoWorkItem[]>();
  for (let i = 0; i < items.length; i += CHUNK_SIZE) {
    const chunk = items.slice(i, i + CHUNK_SIZE);
    const got = await Promise.all(chunk.map((item) => historyRevisions(ctx, item, limits)));
    for (const [k, item] of chunk.entries()) out.set(item.id, got[k]!);
  }
  return out;
}

async function perItemTruth(source: AdoClient, ids: number[]) {
  return new Map(await Promise.all(ids.map(async (id) => [id, await source.revisions(id)] as const)));
}

const revs = (list: AdoWorkItem[] | undefined) => list?.map((r) => r.rev);
const totalRevisions = async (source: AdoClient) => {
  let n = 0;
  for await (const batch of source.reportingRevisions()) n += batch.length;
  return n;
};

describe('batched history reads', () => {
  it('give each item its revisions from one pass of the stream per window, with no per-item call', async () => {
    const got = await readAll(client(), { items: 1000, heldRevisions: 25_000 });
    const calls = await requests();
    const truth = await perItemTruth(client(), [...got.keys()]);
    for (const [id, list] of got) {
      expect(revs(list), `#${id}`).toEqual(revs(truth.get(id)));
      // The same fields as the per-item route, but the reporting API's bookkeeping ones.
      expect(list.at(-1)?.fields['System.Title']).toEqual(truth.get(id)?.at(-1)?.fields['System.Title']);
    }
    expect(calls.perItem).toBe(0);
    expect(calls.batched).toBe(Math.ceil((await totalRevisions(client())) / 200));
  });

  it('shrink a window that would hold too much: a later window reads the items it gave up', async () => {
    const total = await totalRevisions(client());
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    // All 120 items in one window would hold every revision; 60% of them is the most it may hold.
    const got = await readAll(client(), { items: 1000, heldRevisions: Math.floor(total * 0.6) });
    const calls = await requests();
    const truth = await perItemTruth(client(), [...got.keys()]);
    for (const [id, list] of got) expect(revs(list), `#${id}`).toEqual(revs(truth.get(id)));
    expect(calls.perItem).toBe(0);
    // More than one pass (the window gave items up), far fewer calls than items.
    expect(calls.batched).toBeGreaterThan(Math.ceil(total / 200));
    expect(calls.batched).toBeLessThan(got.size / 4);
  });

  it('read ahead: the window of a position and, half way through it, the next, so no item waits for them', async () => {
    const total = await totalRevisions(client());
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const source = client();
    const ctx = ctxOf(source);
    const limits = { items: 60, heldRevisions: 25_000 };
    const pass = Math.ceil(total / 200);
    // Position 10 is in the first half of its window (0-59): that window alone.
    await readHistoryAhead(ctx, 10, limits);
    expect((await requests()).batched).toBe(pass);
    // Position 30 is half way: the next window (60-119) is read too, before any of its items asks.
    await readHistoryAhead(ctx, 30, limits);
    expect((await requests()).batched).toBe(2 * pass);
    const got = await readAll(source, limits);
    expect(await requests()).toEqual({ perItem: 0, batched: 2 * pass });
    const truth = await perItemTruth(client(), [...got.keys()]);
    for (const [id, list] of got) expect(revs(list), `#${id}`).toEqual(revs(truth.get(id)));
    // An incremental run reads no revisions in batches, ahead or not.
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    await readHistoryAhead(ctxOf(client(), 'INCREMENTAL'), 0, limits);
    expect(await requests()).toEqual({ perItem: 0, batched: 0 });
  });

  it('read an item changed since the pass on its own, and every item of an incremental run', async () => {
    const source = client();
    const ctx = ctxOf(source);
    const [first] = await source.workItems([1]);
    await historyRevisions(ctx, first!);
    const res = await ado.call('wit/workitems/1', {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      json: [{ op: 'add', path: '/fields/System.Title', value: 'Changed after the pass' }],
    });
    expect(res.status).toBe(200);
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const [changed] = await source.workItems([1]);
    const list = await historyRevisions(ctx, changed!);
    expect(revs(list)?.at(-1)).toBe(changed!.rev);
    expect(list.at(-1)?.fields['System.Title']).toBe('Changed after the pass');
    expect(await requests()).toEqual({ perItem: 1, batched: 0 });

    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const incremental = await readAll(client(), undefined, 'INCREMENTAL');
    expect(await requests()).toEqual({ perItem: incremental.size, batched: 0 });
  });
});
