import { describe, expect, it } from '@jest/globals';
import { retryDelayMs } from './payflow.retry.js';

const policy = { baseDelayMs: 200, maxDelayMs: 5000, maxRetryAfterMs: 60_000 };

describe('retryDelayMs', () => {
  it('backs off: doubles per retry, capped, with half of it jittered', () => {
    // [retry, jitter drawn, delay]
    const expected = [
      [1, 0, 100],
      [1, 0.999999, 200],
      [2, 0, 200],
      [3, 0.5, 600],
      [10, 1, 5000],
      [10, 0, 2500],
    ] as const;
    const delays = expected.map(([retry, jitter]) =>
      retryDelayMs(retry, undefined, policy, () => jitter),
    );
    expect(delays).toEqual(expected.map(([, , delay]) => delay));
  });

  it('honours Retry-After when longer, and refuses to wait beyond the cap', () => {
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(100);
    expect(retryDelayMs(1, 3000, policy, () => 0)).toBe(3000);
    expect(retryDelayMs(1, 0, policy, () => 0)).toBe(100);
    expect(retryDelayMs(1, 60_000, policy, () => 0)).toBe(60_000);
    expect(retryDelayMs(1, 60_001, policy, () => 0)).toBeUndefined();
  });
});
