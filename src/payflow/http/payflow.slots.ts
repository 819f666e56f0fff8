/**
 * The connection slots of one origin: a counting semaphore with as many slots as undici's
 * pool has connections, so that a request waits here (where it can still be given up,
 * certainly unsent) rather than in undici's queue. Waiters can abort without taking a slot.
 */
export class Slots {
  private readonly waiters: (() => void)[] = [];

  constructor(private free: number) {}

  tryTake(): boolean {
    if (this.free <= 0) return false;
    this.free--;
    return true;
  }

  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new Error('aborted'));
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(grant);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next === undefined) this.free++;
    else next();
  }
}
