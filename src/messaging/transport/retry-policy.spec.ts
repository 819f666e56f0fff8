import { describe, expect, it } from '@jest/globals';
import { nextRetry, type RetryPolicy } from './retry-policy.js';

const policy: RetryPolicy = {
  maxAttempts: 5,
  maxDurationMs: 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
};

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
