/** The stream loop with a fake clock, a fake sleep and an in-memory event list: no table, no timers. */
import { describe, expect, it } from 'vitest';
import { chunkEventId, type RunEvent, statusEventId } from '../../functions/domain/run-events.ts';
import type { RunStatus } from '../../functions/domain/runs.ts';
import { sseComment, sseMessage, sseRetry } from '../../functions/domain/sse.ts';
import { type RunStreamOptions, streamRun } from '../../functions/services/run-stream.ts';
import type { StoredRunEvent } from '../../functions/store/runs.ts';

interface World {
  events: StoredRunEvent[];
  run: { status: RunStatus; finishedAt: string | null } | undefined;
  now: number;
  written: string[];
  /** The write calls (a piece may hold many messages). */
  writes: number;
  reads: number;
  /** The watcher's session: false once their user is removed or their token version moved. */
  session: boolean;
  /** Called at each sleep, with the world: a test changes the world "while the stream waits". */
  onSleep?: (w: World, n: number) => void;
}

const ev = (id: string, event: RunEvent): StoredRunEvent => ({ id, event, at: '' });
const log = (message: string): RunEvent => ({ type: 'log', message });
const STATS = { created: 0, skipped: 0, failed: 0 };

function fake(world: World, opts: Partial<RunStreamOptions> = {}) {
  let sleeps = 0;
  const controller = new AbortController();
  const io = {
    readEvents: async (after: string | undefined, pageSize: number) => {
      world.reads += 1;
      return world.events.filter((e) => after === undefined || e.id > after).slice(0, pageSize);
    },
    readRun: async () => world.run,
    write: (text: string) => {
      world.writes += 1;
      // One entry a message (or comment): the loop writes a page's messages in pieces.
      world.written.push(...text.split(/(?<=\n\n)/));
    },
    sleep: async (ms: number) => {
      world.now += ms;
      sleeps += 1;
      world.onSleep?.(world, sleeps);
      if (sleeps > 1000) controller.abort();
    },
    now: () => world.now,
    sessionHolds: async () => world.session,
  };
  const options: RunStreamOptions = {
    pollMs: 500,
    heartbeatMs: 15_000,
    settleMs: 3_000,
    pageSize: 2,
    signal: controller.signal,
    ...opts,
  };
  return { run: () => streamRun(io, options), controller };
}

const newWorld = (over: Partial<World> = {}): World => ({
  events: [],
  run: { status: 'RUNNING', finishedAt: null },
  now: 1_000_000,
  written: [],
  writes: 0,
  reads: 0,
  session: true,
  ...over,
});

describe('sse wire format', () => {
  it('writes id, event and one data line with the type repeated', () => {
    expect(sseMessage('02.00000000.0001', { type: 'status', status: 'completed' })).toBe(
      'id: 02.00000000.0001\nevent: status\ndata: {"type":"status","status":"completed"}\n\n',
    );
    expect(sseMessage('1', log('a\nb'))).toBe(
      'id: 1\nevent: log\ndata: {"type":"log","message":"a\\nb"}\n\n',
    );
    expect(sseComment('ping')).toBe(': ping\n\n');
    expect(sseRetry(2000)).toBe('retry: 2000\n\n');
  });
});

