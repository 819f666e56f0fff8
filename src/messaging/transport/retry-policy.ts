/**
 * Back-off and retry budget of the inbound-events transport: how long an order waits before
 * its failing event is tried again, and when to give up (dead letter `retries_exhausted`).
 */
import { backoffDelayMs } from '../../timing/backoff.js';

export interface RetryPolicy {
  /** Attempts in total, the first included (RETRY_MAX_ATTEMPTS). */
  readonly maxAttempts: number;
  /** No attempt starts later than this after the first one (RETRY_MAX_DURATION). */
  readonly maxDurationMs: number;
  /** Delay before the first retry, doubled per retry. */
  readonly baseDelayMs: number;
  /** Cap of the exponential delay (Retry-After may ask for more). */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 10,
  maxDurationMs: 15 * 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
};

export type RetryVerdict =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly why: 'attempts' | 'duration' };

export interface AttemptHistory {
  /** The attempt that just failed (1 = the first). */
  readonly attempt: number;
  /** When the first attempt started (epoch ms). */
  readonly firstAttemptAt: number;
  readonly now: number;
  /** A lower bound for the delay, e.g. Payflow's Retry-After. */
  readonly minDelayMs?: number | undefined;
}

/**
 * Whether to try again after a transient failure, and when. The back-off is shortened to
 * fit the remaining budget; a Retry-After that does not fit ends the retries.
 */
export function nextRetry(
  history: AttemptHistory,
  policy: RetryPolicy,
  random: () => number,
): RetryVerdict {
  if (history.attempt >= policy.maxAttempts) return { retry: false, why: 'attempts' };
  const remaining = history.firstAttemptAt + policy.maxDurationMs - history.now;
  if (remaining <= 0) return { retry: false, why: 'duration' };
  const minDelay = Math.max(0, history.minDelayMs ?? 0);
  if (minDelay > remaining) return { retry: false, why: 'duration' };
  const backoff = Math.min(backoffDelayMs(history.attempt, policy, random), remaining);
  return { retry: true, delayMs: Math.max(backoff, minDelay) };
}
