/**
 * The one place that turns a failure of an order event into "retry" or "dead letter". It
 * reads the error's own fields (AppError: `deadLetterReason`, `transient`, `retryAfterMs`),
 * nothing else:
 *
 * | error                                                       | decision                         |
 * |-------------------------------------------------------------|----------------------------------|
 * | AppError with a `deadLetterReason`: EventRejectedError (invalid_json, invalid_event, mapping_failed, blocked_by_earlier_failure, in_doubt), PayflowError with transient = false (422, 400, 401, 403, 404, 409 …: rejected_by_payflow) | dead letter at once, that reason |
 * | any other AppError, transient = false                       | dead letter `mapping_failed` at once (it declares that retrying cannot help) |
 * | AppError, transient = true (Payflow network, time-out, 5xx, 429 …) | retry this order with back-off  |
 * | AppError, transient and `waitsForOther` (OrderBusy: another worker's lease runs) | retry at the first back-off step; spends no attempt, only duration |
 * | AppError, transient with `waitsUntilMs` (a call held for a late effect) | retry after retryAfterMs; spends no attempt and no duration: the wait ends by itself then |
 * | AppError with retryAfterMs (Payflow 429 with Retry-After)   | retry, not sooner than Retry-After |
 * | anything else (a bug, a database error, a non-Error value)  | retry this order with back-off   |
 * | retry beyond the budget (attempts or duration)              | dead letter `retries_exhausted`, last error in x-dlq-error |
 *
 * And for a Kafka client that stopped on an error its library does not retry
 * (`decideClientStop`): a transient AppError (KafkaAuthorizationError: an ACL withdrawn,
 * which an operator grants again) is waited out, the client starting again after a
 * back-off; anything else stops it for good (the process exits and is restarted).
 */
import { AppError, type DeadLetterReason } from '../../errors/app-error.js';
import { nextRetry, type AttemptHistory, type RetryPolicy } from './retry-policy.js';

export type FailureClass =
  | { readonly kind: 'dead_letter'; readonly reason: DeadLetterReason }
  | {
      readonly kind: 'retry';
      /** `transient`: the error says so; `unknown`: not one of ours, retried to be safe. */
      readonly cause: 'transient' | 'unknown';
      readonly retryAfterMs: number | undefined;
      /** False for a wait on someone else's work (`waitsForOther`): not a failed try. */
      readonly spendsAttempt: boolean;
      /** A wait whose end is known (`waitsUntilMs`): bounded by itself, not by the budget. */
      readonly waitsUntilMs: number | undefined;
    };

/** Classifies a failure by the error alone (no budget involved). */
export function classifyFailure(error: unknown): FailureClass {
  if (!(error instanceof AppError)) {
    return {
      kind: 'retry',
      cause: 'unknown',
      retryAfterMs: undefined,
      spendsAttempt: true,
      waitsUntilMs: undefined,
    };
  }
  if (error.deadLetterReason !== undefined) {
    return { kind: 'dead_letter', reason: error.deadLetterReason };
  }
  if (!error.transient) return { kind: 'dead_letter', reason: 'mapping_failed' };
  return {
    kind: 'retry',
    cause: 'transient',
    retryAfterMs: error.retryAfterMs,
    spendsAttempt: error.waitsForOther !== true && error.waitsUntilMs === undefined,
    waitsUntilMs: error.waitsUntilMs,
  };
}

export type FailureDecision =
  | { readonly action: 'dead_letter'; readonly reason: DeadLetterReason }
  | {
      readonly action: 'retry';
      readonly delayMs: number;
      readonly cause: 'transient' | 'unknown';
      /** Whether this failure counts against the attempts budget (see classifyFailure). */
      readonly spendsAttempt: boolean;
    };

/**
 * Classification plus the retry budget: what to do after a try failed, `history.attempt`
 * being the attempts spent so far, this one included when it spends one. A wait on someone
 * else's work is retried at the first back-off step and is bounded by the duration budget
 * alone.
 */
export function decideFailure(
  error: unknown,
  history: Omit<AttemptHistory, 'minDelayMs'>,
  policy: RetryPolicy,
  random: () => number,
): FailureDecision {
  const failure = classifyFailure(error);
  switch (failure.kind) {
    case 'dead_letter':
      return { action: 'dead_letter', reason: failure.reason };
    case 'retry': {
      const { spendsAttempt } = failure;
      if (failure.waitsUntilMs !== undefined) {
        // A call held for a late effect: its window, not the budget, bounds the wait.
        const delayMs = Math.max(0, failure.retryAfterMs ?? policy.baseDelayMs);
        return { action: 'retry', delayMs, cause: failure.cause, spendsAttempt: false };
      }
      const verdict = spendsAttempt
        ? nextRetry({ ...history, minDelayMs: failure.retryAfterMs }, policy, random)
        : nextRetry(
            { ...history, attempt: 1, minDelayMs: failure.retryAfterMs },
            { ...policy, maxAttempts: Number.POSITIVE_INFINITY },
            random,
          );
      if (!verdict.retry) return { action: 'dead_letter', reason: 'retries_exhausted' };
      return { action: 'retry', delayMs: verdict.delayMs, cause: failure.cause, spendsAttempt };
    }
  }
}

/** What becomes of a Kafka client that stopped on an error its library does not retry. */
export type ClientStopDecision = 'restart_after_backoff' | 'give_up';

/** See the table above: by the error's class alone, like the rest of this file. */
export function decideClientStop(error: unknown): ClientStopDecision {
  return error instanceof AppError && error.transient ? 'restart_after_backoff' : 'give_up';
}
