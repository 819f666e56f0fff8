import { describe, expect, it } from '@jest/globals';
import { sleep, sleepUnlessAborted } from './sleep.js';

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
