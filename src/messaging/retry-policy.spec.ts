import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { backoffDelayMs, nextRetry, sleepUnlessAborted, type RetryPolicy } from './retry-policy.js';

const policy: RetryPolicy = {
  maxAttempts: 5,
  maxDurationMs: 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
};

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

describe('nextRetry', () => {
  const at = (attempt: number, elapsed: number, minDelayMs?: number) => ({
    attempt,
    firstAttemptAt: 1_000_000,
    now: 1_000_000 + elapsed,
    minDelayMs,
  });

  it('retries with back-off until the attempts are used up', () => {
    expect(nextRetry(at(1, 0), policy, () => 0)).toEqual({ retry: true, delayMs: 500 });
    expect(nextRetry(at(4, 10), policy, () => 1)).toEqual({ retry: true, delayMs: 8000 });
    expect(nextRetry(at(5, 10), policy, () => 0)).toEqual({ retry: false, why: 'attempts' });
  });

  it('gives up once the duration is spent, and shortens the last wait to fit', () => {
    expect(nextRetry(at(2, 60_000), policy, () => 0)).toEqual({ retry: false, why: 'duration' });
    expect(nextRetry(at(4, 59_000), policy, () => 1)).toEqual({ retry: true, delayMs: 1000 });
  });

  it('waits at least Retry-After, and gives up when it does not fit the budget', () => {
    expect(nextRetry(at(1, 0, 5_000), policy, () => 0)).toEqual({ retry: true, delayMs: 5000 });
    expect(nextRetry(at(1, 0, 100), policy, () => 0)).toEqual({ retry: true, delayMs: 500 });
    expect(nextRetry(at(1, 50_000, 20_000), policy, () => 0)).toEqual({
      retry: false,
      why: 'duration',
    });
  });
});

describe('sleepUnlessAborted', () => {
  it('resolves true after the delay, false when aborted', async () => {
    const controller = new AbortController();
    await expect(sleepUnlessAborted(5, controller.signal)).resolves.toBe(true);
    const pending = sleepUnlessAborted(60_000, controller.signal);
    controller.abort();
    await expect(pending).resolves.toBe(false);
    await expect(sleepUnlessAborted(1, controller.signal)).resolves.toBe(false);
  });
});
