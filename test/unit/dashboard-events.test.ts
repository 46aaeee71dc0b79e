/**
 * The dashboard protocol's pure parts (functions/domain/dashboard-events.ts) and the notifier's promises
 * (functions/adapters/run-events.ts): the ping route's answers, progress at most once a second per run, frames of
 * a run sent in order, and a failing post never thrown to the run; a tracker's wait told through the run journal.
 */
import { describe, expect, it, vi } from 'vitest';
import { RunEventsNotifier } from '../../functions/adapters/run-events.ts';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { buildOpenApiDocument } from '../../functions/api/openapi.ts';
import {
  answerClientMessage,
  DashboardFrame,
  type DashboardRunFrame,
  ProgressThrottle,
} from '../../functions/domain/dashboard-events.ts';
import { answerInterrupt } from '../../functions/engine/control.ts';
import { tellWaits } from '../../functions/engine/throttle-notices.ts';
import type { Store } from '../../functions/store/index.ts';
import { ThrottleWaitDeferred } from '../../functions/trackers/http.ts';

describe('the $default route', () => {
  it('answers a ping with a pong, anything else with UNKNOWN_ACTION', () => {
    expect(answerClientMessage('{"action":"ping"}')).toEqual({ type: 'pong' });
    for (const body of ['{"action":"subscribe"}', '{}', 'ping', '', null, undefined, '[1]'])
      expect(answerClientMessage(body)).toEqual({ type: 'error', code: 'UNKNOWN_ACTION' });
  });
});

describe('progress throttling', () => {
  it('lets one frame a second through per run, whatever the phase', () => {
    const t = new ProgressThrottle(1_000);
    expect([0, 400, 999, 1_000, 1_500, 2_001].map((at) => t.admit('r1', at))).toEqual([
      true,
      false,
      false,
      true,
      false,
      true,
    ]);
    // Another run has its own second.
    expect(t.admit('r2', 1_500)).toBe(true);
    t.forget('r1');
    expect(t.admit('r1', 2_100)).toBe(true);
  });
});

describe('the notifier', () => {
  const store = {} as Store;
  const run = { id: 'run-1', projectId: 'p-1' };

  it("sends a run's frames one after another, in the order they were told, each a protocol frame", async () => {
    const sent: DashboardRunFrame[] = [];
    let release: () => void = () => undefined;
    const firstHeld = new Promise<void>((r) => {
      release = r;
    });
    const publish = vi.fn(async (_s: Store, _t: string, frame: DashboardRunFrame) => {
      if (sent.length === 0) await firstHeld;
      sent.push(frame);
    });
    const n = new RunEventsNotifier(() => store, publish);
    n.started('t', { ...run, type: 'FULL', options: { dryRun: true } } as never);
    n.phase('t', run, 2);
    n.paused('t', run, 'requested');
    expect(sent).toEqual([]);
    release();
    await n.settle();
    expect(sent.map((f) => f.type)).toEqual(['run.started', 'run.phase', 'run.paused']);
    for (const f of sent) expect(DashboardFrame.parse(f)).toEqual(f);
    expect(sent[1]).toMatchObject({ runId: 'run-1', projectId: 'p-1', phase: 2, phaseName: 'create' });
  });

  it('never throws a failed post to the run, and goes on with the next frame', async () => {
    const publish = vi.fn().mockRejectedValueOnce(new Error('boom')).mockResolvedValue(undefined);
    const n = new RunEventsNotifier(() => store, publish);
    n.resumed('t', run);
    n.resumed('t', run);
    await n.settle();
    expect(publish).toHaveBeenCalledTimes(2);
  });

  it('waits a bounded time for frames still on their way', async () => {
    const n = new RunEventsNotifier(
      () => store,
      () => new Promise(() => undefined),
    );
    n.resumed('t', run);
    // The post never answers; settle returns all the same (else this test would time out).
    await expect(n.settle(50)).resolves.toBeUndefined();
  });
});

