/**
 * Small pieces the outbox relay is built from, kept apart so that each can be read (and
 * unit-tested) on its own: the advisory-lock key space, the wake-up signal, bounded
 * concurrency and the retry back-off.
 */

/**
 * Postgres advisory locks of the relay, in the two-int4 key form `(namespace, n)` so that
 * they can never collide with single-bigint keys (e.g. the test bed's template lock).
 * - BUCKET_OWNER (session level, on the relay's lock connection): "this replica owns
 *   bucket n". Lost with the session when a replica dies.
 * - BUCKET_FENCE (transaction level, taken by every batch): only one transaction at a time
 *   publishes from bucket n, whoever owns it. This is what keeps per-key order even when
 *   ownership is confused (a lock connection that dropped, a `flush()` from a process that
 *   owns nothing, the operator CLI).
 * - MEMBERS (shared, session level): one holder per running relay; their count decides
 *   each replica's fair share of the buckets.
 */
export const RELAY_LOCK_NAMESPACE = {
  BUCKET_OWNER: 0x6f627801,
  BUCKET_FENCE: 0x6f627802,
  MEMBERS: 0x6f627803,
} as const;

/** A wake-up signal: `wait` resolves after `ms`, or at once when `wake` was called. */
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

/** Runs `work` over `items` with at most `limit` at once; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

/** Exponential back-off with ±20 % jitter: initial × 2^(failures-1), capped at max. */
export function backoffDelay(failures: number, initialMs: number, maxMs: number): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