describe('streamRun', () => {
  it('pages through the history (a full page is read again at once) and ends after done', async () => {
    const events = [
      ev('a', log('1')),
      ev('b', log('2')),
      ev('c', log('3')),
      ev('d', { type: 'done', stats: { created: 3, skipped: 0, failed: 0 } }),
    ];
    const world = newWorld({ events });
    expect(await fake(world).run()).toBe('done');
    expect(world.written).toEqual(events.map((e) => sseMessage(e.id, e.event)));
  });

  it('goes past a `done` that later events follow (a finished run verified since), to the last `done`', async () => {
    const summary = {
      itemsChecked: 2,
      fullyFaithful: 2,
      differencesByField: {},
      itemsWithNotes: 0,
      unverified: 0,
    };
    const world = newWorld({
      run: { status: 'VERIFYING', finishedAt: '2026-12-07T05:00:00.000Z' },
      events: [
        ev('a', { type: 'status', status: 'completed' }),
        ev('b', { type: 'done', stats: STATS }),
        ev('c', { type: 'status', status: 'verifying' }),
      ],
      onSleep: (w, n) => {
        if (n !== 2) return;
        w.events.push(
          ev('d', { type: 'verification', summary }),
          ev('e', { type: 'status', status: 'completed' }),
          ev('f', { type: 'done', stats: STATS }),
        );
        w.run = { status: 'COMPLETED', finishedAt: '2026-12-07T05:00:00.000Z' };
      },
    });
    expect(await fake(world).run()).toBe('done');
    expect(world.written.map((t) => t.split('\n')[0])).toEqual(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => `id: ${id}`),
    );
  });

  it("ends with a cancelled run's `done`: the log lines of a chunk under way at the cancel, written after it, are not sent", async () => {
    const world = newWorld({
      run: { status: 'CANCELLED', finishedAt: '2026-12-07T05:00:00.000Z' },
      events: [
        ev('a', log('1')),
        ev('b', { type: 'status', status: 'cancelled' }),
        ev('c', { type: 'done', stats: STATS }),
        ev('d', log('#7 Task -> MIG-7 (its chunk finishing)')),
      ],
    });
    expect(await fake(world).run()).toBe('done');
    expect(world.written.map((t) => t.split('\n')[0])).toEqual(['a', 'b', 'c'].map((id) => `id: ${id}`));
  });

  it("writes a page's messages in pieces of about 32 KB, not a write an event, in order and whole", async () => {
    const lines = Array.from({ length: 3_000 }, (_, n) =>
      ev(chunkEventId(2, Math.floor(n / 50), n % 50), log(`#${n} Task -> MIG-${n}`)),
    );
    const events = [...lines, ev(statusEventId(8, 0, 1), { type: 'done', stats: STATS })];
    const world = newWorld({ events });
    expect(await fake(world, { pageSize: 1_000 }).run()).toBe('done');
    expect(world.written).toEqual(events.map((e) => sseMessage(e.id, e.event)));
    const bytes = events.reduce((n, e) => n + sseMessage(e.id, e.event).length, 0);
    // Three pages of 1,000 and one of the last event: a few pieces each, ending on a message's boundary.
    expect(world.writes).toBeLessThanOrEqual(Math.ceil(bytes / (32 * 1024)) + 4);
    expect(world.writes).toBeGreaterThan(1);
  });

  it('resumes after lastEventId', async () => {
    const world = newWorld({
      events: [
        ev('a', log('1')),
        ev('b', log('2')),
        ev('c', { type: 'done', stats: { created: 0, skipped: 0, failed: 0 } }),
      ],
    });
    await fake(world, { lastEventId: 'a' }).run();
    expect(world.written.map((t) => t.split('\n')[0])).toEqual(['id: b', 'id: c']);
  });

  it("sends what is written at a place it has reached after it: a resume's first lines after its status", async () => {
    // Ids sort by the run's place (phase, unit index), then within it. A resume tells `running` at the place the
    // pause left; the first chunk after it writes its lines at that same place, with ids sorting before the status.
    const world = newWorld({
      events: [
        ev(chunkEventId(4, 0, 0), log('item 1 done')),
        ev(statusEventId(4, 50, 1), { type: 'status', status: 'paused' }),
        ev(statusEventId(4, 50, 2), { type: 'status', status: 'running' }),
      ],
      onSleep: (w, n) => {
        if (n === 1) w.events.push(ev(chunkEventId(4, 50, 0), log('item 51 done')));
        if (n === 2) w.events.push(ev(statusEventId(4, 100, 3), { type: 'done', stats: STATS }));
        w.events.sort((a, b) => (a.id < b.id ? -1 : 1));
      },
    });
    expect(await fake(world).run()).toBe('done');
    expect(world.written.map((t) => t.split('\n')[0])).toEqual([
      `id: ${chunkEventId(4, 0, 0)}`,
      `id: ${statusEventId(4, 50, 1)}`,
      `id: ${statusEventId(4, 50, 2)}`,
      `id: ${chunkEventId(4, 50, 0)}`,
      `id: ${statusEventId(4, 100, 3)}`,
    ]);
  });

  it('sends a heartbeat once nothing was written for heartbeatMs, and only then', async () => {
    const world = newWorld({
      onSleep: (w, n) => {
        if (n === 41) w.run = { status: 'CANCELLED', finishedAt: new Date(0).toISOString() };
      },
    });
    await fake(world, { heartbeatMs: 5_000 }).run();
    // 41 sleeps of 500 ms, 20.5 s of silence: a ping at 5, 10, 15 and 20 s.
    expect(world.written).toEqual([
      sseComment('ping'),
      sseComment('ping'),
      sseComment('ping'),
      sseComment('ping'),
    ]);
  });

  it('waits out the settle window after the end for the trailing events, then ends', async () => {
    const finishedAt = 1_000_000;
    const world = newWorld({
      now: finishedAt,
      run: { status: 'COMPLETED', finishedAt: new Date(finishedAt).toISOString() },
      // The engine writes the final status a moment after moving the run's status.
      onSleep: (w, n) => {
        if (n === 2) w.events.push(ev('z', { type: 'status', status: 'completed' }));
      },
    });
    expect(await fake(world).run()).toBe('finished');
    expect(world.written).toEqual([sseMessage('z', { type: 'status', status: 'completed' })]);
    expect(world.now - finishedAt).toBeGreaterThanOrEqual(3_000);
  });

  it('ends at once for a run long over with nothing left to send', async () => {
    const world = newWorld({ run: { status: 'FAILED', finishedAt: new Date(0).toISOString() } });
    expect(await fake(world).run()).toBe('finished');
    expect(world.reads).toBe(1);
  });

  it('ends when the run is gone, when the client has gone, and before the invocation runs out', async () => {
    expect(await fake(newWorld({ run: undefined })).run()).toBe('gone');

    const closing = fake(newWorld());
    closing.controller.abort();
    expect(await closing.run()).toBe('closed');

    let remaining = 10_000;
    const world = newWorld({
      onSleep: () => {
        remaining -= 500;
      },
    });
    expect(await fake(world, { remainingMs: () => remaining }).run()).toBe('deadline');
    // The first check that finds less than two polls' time left ends it.
    expect(remaining).toBe(500);
  });

  it("ends when the watcher's session ends, without sending what it read after", async () => {
    const world = newWorld({
      events: [ev('a', log('before'))],
      onSleep: (w, n) => {
        // Removed while the stream waits; an event is written in the same moment.
        if (n === 3) {
          w.session = false;
          w.events.push(ev('b', log('after')));
        }
      },
    });
    expect(await fake(world).run()).toBe('revoked');
    expect(world.written).toEqual([sseMessage('a', log('before'))]);
  });
});
