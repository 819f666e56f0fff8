/**
 * Requests the sandbox answered already but still has to apply: a fault with `applyDelayMs`
 * answers its `status` at once (a gateway's 502/503/504) and runs the real handler that
 * many milliseconds later, as a server behind a gateway that gave up goes on working.
 *
 * Each one is a wall-clock timer (not the virtual clock: the point is a client's own
 * time-out, which runs on real time). A reset cancels every pending one, so that a test's
 * late effect never lands in the next test's state; closing the sandbox cancels them too
 * and waits only for one that is running at that moment, never for the timers.
 *
 * What is pending is bounded, like everything the sandbox holds (docs/sandbox.md): past
 * `maxPending` the oldest pending one runs at once. It lands early but still after its
 * answer (which went out when it was scheduled), where dropping it would lose an effect.
 */

export interface LateApplicationStats {
  /** Scheduled and not yet run. */
  readonly pending: number;
  /** Ran and took effect (the handler returned). */
  readonly applied: number;
  /** Ran and failed (the handler threw: e.g. the payment was gone by then). */
  readonly failed: number;
  /** Cancelled by a reset or by closing before they ran. */
  readonly cancelled: number;
}

/** Pending late applications kept at most; each holds its request (a body up to 16 MiB). */
export const DEFAULT_MAX_PENDING_LATE_APPLICATIONS = 10_000;

export class LateApplications {
  /** Pending ones, oldest first (a Map keeps insertion order). */
  private readonly timers = new Map<NodeJS.Timeout, () => unknown>();
  private readonly running = new Set<Promise<void>>();
  private applied = 0;
  private failed = 0;
  private cancelled = 0;
  private closed = false;

  constructor(private readonly maxPending = DEFAULT_MAX_PENDING_LATE_APPLICATIONS) {}

  /**
   * Runs `apply` after `delayMs`. `apply`'s error is counted, never thrown: the client that
   * sent the request got its answer long ago, and nobody else waits for this one.
   */
  schedule(delayMs: number, apply: () => unknown): void {
    if (this.closed) {
      this.cancelled++;
      return;
    }
    if (this.timers.size >= this.maxPending) this.runOldestNow();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.start(apply);
    }, delayMs);
    // A process that exits without closing the sandbox is not held up by a late effect.
    timer.unref();
    this.timers.set(timer, apply);
  }

  /** Cancels every pending application and zeroes the counts (POST /sandbox/reset). */
  reset(): void {
    this.cancelPending();
    this.applied = 0;
    this.failed = 0;
    this.cancelled = 0;
  }

  /** Cancels what is pending, refuses new ones, and waits for any that is running now. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelPending();
    await Promise.allSettled([...this.running]);
  }

  stats(): LateApplicationStats {
    return {
      pending: this.timers.size,
      applied: this.applied,
      failed: this.failed,
      cancelled: this.cancelled,
    };
  }

  private runOldestNow(): void {
    const oldest = this.timers.entries().next();
    if (oldest.done === true) return;
    const [timer, apply] = oldest.value;
    clearTimeout(timer);
    this.timers.delete(timer);
    this.start(apply);
  }

  private start(apply: () => unknown): void {
    const run = this.run(apply);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private cancelPending(): void {
    for (const timer of this.timers.keys()) clearTimeout(timer);
    this.cancelled += this.timers.size;
    this.timers.clear();
  }

  private async run(apply: () => unknown): Promise<void> {
    try {
      await apply();
      this.applied++;
    } catch {
      this.failed++;
    }
  }
}
