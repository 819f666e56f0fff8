import { describe, expect, it } from '@jest/globals';
import { sleepUnlessAborted } from './sleep.js';

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
