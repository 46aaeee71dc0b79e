/**
 * A tracker that does not answer is waited for, a little longer each time, and fails the run only after too many
 * engine calls in a row met it; a 4xx is no such fault. An invocation's interrupt keeps its weightiest reason.
 */
import { describe, expect, it } from 'vitest';
import {
  faultFailureReason,
  faultWaitMs,
  nextFaultStreak,
  TRACKER_FAULT_POLICY,
} from '../../functions/domain/tracker-faults.ts';
import { Interrupt } from '../../functions/trackers/interrupt.ts';
import {
  passingFault,
  TrackerHttpError,
  TrackerUnreachableError,
} from '../../functions/trackers/tracker-errors.ts';

describe('a tracker that does not answer', () => {
  it('is a 5xx or no answer at all after the retries, never a 4xx the tenant has to mend', () => {
    const answered = (status: number) =>
      new TrackerHttpError('target', status, 'GET', '/rest/api/3/project/K', {});
    expect([500, 502, 503, 504].map((s) => passingFault(answered(s)))).toEqual(
      [500, 502, 503, 504].map((status) => ({ tracker: 'target', status })),
    );
    expect(passingFault(new TrackerUnreachableError('source', 'dev.azure.com', 'timeout'))).toEqual({
      tracker: 'source',
      status: null,
    });
    expect([400, 401, 403, 404, 429].map((s) => passingFault(answered(s)))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(passingFault(new Error('boom'))).toBeUndefined();
  });

  it('counts the engine calls in a row while the checkpoint stands still, and starts again once it moved', () => {
    const first = nextFaultStreak(undefined, { phase: 1, index: 0 });
    const second = nextFaultStreak(first, { phase: 1, index: 0 });
    expect([first, second]).toEqual([
      { phase: 1, index: 0, count: 1 },
      { phase: 1, index: 0, count: 2 },
    ]);
    expect(nextFaultStreak(second, { phase: 2, index: 50 })).toEqual({ phase: 2, index: 50, count: 1 });
  });

  it('waits 30 s, doubling up to 15 min, eight times, then fails the run with the reason', () => {
    const waits = Array.from({ length: 9 }, (_, n) => faultWaitMs(n + 1, TRACKER_FAULT_POLICY));
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000, undefined]);
    expect(faultFailureReason('target', 9, 503)).toBe(
      'Jira did not answer for 9 engine calls in a row (last: HTTP 503)',
    );
    expect(faultFailureReason('source', 9, null)).toBe(
      'Azure DevOps did not answer for 9 engine calls in a row (last: no answer)',
    );
  });
});

describe("an invocation's interrupt", () => {
  const wait = (at: number) => ({
    kind: 'wait-deferred' as const,
    wait: { tracker: 'target' as const, reason: null, until: new Date(at) },
  });

  it('keeps its weightiest reason: a stop that voids the work outranks the time budget, a later reset an earlier one', () => {
    const interrupt = new Interrupt();
    const voided: string[] = [];
    interrupt.onVoided((r) => voided.push(r.kind));
    interrupt.abort({ kind: 'time-budget' });
    expect([interrupt.signal.aborted, interrupt.voided, voided]).toEqual([true, false, []]);
    interrupt.abort(wait(2_000));
    interrupt.abort(wait(1_000));
    expect(interrupt.reason).toEqual(wait(2_000));
    interrupt.abort(wait(3_000));
    interrupt.abort({ kind: 'time-budget' });
    expect([interrupt.reason, interrupt.voided, voided]).toEqual([wait(3_000), true, ['wait-deferred']]);
  });
});
