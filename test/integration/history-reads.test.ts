/**
 * The history file's batched revision reads (functions/engine/phases/history-reads.ts) against the Azure DevOps
 * sandbox over HTTP: every item gets the revisions the per-item route answers, from one pass of the reporting
 * stream per window and no per-item call; a window that would hold too much shrinks and a later one reads the
 * rest; an item changed since the pass is read on its own. A gate between the client and the reader lets the
 * stream's batches through one at a time, so a test sees what units are answered while the stream is still read.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHUNK_SIZE, type Run } from '../../functions/domain/runs.ts';
import { PASS_ATTEMPTS, PASS_MIN_MS } from '../../functions/engine/phases/history-pass.ts';
import {
  historyRevisions,
  prepareHistoryReads,
  readHistoryAhead,
  type WindowLimits,
} from '../../functions/engine/phases/history-reads.ts';
import type { EngineDeps, RunPreflight } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { manifestInMemory } from '../../functions/phase-kit/manifest-slices.ts';
import { artifactKeys } from '../../functions/store/artifact-store.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts-disk.ts';
import { AdoClient, type AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { TrackerHttpError } from '../../functions/trackers/http.ts';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

let ado: AdoTestSandbox;
/** Artifacts of runs that made no pass (the first part's): an empty store. */
let noPass: DiskArtifactStore;
let noPassDir: string;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 120, seed: 21 });
  noPassDir = await mkdtemp(join(tmpdir(), 'history-no-pass-'));
  noPass = new DiskArtifactStore(noPassDir);
});
afterAll(async () => {
  await ado.close();
  await rm(noPassDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
});

/** The default window read as one stream from the beginning: a gate then sees its batches in change order. */
const ONE_STREAM: WindowLimits = { items: 1000, heldRevisions: 25_000, slices: 1 };

/** A fresh client (the engine has one per invocation, as it has one invocation scope, where a window lives). */
const client = () =>
  new AdoClient({
    organization: `${ado.url}/${ado.config.ado.org}`,
    project: ado.config.ado.project,
    token: ado.config.ado.pat,
  });

/** One invocation's scope per client: the engine opens its clients and its scope once per invocation. */
const scopes = new WeakMap<AdoClient, InvocationScope>();
const scopeOf = (source: AdoClient) => {
  const scope = scopes.get(source) ?? new InvocationScope();
  scopes.set(source, scope);
  return scope;
};

const ctxOf = (source: AdoClient, type: Run['type'] = 'FULL') => ({
  deps: { source, artifacts: noPass } as unknown as EngineDeps,
  run: { type, options: {}, tenantId: 'tenant-a', id: 'run-0' } as unknown as Run,
  preflight: {
    manifest: manifestInMemory(
      ado.state.world.workItems.map((i) => ({ id: i.id, type: i.type, parentId: null })),
    ),
  } as unknown as RunPreflight,
  invocation: scopeOf(source),
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

/** Each item got (in the same order) the revisions the per-item route answers. */
async function expectPerItemTruth(items: AdoWorkItem[], got: AdoWorkItem[][]) {
  const truth = await perItemTruth(
    client(),
    items.map((i) => i.id),
  );
  for (const [k, item] of items.entries())
    expect(revs(got[k]), `#${item.id}`).toEqual(revs(truth.get(item.id)));
}

const revs = (list: AdoWorkItem[] | undefined) => list?.map((r) => r.rev);

/**
 * The client's stream of revisions, each batch fetched from the sandbox as usual but handed to the reader only
 * once the test lets it through (`open`); `held` resolves when the reader waits for a batch not let through yet;
 * `fail` makes the next batch the reader asks for throw instead.
 */
function gate(source: AdoClient) {
  const real = source.reportingRevisions.bind(source);
  let allowed = 0;
  let failure: Error | undefined;
  let resume = () => {};
  let onHeld = () => {};
  source.reportingRevisions = async function* (filter) {
    for await (const batch of real(filter)) {
      while (allowed === 0 && !failure) {
        await new Promise<void>((r) => {
          resume = r;
          onHeld();
        });
      }
      if (failure) throw failure;
      allowed--;
      yield batch;
    }
  };
  return {
    open(batches = Number.POSITIVE_INFINITY) {
      allowed += batches;
      resume();
    },
    fail(err: Error) {
      failure = err;
      resume();
    },
    held: () => new Promise<void>((r) => (onHeld = r)),
  };
}

/** Whether each promise has settled, after everything already under way in this process has run. */
async function settled(promises: Promise<unknown>[]): Promise<boolean[]> {
  const done = promises.map(() => false);
  for (const [i, p] of promises.entries()) {
    const mark = () => {
      done[i] = true;
    };
    p.then(mark, mark);
  }
  await new Promise((r) => setImmediate(r));
  return done;
}

/** The items whose revisions the first `batches` batches of the stream bring whole, and those they do not. */
async function wholeAfter(batches: number, items: AdoWorkItem[]) {
  const seen = new Map<number, number>();
  let n = 0;
  for await (const batch of client().reportingRevisions()) {
    if (n++ === batches) break;
    for (const r of batch) seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
  }
  return {
    early: items.filter((i) => seen.get(i.id) === i.rev),
    late: items.filter((i) => seen.get(i.id) !== i.rev),
  };
}
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

  it('read the stream in spans of time side by side: the same revisions, no per-item call', async () => {
    const pass = Math.ceil((await totalRevisions(client())) / 200);
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const source = client();
    const asked: unknown[] = [];
    const read = source.reportingRevisions.bind(source);
    source.reportingRevisions = (filter) => {
      asked.push(filter);
      return read(filter);
    };
    const got = await readAll(source, { items: 1000, heldRevisions: 25_000, slices: 4 });
    // The window asked the client for its spans (how the client cuts them: tracker-clients.test.ts).
    expect(asked).toEqual([expect.objectContaining({ slices: 4 })]);
    const calls = await requests();
    const truth = await perItemTruth(client(), [...got.keys()]);
    for (const [id, list] of got) expect(revs(list), `#${id}`).toEqual(revs(truth.get(id)));
    expect(calls.perItem).toBe(0);
    // Each span ends in a part batch: at most one call more per span.
    expect(calls.batched).toBeGreaterThanOrEqual(pass);
    expect(calls.batched).toBeLessThanOrEqual(pass + 3);
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
    // The item is answered as soon as the stream brought it; the change comes once the whole pass is read.
    await readHistoryAhead(ctx, 0);
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

  it('answer an item as soon as the stream has brought its revisions whole, before the stream ends', async () => {
    const source = client();
    const ctx = ctxOf(source);
    const items = await source.workItems(ado.state.world.workItems.map((i) => i.id));
    const { early, late } = await wholeAfter(1, items);
    expect(early.length).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(0);
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const stream = gate(source);
    // Every item asks side by side (one window holds them all); the stream lets one batch through, then holds.
    const held = stream.held();
    stream.open(1);
    const asked = items.map((item) => historyRevisions(ctx, item, ONE_STREAM));
    await held;
    const answered = await settled(asked);
    const byId = new Map(items.map((item, k) => [item.id, answered[k]]));
    expect(early.map((i) => byId.get(i.id))).toEqual(early.map(() => true));
    expect(late.map((i) => byId.get(i.id))).toEqual(late.map(() => false));
    stream.open();
    const got = await Promise.all(asked);
    // One pass of the stream (120 items' revisions: 3 batches), no per-item call.
    expect(await requests()).toEqual({ perItem: 0, batched: 3 });
    await expectPerItemTruth(items, got);
  });

  it('answer the units of items a shrinking window gave up, from a later window', async () => {
    const total = await totalRevisions(client());
    const source = client();
    const ctx = ctxOf(source);
    const items = await source.workItems(ado.state.world.workItems.map((i) => i.id));
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    // Every item waits on the first window, which gives half of them up (60% of the revisions is all it holds).
    const got = await Promise.all(
      items.map((item) =>
        historyRevisions(ctx, item, { items: 1000, heldRevisions: Math.floor(total * 0.6) }),
      ),
    );
    const after = await requests();
    expect(after.perItem).toBe(0);
    expect(after.batched).toBeGreaterThan(Math.ceil(total / 200));
    await expectPerItemTruth(items, got);
  });

  it('hand a lost connection to the units still waiting, and answer them per item when the service refuses', async () => {
    const items = await client().workItems(ado.state.world.workItems.map((i) => i.id));
    const { early, late } = await wholeAfter(1, items);
    for (const [err, pending] of [
      [new Error('socket hang up'), 'rejected'],
      [new TrackerHttpError('source', 500, 'POST', '/wit/reporting/workitemrevisions', {}), 'per item'],
    ] as const) {
      const source = client();
      const ctx = ctxOf(source);
      const stream = gate(source);
      const held = stream.held();
      stream.open(1);
      const asked = items.map((item) => historyRevisions(ctx, item, ONE_STREAM));
      await held;
      await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
      stream.fail(err);
      const outcomes = await Promise.allSettled(asked);
      const byId = new Map(items.map((item, k) => [item.id, outcomes[k]!]));
      // What the stream brought whole before it broke is answered from it, whatever broke it.
      for (const item of early) expect(byId.get(item.id)?.status, `#${item.id}`).toBe('fulfilled');
      if (pending === 'rejected') {
        for (const item of late)
          expect(byId.get(item.id), `#${item.id}`).toEqual({ status: 'rejected', reason: err });
        expect(await requests()).toEqual({ perItem: 0, batched: 0 });
      } else {
        expect(await requests()).toEqual({ perItem: late.length, batched: 0 });
        const truth = await perItemTruth(
          client(),
          late.map((i) => i.id),
        );
        for (const item of late) {
          const outcome = byId.get(item.id);
          expect(outcome?.status, `#${item.id}`).toBe('fulfilled');
          if (outcome?.status === 'fulfilled') expect(revs(outcome.value)).toEqual(revs(truth.get(item.id)));
        }
      }
    }
  });

  it("read only a window's own items when the project spans several windows and no pass was made: one per-item call each, no stream", async () => {
    const source = client();
    const ctx = ctxOf(source);
    const limits = { items: CHUNK_SIZE, heldRevisions: 25_000 };
    const items = await source.workItems(ado.state.world.workItems.map((i) => i.id));
    expect(items.length).toBeGreaterThan(2 * CHUNK_SIZE);
    const window = items.slice(CHUNK_SIZE, 2 * CHUNK_SIZE);
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });

    await readHistoryAhead(ctx, CHUNK_SIZE, limits);
    const got = await Promise.all(window.map((item) => historyRevisions(ctx, item, limits)));

    const log = (await (await ado.call('/_sandbox/requests', { version: null })).json()) as {
      path: string;
    }[];
    const asked = log.flatMap((r) => {
      const id = /\/workitems\/(\d+)\/revisions/i.exec(r.path)?.[1];
      return id ? [Number(id)] : [];
    });
    expect(await requests()).toEqual({ perItem: window.length, batched: 0 });
    expect(asked.sort((a, b) => a - b)).toEqual(window.map((i) => i.id).sort((a, b) => a - b));
    await expectPerItemTruth(window, got);
  });
});

describe("a run spanning more windows than each may read the stream for: one pass into the windows' parts", () => {
  // Three windows of 50 over the 120 items; the pass writes its largest windows out at every 50,000 characters held.
  const limits: WindowLimits = { items: CHUNK_SIZE, heldRevisions: 25_000, slices: 1, flushChars: 50_000 };
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  let runs = 0;
  /** A context whose run has its own artifacts on disk (the pass writes there). */
  const passCtx = async (source = client()) => {
    const dir = await mkdtemp(join(tmpdir(), 'history-pass-'));
    dirs.push(dir);
    const artifacts = new DiskArtifactStore(dir);
    const ctx = {
      ...ctxOf(source),
      deps: { source, artifacts } as unknown as EngineDeps,
      run: { type: 'FULL', options: {}, tenantId: 'tenant-a', id: `run-${++runs}` } as unknown as Run,
    };
    return { ctx, artifacts };
  };
  /** The manifest's items as the source has them now, in manifest order (a unit's index is its position). */
  const manifestItems = () => client().workItems(ado.state.world.workItems.map((i) => i.id));
  const plenty = () => Number.POSITIVE_INFINITY;

  it('read the stream once, and give every item the revisions the per-item route answers from its window', async () => {
    const total = await totalRevisions(client());
    const items = await manifestItems();
    const { ctx, artifacts } = await passCtx();
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });

    expect(await prepareHistoryReads(ctx, plenty, limits)).toBe(true);
    expect(await requests()).toEqual({ perItem: 0, batched: Math.ceil(total / 200) });
    const index = JSON.parse(
      (await artifacts.get(artifactKeys.historyIndex(ctx.run.tenantId, ctx.run.id))) as string,
    ) as { parts: number[]; revisions: number[] };
    expect(index.parts).toHaveLength(3);
    expect(index.revisions.reduce((a, b) => a + b, 0)).toBe(total);
    // What it held was written out before the stream ended: some window has more than one part.
    expect(Math.max(...index.parts)).toBeGreaterThan(1);

    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    // Done: a later invocation's prepare reads nothing more from Azure DevOps.
    expect(await prepareHistoryReads(ctx, plenty, limits)).toBe(true);
    const got: AdoWorkItem[][] = [];
    for (let i = 0; i < items.length; i += CHUNK_SIZE) {
      await readHistoryAhead(ctx, i, limits);
      const chunk = items.slice(i, i + CHUNK_SIZE);
      got.push(...(await Promise.all(chunk.map((item, k) => historyRevisions(ctx, item, limits, i + k)))));
      // Never more than two windows held.
      const reader = ctx.invocation.held<{ windows: unknown[] }>('history-parts-reader');
      expect(reader?.windows.length).toBeLessThanOrEqual(2);
    }
    expect(await requests()).toEqual({ perItem: 0, batched: 0 });
    await expectPerItemTruth(items, got);
    // The text as Azure DevOps has it, characters past U+00FF included (the parts keep them as escapes).
    const truth = await perItemTruth(
      client(),
      items.map((i) => i.id),
    );
    const texts = (list: AdoWorkItem[] | undefined) =>
      list?.map((r) => [r.fields['System.Title'], r.fields['System.Description']]);
    for (const [k, item] of items.entries())
      expect(texts(got[k]), `#${item.id}`).toEqual(texts(truth.get(item.id)));
    expect(JSON.stringify(got.map(texts))).toMatch(/[\u0100-\uffff]/);
  });

  it('read an item changed since the pass, and one asked without its position, on its own', async () => {
    const { ctx } = await passCtx();
    expect(await prepareHistoryReads(ctx, plenty, limits)).toBe(true);
    const res = await ado.call('wit/workitems/2', {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      json: [{ op: 'add', path: '/fields/System.Title', value: 'Changed after the one pass' }],
    });
    expect(res.status).toBe(200);
    const items = await manifestItems();
    const at = items.findIndex((i) => i.id === 2);
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const list = await historyRevisions(ctx, items[at]!, limits, at);
    expect(revs(list)?.at(-1)).toBe(items[at]!.rev);
    expect(list.at(-1)?.fields['System.Title']).toBe('Changed after the one pass');
    const other = items.find((i) => i.id !== 2 && i.rev > 1)!;
    await historyRevisions(ctx, other, limits);
    expect(await requests()).toEqual({ perItem: 2, batched: 0 });
  });

  it('leave the pass to an invocation with the time for it, and give it up after starts that ran out of time', async () => {
    const { ctx, artifacts } = await passCtx();
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    // Too little time to start: the next invocation makes it (the runner answers "batch"), nothing read.
    expect(await prepareHistoryReads(ctx, () => PASS_MIN_MS - 1, limits)).toBe(false);
    expect(await requests()).toEqual({ perItem: 0, batched: 0 });
    // Each start runs out of time after the stream's first batch.
    for (let start = 1; start <= PASS_ATTEMPTS; start++) {
      let asked = 0;
      expect(await prepareHistoryReads(ctx, () => (asked++ === 0 ? PASS_MIN_MS : 0), limits)).toBe(false);
      expect((await requests()).batched).toBe(start);
    }
    // Given up: the phase goes on, each item read on its own.
    expect(await prepareHistoryReads(ctx, plenty, limits)).toBe(true);
    expect(await artifacts.get(artifactKeys.historyIndex(ctx.run.tenantId, ctx.run.id))).toBeUndefined();
    await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
    const items = (await manifestItems()).slice(0, 5);
    await Promise.all(items.map((item, k) => historyRevisions(ctx, item, limits, k)));
    expect(await requests()).toEqual({ perItem: 5, batched: 0 });
  });

  it('give the pass up when the service refuses the batched read, and fail the phase on a lost connection', async () => {
    for (const [err, answer] of [
      [new TrackerHttpError('source', 400, 'POST', '/wit/reporting/workitemrevisions', {}), 'per item'],
      [new Error('socket hang up'), 'thrown'],
    ] as const) {
      const source = client();
      const { ctx } = await passCtx(source);
      const stream = gate(source);
      stream.open(1);
      stream.fail(err);
      const prepared = prepareHistoryReads(ctx, plenty, limits);
      if (answer === 'thrown') {
        await expect(prepared).rejects.toBe(err);
        continue;
      }
      expect(await prepared).toBe(true);
      await ado.call('/_sandbox/requests', { method: 'DELETE', version: null });
      const [item] = await manifestItems();
      await historyRevisions(ctx, item!, limits, 0);
      expect(await requests()).toEqual({ perItem: 1, batched: 0 });
    }
  });
});
