import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LateApplications } from './late-applications.js';

describe('LateApplications', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('runs each application once, after its own delay, and counts how it ended', async () => {
    const late = new LateApplications();
    const ran: string[] = [];
    late.schedule(500, () => ran.push('a'));
    late.schedule(100, () => {
      ran.push('b');
      throw new Error('the payment was gone');
    });
    expect(late.stats()).toEqual({ pending: 2, applied: 0, failed: 0, cancelled: 0 });
    await jest.advanceTimersByTimeAsync(99);
    expect(ran).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['b']);
    await jest.advanceTimersByTimeAsync(400);
    expect(ran).toEqual(['b', 'a']);
    expect(late.stats()).toEqual({ pending: 0, applied: 1, failed: 1, cancelled: 0 });
  });

  it('a reset cancels what is pending and starts the counts again', async () => {
    const late = new LateApplications();
    const ran: string[] = [];
    late.schedule(10, () => ran.push('done'));
    await jest.advanceTimersByTimeAsync(10);
    late.schedule(100, () => ran.push('cancelled'));
    late.reset();
    expect(late.stats()).toEqual({ pending: 0, applied: 0, failed: 0, cancelled: 0 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['done']);
    // still usable after a reset
    late.schedule(5, () => ran.push('after'));
    await jest.advanceTimersByTimeAsync(5);
    expect(ran).toEqual(['done', 'after']);
  });

  it('close cancels pending ones without waiting for their timers, and refuses new ones', async () => {
    const late = new LateApplications();
    const ran: string[] = [];
    late.schedule(60_000, () => ran.push('never'));
    await late.close();
    late.schedule(1, () => ran.push('refused'));
    await jest.advanceTimersByTimeAsync(120_000);
    expect(ran).toEqual([]);
    expect(late.stats()).toMatchObject({ pending: 0, cancelled: 2 });
  });

  it('close waits for an application that is running', async () => {
    const late = new LateApplications();
    let finish: () => void = () => undefined;
    late.schedule(1, () => new Promise<void>((resolve) => (finish = resolve)));
    await jest.advanceTimersByTimeAsync(1);
    let closed = false;
    const closing = late.close().then(() => {
      closed = true;
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(late.stats()).toMatchObject({ applied: 1 });
  });

  it('past its bound runs the oldest pending one at once instead of keeping it', async () => {
    const late = new LateApplications(2);
    const ran: string[] = [];
    late.schedule(1_000, () => ran.push('first'));
    late.schedule(1_000, () => ran.push('second'));
    late.schedule(1_000, () => ran.push('third'));
    await jest.advanceTimersByTimeAsync(0);
    expect(ran).toEqual(['first']);
    expect(late.stats()).toMatchObject({ pending: 2, applied: 1 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['first', 'second', 'third']);
  });
});
