import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { backoffDelay, backoffDelayMs, type BackoffPolicy } from './backoff.js';

const policy: BackoffPolicy = { baseDelayMs: 1_000, maxDelayMs: 8_000 };

describe('backoffDelayMs', () => {
  it('doubles per retry, capped, with equal jitter', () => {
    expect(backoffDelayMs(1, policy, () => 0)).toBe(500);
    expect(backoffDelayMs(1, policy, () => 1)).toBe(1000);
    expect(backoffDelayMs(2, policy, () => 0)).toBe(1000);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(3000);
    expect(backoffDelayMs(10, policy, () => 1)).toBe(8000);
    expect(backoffDelayMs(500, policy, () => 0)).toBe(4000);
  });

  it('stays within [cap/2, cap] for any jitter', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.double({ min: 0, max: 1 }), (retry, r) => {
        const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
        const delay = backoffDelayMs(retry, policy, () => r);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(cap / 2));
        expect(delay).toBeLessThanOrEqual(cap);
      }),
    );
  });
});

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap, with ±20 % jitter', () => {
    for (let i = 0; i < 50; i++) {
      expect(backoffDelay(1, 100, 5_000)).toBeGreaterThanOrEqual(80);
      expect(backoffDelay(1, 100, 5_000)).toBeLessThanOrEqual(120);
      expect(backoffDelay(4, 100, 5_000)).toBeGreaterThanOrEqual(640);
      expect(backoffDelay(4, 100, 5_000)).toBeLessThanOrEqual(960);
      expect(backoffDelay(30, 100, 5_000)).toBeLessThanOrEqual(6_000);
    }
  });
});
