/**
 * What handling one order event came to, as a value: the runner returns every expected
 * outcome (busy, blocked, in doubt, rejected, waiting for a late effect...) instead of
 * throwing it through its steps, so that each step reads as "what happened next". Only the
 * consumer turns an outcome that did not apply into the error the transport's failure
 * policy decides from (retry, wait, or dead letter, by the error's class): `delivered`.
 *
 * Unexpected failures (Postgres down, a bug) are still thrown: they are not outcomes.
 */
import type {
  BlockedByEarlierFailureError,
  InDoubtError,
  MappingFailedError,
} from '../../errors/dead-letter.errors.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderBusyError } from '../order.errors.js';
import type { LateEffectPendingError, ProbeNotAppliedError } from './attempt.errors.js';

/** The event took effect, or had before. */
export type Applied = { readonly kind: 'applied' } | { readonly kind: 'duplicate' };

/** The event did not take effect now; `error` says why, in the transport's terms. */
export type NotApplied =
  /** Another worker holds the event's attempt (its lease runs): retried later. */
  | { readonly kind: 'busy'; readonly error: OrderBusyError }
  /** An earlier event of the order is dead-lettered: this one waits behind it. */
  | { readonly kind: 'blocked'; readonly error: BlockedByEarlierFailureError }
  /** The call may have taken effect: never sent again, left for a person. */
  | { readonly kind: 'in_doubt'; readonly error: InDoubtError }
  /** Payflow refused the call (its class says whether trying again may help). */
  | { readonly kind: 'rejected'; readonly error: PayflowError }
  /** The event cannot become a Payflow call (unknown payment, bad amounts...). */
  | { readonly kind: 'mapping_failed'; readonly error: MappingFailedError }
  /** Payflow does not show the call yet, but its request may still land: read again later. */
  | { readonly kind: 'waiting_for_late_effect'; readonly error: LateEffectPendingError }
  /** This worker's call did not take effect and can no longer land: the retry sends it again. */
  | { readonly kind: 'send_again'; readonly error: ProbeNotAppliedError };

export type CommandOutcome = Applied | NotApplied;

/** What the consumer answers the transport for an event that took effect. */
export type Delivered = Applied['kind'];

/** The one place an outcome becomes the transport's answer: a value, or the error it decides from. */
export function delivered(outcome: CommandOutcome): Delivered {
  if (outcome.kind === 'applied' || outcome.kind === 'duplicate') return outcome.kind;
  throw outcome.error;
}

export const APPLIED: CommandOutcome = { kind: 'applied' };
export const DUPLICATE: CommandOutcome = { kind: 'duplicate' };
