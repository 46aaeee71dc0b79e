import { describe, expect, it } from 'vitest';
import {
  applyRunEvents,
  LOG_TAIL,
  type RunStreamEvent,
  type RunStreamState,
} from '../../web/src/features/runs/runStreamState.ts';

const start: RunStreamState = { connection: 'open', logs: [] };
const log = (n: number): RunStreamEvent => ({ type: 'log', id: `01.${n}`, data: { message: `line ${n}` } });

describe("the run page's stream state, folded over batches of events", () => {
  it('keeps the newest log lines, however the events are batched', () => {
    const events = Array.from({ length: 1_000 }, (_, i) => log(i + 1));
    const whole = applyRunEvents(start, events);
    let piecewise = start;
    for (const size of [1, 7, 199, 200, 201, 392]) {
      const at = events.findIndex((e) => e.id === piecewise.lastEventId) + 1;
      piecewise = applyRunEvents(piecewise, events.slice(at, at + size));
    }
    piecewise = applyRunEvents(
      piecewise,
      events.slice(events.findIndex((e) => e.id === piecewise.lastEventId) + 1),
    );
    expect(whole.logs).toHaveLength(LOG_TAIL);
    expect(whole.logs[0]).toEqual({ id: '01.801', message: 'line 801' });
    expect(whole.logs.at(-1)).toEqual({ id: '01.1000', message: 'line 1000' });
    expect(piecewise).toEqual(whole);
    expect(whole.lastEventId).toBe('01.1000');
  });

  it('takes the latest progress and status of a batch, upper-cases the status, and ends on done', () => {
    const state = applyRunEvents(start, [
      { type: 'status', id: '01.-1', data: { status: 'running' } },
      { type: 'progress', id: '01.1', data: { current: 50, total: 100, percent: 50, speed: 10 } },
      log(2),
      { type: 'status', id: '01.-3', data: { status: 'paused' } },
      { type: 'progress', id: '01.4', data: { current: 100, total: 100, percent: 100, speed: 12 } },
      { type: 'done', id: '', data: { stats: { created: 99, skipped: 0, failed: 1 } } },
    ]);
    expect(state).toEqual({
      connection: 'ended',
      status: 'PAUSED',
      progress: { current: 100, total: 100, percent: 100, speed: 12 },
      logs: [{ id: '01.2', message: 'line 2' }],
      done: { created: 99, skipped: 0, failed: 1 },
      lastEventId: '01.4',
    });
  });

  it("folds the stream's newest LOG_TAIL events (the page's `tail`) to the whole history's state, its log the newest lines", () => {
    // A finished run as the engine writes it: chunks of 50 lines and their progress, then the final status and done.
    const history: RunStreamEvent[] = [{ type: 'status', id: '01.-0', data: { status: 'running' } }];
    for (let chunk = 0; chunk < 40; chunk++) {
      for (let n = 0; n < 50; n++) history.push(log(chunk * 50 + n));
      const current = (chunk + 1) * 50;
      history.push({
        type: 'progress',
        id: `01.${current}p`,
        data: { current, total: 2_000, percent: current / 20, speed: 600 },
      });
    }
    history.push({ type: 'status', id: '09.-1', data: { status: 'completed' } });
    history.push({ type: 'done', id: '09.-2', data: { stats: { created: 2_000, skipped: 0, failed: 0 } } });

    const whole = applyRunEvents(start, history);
    const tail = applyRunEvents(start, history.slice(-LOG_TAIL));
    const { logs: wholeLogs, ...wholeRest } = whole;
    const { logs: tailLogs, ...tailRest } = tail;
    expect(tailRest).toEqual(wholeRest);
    expect(tail.status).toBe('COMPLETED');
    expect(tail.progress?.current).toBe(2_000);
    // The events of a tail that are not lines (progress, status, done) leave it a few lines short of LOG_TAIL.
    expect(tailLogs.length).toBeGreaterThan(LOG_TAIL - 10);
    expect(tailLogs).toEqual(wholeLogs.slice(-tailLogs.length));
  });

  it('answers the same state for an empty batch (no render)', () => {
    expect(applyRunEvents(start, [])).toBe(start);
  });
});
