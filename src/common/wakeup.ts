/**
 * A wake-up signal for polling loops (the outbox relay, the webhook inbox processor): a loop
 * sleeps between passes and whoever just committed work for it cuts the sleep short.
 */

/** `wait` resolves after `ms`, or at once when `wake` was called (before or during it). */
export class Wakeup {
  private pending = false;
  private release: (() => void) | null = null;

  wake(): void {
    const release = this.release;
    if (release) {
      this.release = null;
      release();
    } else {
      this.pending = true;
    }
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.release = null;
        resolve();
      }, ms);
      this.release = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
