/** A run's figures for people (web/src/features/runs/figures.ts): the engine's speed is units a minute. */
import { describe, expect, it } from 'vitest';
import { etaText, isWorking, speedText } from '../../web/src/features/runs/figures.ts';

describe('run figures', () => {
  it("says the speed in the engine's unit, a minute", () => {
    expect(speedText({ current: 10, total: 100, speed: 30 })).toBe('30.0 a minute');
  });

  it('says the time left of the phase from a speed a minute', () => {
    // 90 units at 30 a minute: 3 minutes, not 3 seconds.
    expect(etaText({ current: 10, total: 100, speed: 30 })).toBe('about 3 min left');
    expect(etaText({ current: 95, total: 100, speed: 60 })).toBe('about 5 s left');
    expect(etaText({ current: 0, total: 100, speed: 0 })).toBeUndefined();
  });

  it("follows a run's stream while the engine works on it: at work, verified, rolled back (or paused in a rollback)", () => {
    for (const status of ['PENDING', 'RUNNING', 'PAUSED', 'VERIFYING', 'ROLLING_BACK', 'ROLLBACK_PAUSED'])
      expect(isWorking(status), status).toBe(true);
    for (const status of ['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED', 'ROLLED_BACK'])
      expect(isWorking(status), status).toBe(false);
  });
});
