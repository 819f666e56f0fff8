/**
 * Token buckets per webhook token, in memory: a flood against one payment is answered 429
 * quickly and cannot take the database time of the others. Payflow retries any non-2xx
 * (5 minutes later at first), so a throttled webhook is delayed, not lost.
 *
 * Memory is bounded: above `maxKeys` buckets, those that have refilled (equivalent to no
 * bucket) are dropped, then the oldest.
 */
export interface RateDecision {
  readonly allowed: boolean;
  /** Whole seconds until one more request would be allowed (when not allowed). */
  readonly retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  take(key: string): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxKeys) this.evict(now);
      bucket = { tokens: this.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    } else {
      const refill = ((now - bucket.updatedAt) / 1000) * this.ratePerSecond;
      bucket.tokens = Math.min(this.burst, bucket.tokens + refill);
      bucket.updatedAt = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    const wait = (1 - bucket.tokens) / this.ratePerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }

  get size(): number {
    return this.buckets.size;
  }

  private evict(now: number): void {
    for (const [key, bucket] of this.buckets) {
      const tokens = bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.ratePerSecond;
      if (tokens >= this.burst) this.buckets.delete(key);
    }
    // Still full: drop the oldest tenth (Map keeps insertion order).
    if (this.buckets.size >= this.maxKeys) {
      let drop = Math.ceil(this.maxKeys / 10);
      for (const key of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(key);
      }
    }
  }
}
