/**
 * An ERP event that `supersedes` an earlier one (CONTRACT §10) must settle that before its
 * handler runs: the replaced event's dead letter blocks the order, and the engine would
 * park the new event behind it. The consumer asks the SupersedeStep first; its
 * implementation lives with the dead letters it reads and discards
 * (src/dead-letters/supersede), a floor above, and reaches the consumer through this port.
 *
 * The step resolves when the event may go on to its handler (the replaced event is
 * discarded in its favour, now or by an earlier delivery), and rejects with
 * SupersedeRefusedError when it must not take effect: the failure policy dead-letters it
 * as `supersede_refused`, like any other error that names its dead-letter reason.
 */
import { EventRejectedError } from '../../errors/dead-letter.errors.js';
import type { EventTrace } from '../../events/event-message.js';
import type { OrderEventType } from '../../events/order-event.schema.js';

/** The event that replaces another, as the step needs it. */
export interface SupersedingEvent {
  readonly eventId: string;
  readonly type: OrderEventType;
  readonly orderId: string;
  readonly organizationId: string | null;
  /** The eventId of the earlier event of the order that this one replaces. */
  readonly supersedes: string;
  /** The trace of the delivery, for the `event.discarded` it writes. */
  readonly trace?: EventTrace;
}

export interface SupersedeStep {
  /** Resolves when the event may take effect; rejects with SupersedeRefusedError otherwise. */
  prepare(event: SupersedingEvent): Promise<void>;
}

export const SUPERSEDE_STEP = Symbol('SUPERSEDE_STEP');

/** The event may not replace the one it names: it is dead-lettered `supersede_refused`. */
export class SupersedeRefusedError extends EventRejectedError {
  readonly deadLetterReason = 'supersede_refused';
  readonly code = 'EVENT.SUPERSEDE_REFUSED';
}

/**
 * Where no step is composed (an application without the dead letters): every superseding
 * event is refused, never let through, since letting it through unchecked could make a
 * second payment beside the one it was meant to replace.
 */
export const NO_SUPERSEDE_STEP: SupersedeStep = {
  prepare: (event) =>
    Promise.reject(
      new SupersedeRefusedError(
        `event ${event.eventId} supersedes ${event.supersedes}, but this worker has no supersede step`,
        { metadata: { eventId: event.eventId, orderId: event.orderId } },
      ),
    ),
};
