/**
 * The delay of the client's retry loop (idempotent calls only): the house back-off
 * (src/timing/backoff.ts, equal jitter: never sooner than half the delay), or Payflow's
 * Retry-After when that is longer.
 */
import { backoffDelayMs, type BackoffPolicy } from '../../timing/backoff.js';

/**
 * Delay before retry number `retry` (1 = the first retry). Undefined when Retry-After
 * exceeds what we are willing to wait inside one call.
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: BackoffPolicy & { readonly maxRetryAfterMs: number },
  random: () => number,
): number | undefined {
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) return undefined;
  return Math.max(backoffDelayMs(retry, policy, random), retryAfterMs ?? 0);
}
