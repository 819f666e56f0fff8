/**
 * A wake-up signal for polling loops (the outbox relay, the webhook inbox processor): a loop
 * sleeps between passes and whoever just committed work for it cuts the sleep short.
 */

/**
 * `wait` resolves after `ms` (with false), or at once when `wake` was called before or
 * during it (with true).
 */
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

  wait(ms: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.release = null;
        resolve(false);
      }, ms);
      this.release = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}