describe("a tracker's long wait", () => {
  it("is told to the dashboard as run.waiting, beside the stream's log line", async () => {
    const sent: DashboardRunFrame[] = [];
    const notifier = new RunEventsNotifier(
      () => ({}) as Store,
      async (_s, _t, frame) => {
        sent.push(frame);
      },
    );
    const listeners: ((notice: unknown) => void)[] = [];
    const http = {
      onThrottleWait: (fn: (notice: unknown) => void) => {
        listeners.push(fn);
        return () => undefined;
      },
    };
    const lines: unknown[] = [];
    const store = {
      runs: {
        appendEvents: async (...args: unknown[]) =>
          void lines.push(...(args[3] as { event: unknown }[]).map((e) => e.event)),
      },
    };
    const deps = { journal: new StoreRunJournal(store as never, notifier), target: { http } };
    const run = { id: 'run-1', projectId: 'p-1', tenantId: 't-1', cursor: { phase: 2, index: 0 } };
    const off = tellWaits(deps as never, run as never);
    listeners[0]?.({
      tracker: 'target',
      reason: 'jira-quota-global-based',
      until: new Date('2026-11-26T14:00:00Z'),
    });
    off();
    await notifier.settle();
    expect(sent).toEqual([
      {
        type: 'run.waiting',
        runId: 'run-1',
        projectId: 'p-1',
        at: expect.any(String),
        tracker: 'target',
        reason: 'jira-quota-global-based',
        until: '2026-11-26T14:00:00.000Z',
      },
    ]);
    expect(lines).toEqual([{ type: 'log', message: "Waiting for Jira's hourly quota until 14:00 UTC" }]);
  });
});

describe('a wait beyond the invocation (the state machine waits)', () => {
  it('is told to the dashboard as run.waiting too', async () => {
    const sent: DashboardRunFrame[] = [];
    const notifier = new RunEventsNotifier(
      () => ({}) as Store,
      async (_s, _t, frame) => {
        sent.push(frame);
      },
    );
    const store = { runs: { appendEvents: async () => undefined } };
    const deps = { journal: new StoreRunJournal(store as never, notifier) };
    const run = { id: 'run-2', projectId: 'p-2', tenantId: 't-1', cursor: { phase: 4, index: 50 } };
    const until = new Date(Date.now() + 3_600_000);
    await answerInterrupt(deps as never, run as never, {
      kind: 'wait-deferred',
      wait: new ThrottleWaitDeferred({ tracker: 'target', reason: 'jira-quota-global-based', until }).notice,
    });
    await notifier.settle();
    expect(sent).toMatchObject([
      { type: 'run.waiting', runId: 'run-2', tracker: 'target', until: until.toISOString() },
    ]);
  });
});

describe('the published document', () => {
  it('describes /api/ws beside the REST paths (not as one), with its frames and messages', () => {
    const doc = buildOpenApiDocument() as {
      paths: Record<string, unknown>;
      'x-websockets': Record<
        string,
        { serverFrames: unknown; clientMessages: unknown; 'x-error-codes': string[] }
      >;
    };
    expect(doc.paths['/api/ws']).toBeUndefined();
    const ws = doc['x-websockets']['/api/ws'];
    expect(ws?.['x-error-codes']).toEqual([
      'UNAUTHORIZED',
      'TOKEN_EXPIRED',
      'SESSION_REVOKED',
      'STREAM_LIMIT',
    ]);
    const text = JSON.stringify(ws?.serverFrames);
    for (const type of [
      'run.started',
      'run.progress',
      'run.phase',
      'run.paused',
      'run.resumed',
      'run.waiting',
      'run.ended',
      'pong',
      'error',
    ])
      expect(text).toContain(`"${type}"`);
    expect(JSON.stringify(ws?.clientMessages)).toContain('"ping"');
  });
});
