/**
 * A token bucket: `capacity` tokens, refilled at `ratePerSecond`; a request takes one. Jira's burst limit is one of
 * these per tenant and endpoint (https://developer.atlassian.com/cloud/jira/platform/rate-limiting).
 */
export interface BucketAnswer {
  ok: boolean;
  /** Whole tokens left after this request (0 when refused). */
  remaining: number;
  /** When refused: ms until one token is back. */
  waitMs: number;
}

export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly ratePerSecond: number,
    readonly capacity: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.at = now;
  }

  take(now: number): BucketAnswer {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) / 1000) * this.ratePerSecond);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true, remaining: Math.floor(this.tokens), waitMs: 0 };
    }
    return { ok: false, remaining: 0, waitMs: Math.ceil(((1 - this.tokens) / this.ratePerSecond) * 1000) };
  }
}
