/**
 * The one back-off of the house: capped exponential delays with jitter, so that callers
 * that failed together spread out. The inbound-events transport, the dead-letter sink's
 * retries and the Payflow client use equal jitter (half fixed, half random: never sooner
 * than half the delay); the outbox relay's bucket back-off spreads ±20 % around the delay;
 * the order engine's retries of a record use the plain doubling (`none`).
 */
import { sleep } from './sleep.js';

export interface BackoffPolicy {
  /** Delay before the first retry, doubled per retry. */
  readonly baseDelayMs: number;
  /** Cap of the exponential delay. */
  readonly maxDelayMs: number;
  /**
   * `equal` (default): half fixed, half random. `spread`: ±20 % around the delay. `none`:
   * the capped delay itself.
   */
  readonly jitter?: 'equal' | 'spread' | 'none';
}

/** Delay before retry number `retry` (1 = the first retry); `random` draws from [0, 1). */
export function backoffDelayMs(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponential = policy.baseDelayMs * 2 ** Math.min(Math.max(0, retry - 1), 40);
  const capped = Math.min(policy.maxDelayMs, exponential);
  if (policy.jitter === 'none') return capped;
  const drawn = random();
  const unit = Number.isFinite(drawn) ? Math.min(Math.max(drawn, 0), 1) : 0;
  if (policy.jitter === 'spread') return Math.round(capped * (0.8 + unit * 0.4));
  return Math.round(capped / 2 + (capped / 2) * unit);
}

/** Exponential back-off with ±20 % jitter: initial × 2^(failures-1), capped at max. */
export function backoffDelay(failures: number, initialMs: number, maxMs: number): number {
  return backoffDelayMs(failures, { baseDelayMs: initialMs, maxDelayMs: maxMs, jitter: 'spread' });
}

export interface RetryOptions {
  /** Tries after the first one. */
  readonly retries: number;
  /** The wait before retry n is `backoffDelayMs(n, backoff, random)`. */
  readonly backoff: BackoffPolicy;
  readonly random?: () => number;
}

/**
 * `work`'s value, trying it again after a back-off each time it fails, at most `retries`
 * more times; when the last try fails too, its error is thrown.
 */
export async function retryWithBackoff<T>(
  work: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  for (let retry = 1; retry <= options.retries; retry += 1) {
    try {
      return await work();
    } catch {
      await sleep(backoffDelayMs(retry, options.backoff, options.random));
    }
  }
  return work();
}
