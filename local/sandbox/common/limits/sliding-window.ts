/**
 * A sliding window of weighted events: what was spent in the last `windowMs`. Jira's per-issue write limits (20
 * writes in 2 s, 100 in 30 s) count writes this way; Azure DevOps' throughput budget sums TSTUs over 5 minutes.
 */
export class SlidingWindow {
  private readonly events: { at: number; cost: number }[] = [];
  private sum = 0;

  constructor(readonly windowMs: number) {}

  private expire(now: number): void {
    while (this.events.length > 0 && (this.events[0] as { at: number }).at <= now - this.windowMs) {
      this.sum -= (this.events.shift() as { cost: number }).cost;
    }
    if (this.events.length === 0) this.sum = 0; // no float drift left behind
  }

  /** What was spent in the window ending at `now`. */
  used(now: number): number {
    this.expire(now);
    return this.sum;
  }

  add(now: number, cost = 1): void {
    this.expire(now);
    this.events.push({ at: now, cost });
    this.sum += cost;
  }

  /** Ms from `now` until the spending is at most `limit - cost` again (so that `cost` more fits); 0 if it does now. */
  msUntilFits(now: number, limit: number, cost = 1): number {
    this.expire(now);
    if (this.sum + cost <= limit) return 0;
    let left = this.sum;
    for (const e of this.events) {
      left -= e.cost;
      if (left + cost <= limit) return Math.max(1, e.at + this.windowMs - now);
    }
    return this.windowMs;
  }
}
