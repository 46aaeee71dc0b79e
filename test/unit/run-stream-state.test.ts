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

  it('answers the same state for an empty batch (no render)', () => {
    expect(applyRunEvents(start, [])).toBe(start);
  });
});
