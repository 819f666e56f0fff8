import { describe, expect, it } from '@jest/globals';
import { Wakeup } from './wakeup.js';

describe('Wakeup', () => {
  it('waits the full time when nobody wakes it', async () => {
    const started = Date.now();
    expect(await new Wakeup().wait(60)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('returns early when woken during the wait, and at once when woken before it', async () => {
    const wakeup = new Wakeup();
    const started = Date.now();
    setTimeout(() => wakeup.wake(), 10);
    expect(await wakeup.wait(5_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);

    wakeup.wake();
    const again = Date.now();
    expect(await wakeup.wait(5_000)).toBe(true);
    // Far below the 5 s it would wait; no tighter, as a busy machine may delay any callback.
    expect(Date.now() - again).toBeLessThan(1_000);
    // The early wake-up is used up: the next wait runs its course.
    const third = Date.now();
    await wakeup.wait(40);
    expect(Date.now() - third).toBeGreaterThanOrEqual(30);
  });
});
