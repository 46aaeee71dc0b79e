/** A run's figures for people (web/src/features/runs/figures.ts): the engine's speed is units a minute. */
import { describe, expect, it } from 'vitest';
import { etaText, speedText } from '../../web/src/features/runs/figures.ts';

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
});
