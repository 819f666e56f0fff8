/**
 * What a failed Payflow call means for the command that made it:
 *
 * - `no_effect`: Payflow did not apply it (nothing was sent, a 4xx or a 503 answer). The attempt
 *   is recorded as failed and the error goes on (transient → retried, permanent →
 *   dead-lettered as rejected_by_payflow).
 * - `in_doubt`: it may have been applied (sent, then a time-out, reset, a 5xx other than 503, or an unusable
 *   2xx). It is never repeated blindly: the attempt is in doubt.
 * - `unknown`: not a Payflow error at all (a bug): the attempt is left as started, so that
 *   a redelivery after its lease treats it as in doubt if it was sent (`sent_at`), and
 *   sends it if it was not.
 *
 * A call that is harmless to repeat (PUT, re-send) is never in doubt: its unclear
 * failures count as `no_effect` and are retried.
 */
import { PayflowError } from '../../../payflow/payflow.errors.js';

export type CallFailure =
  | { readonly kind: 'no_effect'; readonly error: PayflowError }
  | { readonly kind: 'in_doubt'; readonly error: PayflowError }
  | { readonly kind: 'unknown'; readonly error: unknown };

export function classifyCallFailure(error: unknown, repeatable: boolean): CallFailure {
  if (!isPayflowError(error)) return { kind: 'unknown', error };
  if (!error.mayHaveTakenEffect || repeatable) return { kind: 'no_effect', error };
  return { kind: 'in_doubt', error };
}

function isPayflowError(error: unknown): error is PayflowError {
  return error instanceof PayflowError;
}
