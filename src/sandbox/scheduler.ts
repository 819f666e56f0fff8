/**
 * Time-ordered jobs on the virtual clock: webhook retries and installment debits.
 *
 * Jobs run one at a time, in (due time, insertion) order, from two drivers:
 * - `advance(ms)` moves the clock and runs every job that falls due on the way, each at its
 *   own due time, awaiting it (and whatever `settle` waits for) before the next one;
 * - a real-time timer, so a sandbox left running also retries and debits by itself.
 */
import type { VirtualClock } from './clock.js';

export type Job = (at: number) => Promise<void> | void;

interface Entry {
  dueAt: number;
  seq: number;
  run: Job;
}

/** The real-time timer never sleeps longer than this, so clock advances are picked up. */
const MAX_TIMER_MS = 30_000;

export class Scheduler {
  private readonly heap: Entry[] = [];
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

  get size(): number {
    return this.heap.length;
  }

  schedule(dueAt: number, run: Job): void {
    this.push({ dueAt, seq: this.seq++, run });
    if (dueAt < this.timerDueAt) this.arm();
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
    this.heap.length = 0;
    this.disarm();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private async runUntil(target: number): Promise<number> {
    let ran = 0;
    for (let next = this.heap[0]; next && next.dueAt <= target; next = this.heap[0]) {
      this.pop();
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
    let index = 0;
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
