/**
 * Back-off and waiting helpers of the client's retry loop (idempotent calls only).
 */

export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Delay before retry number `retry` (1 = the first retry): exponential, capped, with "equal
 * jitter" (half fixed, half random) so that callers that failed together spread out but
 * never retry at once.
 */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number): number {
  const exponential = policy.baseDelayMs * 2 ** Math.max(0, retry - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  const unit = Math.min(Math.max(random(), 0), 1);
  return Math.round(capped / 2 + (capped / 2) * unit);
}

/**
 * Delay before the next attempt: the back-off, or Payflow's Retry-After when that is longer.
 * Undefined when Retry-After exceeds what we are willing to wait inside one call.
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

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
