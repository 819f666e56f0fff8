import { describe, expect, it } from '@jest/globals';
import { backoffDelayMs, retryDelayMs, sleep } from './payflow.retry.js';

const policy = { baseDelayMs: 200, maxDelayMs: 5000, maxRetryAfterMs: 60_000 };

describe('backoff', () => {
  it('doubles per retry, capped, with half of it jittered', () => {
    expect(backoffDelayMs(1, policy, () => 0)).toBe(100);
    expect(backoffDelayMs(1, policy, () => 0.999999)).toBe(200);
    expect(backoffDelayMs(2, policy, () => 0)).toBe(200);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(600);
    expect(backoffDelayMs(10, policy, () => 1)).toBe(5000);
    expect(backoffDelayMs(10, policy, () => 0)).toBe(2500);
  });

  it('honours Retry-After when longer, and refuses to wait beyond the cap', () => {
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(100);
    expect(retryDelayMs(1, 3000, policy, () => 0)).toBe(3000);
    expect(retryDelayMs(1, 0, policy, () => 0)).toBe(100);
    expect(retryDelayMs(1, 60_000, policy, () => 0)).toBe(60_000);
    expect(retryDelayMs(1, 60_001, policy, () => 0)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('resolves after the delay and rejects with the abort reason', async () => {
    const started = Date.now();
    await sleep(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    await expect(sleep(1, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
