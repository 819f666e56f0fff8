import { describe, expect, it } from '@jest/globals';
import { RandomPool } from './random-pool.js';

describe('RandomPool', () => {
  it('hands out distinct draws across block refills and keeps no drawn byte', () => {
    const pool = new RandomPool(100);
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const drawn = pool.take(24);
      expect(drawn).toHaveLength(24);
      seen.add(drawn.toString('hex'));
    }
    expect(seen.size).toBe(1_000);
    const block = (pool as unknown as { block: Buffer; offset: number }).block;
    const offset = (pool as unknown as { offset: number }).offset;
    // Everything before the offset was drawn, and is zero now.
    expect(block.subarray(0, offset).every((byte) => byte === 0)).toBe(true);
  });

  it('copies a draw: a later refill does not change bytes already handed out', () => {
    const pool = new RandomPool(32);
    const first = pool.take(32);
    const copy = Buffer.from(first);
    pool.take(32);
    expect(first.equals(copy)).toBe(true);
  });

  it('serves a draw larger than its block straight from the CSPRNG', () => {
    const pool = new RandomPool(16);
    const a = pool.take(64);
    const b = pool.take(64);
    expect(a).toHaveLength(64);
    expect(a.equals(b)).toBe(false);
  });
});
