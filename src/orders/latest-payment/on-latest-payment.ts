/**
 * The shape most order commands share: find the order's latest payment (the target), map
 * the event against it, make one Payflow call about it, complete. `onLatestPayment` builds
 * the runner's CommandSpec from only what differs, so that a handler reads as
 * map → call → probe → complete, with the target's organization on every call.
 */
import type { BatchSql } from '../../database/transaction-batcher.js';
import type { CallOptions } from '../../payflow/payflow.types.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import type {
  CommandSpec,
  Completed,
  PayflowCallContext,
  ProbeVerdict,
} from '../engine/command-spec.js';
import type { OrderCommand } from '../engine/order-command.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import { PaymentTargets, callOptions, type PaymentTarget } from './payment-target.js';

/** A command's state with the payment it acts on. */
export type OnTarget<S> = S & { readonly target: PaymentTarget };

export interface PaymentCommandSpec<T extends OrderEventType, S, R, B = undefined> {
  readonly type: T;
  /** Repeating the call is harmless (PUT, re-send): an unclear failure is retried. */
  readonly repeatable: boolean;
  /** Mapping or checks whose failure comes before "the order has no payment". */
  readonly before?: (command: OrderCommand<T>) => B | Promise<B>;
  /** With the target (and what `before` gave): what the call and completion need. */
  readonly map: (command: OrderCommand<T>, target: PaymentTarget, before: B) => S | Promise<S>;
  /** The Payflow call, with the target's organization and the runner's context (optionsOn). */
  readonly call: (state: OnTarget<S>, options: CallOptions) => Promise<R>;
  /** Reads Payflow to tell whether a call that may have taken effect did (CommandSpec.probe). */
  readonly probe?: (state: OnTarget<S>, options: CallOptions) => Promise<ProbeVerdict<R>>;
  readonly complete: (
    tx: BatchSql,
    completed: Completed<T, OnTarget<S>, R>,
  ) => Promise<StatusEvent[]>;
}

/**
 * The client options of a call on the target: the runner's context (signal, send hook,
 * trace) and the target's organization.
 */
function optionsOn(target: PaymentTarget, context: PayflowCallContext): CallOptions {
  return { ...context, ...callOptions(target, context.signal) };
}

/** The runner's spec of a command on the order's latest payment created at Payflow. */
export function onLatestPayment<T extends OrderEventType, S, R, B = undefined>(
  targets: PaymentTargets,
  spec: PaymentCommandSpec<T, S, R, B>,
): CommandSpec<T, OnTarget<S>, R> {
  const probe = spec.probe;
  return {
    type: spec.type,
    repeatable: spec.repeatable,
    map: async (command) => {
      const before = (spec.before === undefined ? undefined : await spec.before(command)) as B;
      const target = await targets.require(command);
      const state = await spec.map(command, target, before);
      return { state: { ...state, target }, paymentId: target.payment.id };
    },
    call: (state, context) => spec.call(state, optionsOn(state.target, context)),
    ...(probe === undefined
      ? {}
      : {
          probe: (state: OnTarget<S>, context: PayflowCallContext) =>
            probe(state, optionsOn(state.target, context)),
        }),
    complete: spec.complete,
  };
}
