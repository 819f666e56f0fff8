/**
 * Time-ordered jobs on the virtual clock: webhook retries and installment debits.
 *
 * Jobs run one at a time, in (due time, insertion) order, from two drivers:
 * - `advance(ms)` moves the clock and runs every job that falls due on the way, each at its
 *   own due time, awaiting it (and whatever `settle` waits for) before the next one;
 * - a real-time timer, so a sandbox left running also retries and debits by itself.
 *
 * A run of many due jobs gives the event loop a turn every YIELD_EVERY_JOBS jobs (or
 * YIELD_AFTER_MS), so that requests are answered meanwhile. A job may have an owner (a
 * payment, a webhook delivery): `cancel(owner)` drops its jobs when the owner is forgotten,
 * so that the heap holds nothing of a forgotten payment.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { VirtualClock } from './clock.js';

export type Job = (at: number) => Promise<void> | void;

interface Entry {
  dueAt: number;
  seq: number;
  run: Job;
  owner: string | undefined;
  cancelled: boolean;
}

const YIELD_EVERY_JOBS = 64;
const YIELD_AFTER_MS = 10;
const NOTHING: Job = () => undefined;

/** The real-time timer never sleeps longer than this, so clock advances are picked up. */
const MAX_TIMER_MS = 30_000;

export class Scheduler {
  private heap: Entry[] = [];
  private readonly byOwner = new Map<string, Set<Entry>>();
  private cancelled = 0;
  private seq = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: VirtualClock,
    /** Awaited before looking for the next due job (in-flight first webhook attempts). */
    private readonly settle: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Jobs waiting (cancelled ones not counted). */
  get size(): number {
    return this.heap.length - this.cancelled;
  }

  schedule(dueAt: number, run: Job, owner?: string): void {
    const entry: Entry = { dueAt, seq: this.seq++, run, owner, cancelled: false };
    this.push(entry);
    if (owner !== undefined) {
      let entries = this.byOwner.get(owner);
      if (!entries) {
        entries = new Set();
        this.byOwner.set(owner, entries);
      }
      entries.add(entry);
    }
    if (dueAt < this.timerDueAt) this.arm();
  }

  /** Drops the owner's waiting jobs (they will not run); the heap is compacted now and then. */
  cancel(owner: string): void {
    const entries = this.byOwner.get(owner);
    if (!entries) return;
    this.byOwner.delete(owner);
    for (const entry of entries) {
      entry.cancelled = true;
      entry.run = NOTHING; // let go of what the job holds (a payment, a delivery)
      this.cancelled++;
    }
    if (this.cancelled > 1024 && this.cancelled * 2 > this.heap.length) this.compact();
  }

  /** Moves the clock `ms` forward, running every job due on the way. Returns how many ran. */
  advance(ms: number): Promise<number> {
    return this.exclusive(async () => {
      await this.settle();
      const target = this.clock.now() + ms;
      const ran = await this.runUntil(target);
      this.clock.moveTo(target);
      return ran;
    });
  }

  /** Runs what is already due (used by the timer and after a reset of the world). */
  runDue(): Promise<number> {
    return this.exclusive(async () => {
      await this.settle();
      return this.runUntil(this.clock.now());
    });
  }

  clear(): void {
    this.heap = [];
    this.byOwner.clear();
    this.cancelled = 0;
    this.disarm();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private async runUntil(target: number): Promise<number> {
    let ran = 0;
    let sinceYield = 0;
    let yieldedAt = performance.now();
    for (let next = this.heap[0]; next && next.dueAt <= target; next = this.heap[0]) {
      this.pop();
      if (next.cancelled) {
        this.cancelled--;
        continue;
      }
      this.forget(next);
      if (++sinceYield >= YIELD_EVERY_JOBS || performance.now() - yieldedAt >= YIELD_AFTER_MS) {
        await yieldToEventLoop();
        sinceYield = 0;
        yieldedAt = performance.now();
      }
      this.clock.moveTo(next.dueAt);
      try {
        await next.run(next.dueAt);
      } catch (error) {
        this.onError(error);
      }
      await this.settle();
      ran++;
    }
    return ran;
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.chain.then(work);
    this.chain = result.then(
      () => this.arm(),
      () => this.arm(),
    );
    return result;
  }

  private forget(entry: Entry): void {
    if (entry.owner === undefined) return;
    const entries = this.byOwner.get(entry.owner);
    entries?.delete(entry);
    if (entries?.size === 0) this.byOwner.delete(entry.owner);
  }

  /** Rebuilds the heap without cancelled entries (Floyd's heapify, O(n)). */
  private compact(): void {
    const live = this.heap.filter((entry) => !entry.cancelled);
    this.heap = live;
    this.cancelled = 0;
    for (let index = (live.length >> 1) - 1; index >= 0; index--) this.siftDown(index);
  }

  private arm(): void {
    this.disarm();
    const next = this.heap[0];
    if (this.stopped || !next) return;
    const delay = Math.min(Math.max(next.dueAt - this.clock.now(), 0), MAX_TIMER_MS);
    this.timerDueAt = next.dueAt;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerDueAt = Infinity;
      this.runDue().catch(this.onError);
    }, delay);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(entry, heap[parent] as Entry)) break;
      heap[index] = heap[parent] as Entry;
      index = parent;
    }
    heap[index] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    heap[0] = last;
    this.siftDown(0);
  }

  private siftDown(start: number): void {
    const heap = this.heap;
    const last = heap[start] as Entry;
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && before(heap[right] as Entry, heap[left] as Entry) ? right : left;
      if (!before(heap[child] as Entry, last)) break;
      heap[index] = heap[child] as Entry;
      index = child;
    }
    heap[index] = last;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}
