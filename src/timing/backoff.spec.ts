import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { backoffDelay, backoffDelayMs, retryWithBackoff, type BackoffPolicy } from './backoff.js';

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

describe('backoffDelayMs without jitter', () => {
  it('is the capped doubling itself, whatever the draw', () => {
    const plain: BackoffPolicy = { baseDelayMs: 250, maxDelayMs: 2000, jitter: 'none' };
    const delays = [1, 2, 3, 4, 5].map((retry) => backoffDelayMs(retry, plain, () => 0.3));
    expect(delays).toEqual([250, 500, 1000, 2000, 2000]);
  });
});

describe('retryWithBackoff', () => {
  const quick = { baseDelayMs: 2, maxDelayMs: 4, jitter: 'none' } as const;

  it('returns the first success, after waiting between the failed tries', async () => {
    let calls = 0;
    const started = Date.now();
    const value = await retryWithBackoff(
      () => {
        calls += 1;
        return calls < 3 ? Promise.reject(new Error(`try ${calls}`)) : Promise.resolve('done');
      },
      { retries: 5, backoff: { baseDelayMs: 10, maxDelayMs: 10, jitter: 'none' } },
    );
    expect(value).toBe('done');
    expect(calls).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('tries retries + 1 times in all and throws the last failure', async () => {
    let calls = 0;
    const work = jest.fn(() => {
      calls += 1;
      return Promise.reject(new Error(`try ${calls}`));
    });
    await expect(retryWithBackoff(work, { retries: 3, backoff: quick })).rejects.toThrow('try 4');
    expect(work).toHaveBeenCalledTimes(4);
  });

  it('does not wait or retry when the first try succeeds', async () => {
    const work = jest.fn(() => Promise.resolve(7));
    await expect(retryWithBackoff(work, { retries: 3, backoff: quick })).resolves.toBe(7);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('with no retries, tries once', async () => {
    const work = jest.fn(() => Promise.reject(new Error('once')));
    await expect(retryWithBackoff(work, { retries: 0, backoff: quick })).rejects.toThrow('once');
    expect(work).toHaveBeenCalledTimes(1);
  });
});
