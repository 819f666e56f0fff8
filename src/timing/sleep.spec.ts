import { describe, expect, it } from '@jest/globals';
import { sleep, sleepUnlessAborted, withTimeout } from './sleep.js';

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

describe('withTimeout', () => {
  it('passes on the value or the error of a promise that settles in time', async () => {
    await expect(withTimeout(Promise.resolve(3), 1000)).resolves.toBe(3);
    await expect(withTimeout(Promise.reject(new Error('broken')), 1000)).rejects.toThrow('broken');
  });

  it('wraps a non-Error rejection in an Error', async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    const rejected = withTimeout(Promise.reject('plain'), 1000);
    await expect(rejected).rejects.toBeInstanceOf(Error);
  });

  it('rejects after the time-out when the promise is slower', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(withTimeout(never, 10)).rejects.toThrow('timed out after 10 ms');
  });
});
