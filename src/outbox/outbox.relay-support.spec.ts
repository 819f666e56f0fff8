import { describe, expect, it } from '@jest/globals';
import { Wakeup, backoffDelay, mapBounded } from './outbox.relay-support.js';

describe('Wakeup', () => {
  it('waits the full time when nobody wakes it', async () => {
    const started = Date.now();
    await new Wakeup().wait(60);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('returns early when woken during the wait, and at once when woken before it', async () => {
    const wakeup = new Wakeup();
    const started = Date.now();
    setTimeout(() => wakeup.wake(), 10);
    await wakeup.wait(5_000);
    expect(Date.now() - started).toBeLessThan(1_000);

    wakeup.wake();
    const again = Date.now();
    await wakeup.wait(5_000);
    expect(Date.now() - again).toBeLessThan(50);
    // The early wake-up is used up: the next wait runs its course.
    const third = Date.now();
    await wakeup.wait(40);
    expect(Date.now() - third).toBeGreaterThanOrEqual(30);
  });
});

describe('mapBounded', () => {
  it('keeps input order and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapBounded([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, n * 3));
      running -= 1;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
    expect(await mapBounded([], 4, () => Promise.resolve(1))).toEqual([]);
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
