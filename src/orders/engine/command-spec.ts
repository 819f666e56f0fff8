/**
 * One event type's part in the command runner: how to map the event (before any
 * transaction), the Payflow call, what its success changes, and what a failure records.
 * Everything else (the guard, the attempt, the send mark, exactly once) is the runner's.
 */
import type { Sql } from '../../database/database.js';
import type { BatchSql } from '../../database/transaction-batcher.js';
import type { MappingFailedError } from '../../errors/dead-letter.errors.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import type { PayflowSendHook } from '../../payflow/payflow-send-hook.js';
import type { PayflowTraceHeaders } from '../../payflow/payflow-trace.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { NewPayment } from '../new-payment/new-payment.js';
import type { OrderCommand } from './order-command.js';

/**
 * What the runner hands a spec's Payflow call, for the handler to pass to the client method
 * as its options (with its organization): typed, so that deriving a new signal cannot lose
 * the send hook or the trace.
 */
export interface PayflowCallContext {
  /** The call's deadline. */
  readonly signal: AbortSignal;
  /** Commits `sent_at` just before the request leaves (payflow-send-hook.ts); absent on probes. */
  readonly onSend?: PayflowSendHook;
  /** The command's trace headers (payflow-trace.ts). */
  readonly trace?: PayflowTraceHeaders;
}

/** What `map` makes of an event. */
export interface Mapped<S> {
  /** Everything the call and the completion need. */
  readonly state: S;
  /** The payment the attempt is about (payments.id), when there is one. */
  readonly paymentId: string | null;
  /**
   * A command that creates a payment: its rows, written with the attempt before the call
   * (`paymentId` is then the new payment's id; a retry may reuse an earlier row).
   */
  readonly newPayment?: NewPayment;
}

/** A call that succeeded, for `complete`. */
export interface Completed<T extends OrderEventType, S, R> {
  readonly command: OrderCommand<T>;
  readonly state: S;
  readonly result: R;
  /** The attempt's payment (for a creation, the row actually written). */
  readonly paymentId: string | null;
}

/** What went wrong, for `onFailure`. */
export type CommandFailure<S> =
  /** Payflow refused the call (permanent, no effect). */
  | {
      readonly kind: 'rejected';
      readonly state: S;
      readonly paymentId: string | null;
      readonly error: PayflowError;
    }
  /** The call may have been applied; it is never sent again (once per attempt). */
  | { readonly kind: 'in_doubt'; readonly paymentId: string | null; readonly cause: string }
  /** The mapping failed (recorded after the guard, so duplicates stay no-ops). */
  | { readonly kind: 'mapping_failed'; readonly error: MappingFailedError };

/** What a probe read at Payflow and what it showed (recorded on the attempt, no personal data). */
export interface ProbeEvidence {
  /** e.g. `GET paymentStatus`. */
  readonly read: string;
  /** e.g. `paymentStatus REJECTED`. */
  readonly shown: string;
}

/**
 * What reading Payflow says about a call that may have taken effect:
 * - `took_effect`: it did; `result` is what the success path needs (`complete` runs as after
 *   a successful call);
 * - `not_applied`: it did not; the attempt is taken over and the call sent again;
 * - `undecided`: what Payflow shows cannot tell; the call stays in doubt for a person.
 */
export type ProbeVerdict<R> =
  | { readonly kind: 'took_effect'; readonly result: R; readonly evidence: ProbeEvidence }
  | { readonly kind: 'not_applied'; readonly evidence: ProbeEvidence }
  | { readonly kind: 'undecided'; readonly evidence: ProbeEvidence };

/** What is recorded on the attempt (`probe_outcome`): a verdict, or Payflow could not be read. */
export type ProbeOutcome = ProbeVerdict<unknown>['kind'] | 'unreadable';

export interface CommandSpec<T extends OrderEventType, S, R> {
  readonly type: T;
  /** Repeating the call is harmless (PUT, re-send): an unclear failure is retried, never in doubt. */
  readonly repeatable: boolean;
  /**
   * Before any transaction: mapping, the payment it acts on, and checks that need Payflow
   * or Postgres (unknown references). A MappingFailedError from here takes effect after the
   * guard, so that a processed event stays a no-op and a blocked order stays blocked.
   */
  map(command: OrderCommand<T>): Promise<Mapped<S>>;
  /** The Payflow call; `context` goes to the client method as its options. */
  call(state: S, context: PayflowCallContext): Promise<R>;
  /**
   * Reads Payflow's own state to tell whether a call that may have taken effect did
   * (outside any transaction). Throws a PayflowError when Payflow cannot be read (the runner
   * retries, then parks the call in doubt). Without it, such a call is in doubt for a person.
   */
  probe?(state: S, context: PayflowCallContext): Promise<ProbeVerdict<R>>;
  /**
   * In the complete transaction: state changes and the status events of the outcome. It may
   * `tx.defer` its writes to the end of the batch (one statement for all the batch's events)
   * when they cannot fail for one event's data.
   */
  complete(tx: BatchSql, completed: Completed<T, S, R>): Promise<StatusEvent[]>;
  /** In the transaction that records a failure (see CommandFailure). */
  onFailure?(tx: Sql, failure: CommandFailure<S>, command: OrderCommand<T>): Promise<StatusEvent[]>;
}

/**
 * The handler of one order event type: its part of the protocol (`spec`), which the runner
 * carries out. Every handler has this shape, the one that creates a payment included; the
 * consumer hands each event to its handler's spec, and nothing else calls Payflow for it.
 */
export interface OrderEventHandler<T extends OrderEventType> {
  readonly spec: CommandSpec<T, unknown, unknown>;
}
