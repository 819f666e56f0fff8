import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from './clock.js';
import { Scheduler } from './scheduler.js';
import { RETRY_BACKOFF_MINUTES } from '../webhooks/webhooks.js';

/** A scheduler on `clock` with nothing in flight to settle, whose job errors fail the test. */
function schedulerOn(clock: VirtualClock): Scheduler {
  return new Scheduler(
    clock,
    () => Promise.resolve(),
    (error) => {
      throw error;
    },
  );
}

describe('Scheduler', () => {
  it('runs due jobs in time order at their own due time while advancing, including jobs they add', async () => {
    const clock = new VirtualClock();
    const scheduler = schedulerOn(clock);
    const start = clock.now();
    const ran: [string, number][] = [];
    scheduler.schedule(start + 30 * 60_000, (at) => {
      ran.push(['b', at - start]);
    });
    scheduler.schedule(start + 10 * 60_000, (at) => {
      ran.push(['a', at - start]);
      scheduler.schedule(at + 5 * 60_000, (later) => {
        ran.push(['a+5', later - start]);
      });
    });
    scheduler.schedule(start + 90 * 60_000, () => {
      ran.push(['too late', 0]);
    });
    expect(await scheduler.advance(60 * 60_000)).toBe(3);
    expect(ran).toEqual([
      ['a', 600_000],
      ['a+5', 900_000],
      ['b', 1_800_000],
    ]);
    expect(clock.now() - start).toBeGreaterThanOrEqual(60 * 60_000);
    expect(scheduler.size).toBe(1);
    scheduler.stop();
  });

  it('drops an owner’s jobs on cancel, and compacts the heap of many cancelled ones', async () => {
    const clock = new VirtualClock();
    const scheduler = schedulerOn(clock);
    const start = clock.now();
    const ran: string[] = [];
    for (let n = 0; n < 3_000; n++) {
      scheduler.schedule(start + 60_000 + n, () => void ran.push(`p${n}`), `p${n}`);
    }
    scheduler.schedule(start + 30_000, () => void ran.push('kept'), 'kept');
    for (let n = 0; n < 3_000; n++) scheduler.cancel(`p${n}`);
    expect(scheduler.size).toBe(1);
    expect(await scheduler.advance(10 * 60_000)).toBe(1);
    expect(ran).toEqual(['kept']);
    expect(scheduler.size).toBe(0);
    scheduler.stop();
  });

  it('lets requests in while it runs a long row of due jobs', async () => {
    const clock = new VirtualClock();
    const scheduler = schedulerOn(clock);
    const start = clock.now();
    let ran = 0;
    let ranWhenTimerFired = -1;
    for (let n = 0; n < 2_000; n++) scheduler.schedule(start + n, () => void ran++);
    setImmediate(() => {
      ranWhenTimerFired = ran;
    });
    expect(await scheduler.advance(60_000)).toBe(2_000);
    expect(ranWhenTimerFired).toBeGreaterThanOrEqual(0);
    expect(ranWhenTimerFired).toBeLessThan(2_000);
    scheduler.stop();
  });
});

describe('webhook back-off', () => {
  it('is 25 retries: 5×5, 5×15, 5×30, 5×60, 5×1440 minutes = 7750 minutes', () => {
    expect(RETRY_BACKOFF_MINUTES).toHaveLength(25);
    expect(RETRY_BACKOFF_MINUTES.reduce((sum, wait) => sum + wait, 0)).toBe(7750);
  });
});
