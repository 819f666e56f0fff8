/** Helpers of the commands that act on the order's latest payment. */
import type { CallOptions } from '../../payflow/payflow.types.js';
import type { PaymentStatusEventType, StatusEvent } from '../../payments/payment-status-events.js';
import type { OrderEventType } from '../order-event.schema.js';
import type { OrderCommand } from './order-command.js';
import type { LatestPayment, PrepareContext } from './command-engine.js';
import { mappingFailed } from './order-amounts.js';

/** The payment a command acts on, and the organization its calls name. */
export interface PaymentTarget {
  readonly payment: LatestPayment;
  /** The event's organizationId, else the payment's. */
  readonly organizationId: string | null;
}

/** The order's latest payment that Payflow created; none → mapping_failed ORDER.NO_PAYMENT. */
export function requirePayment<T extends OrderEventType, M>(
  context: PrepareContext<T, M>,
): PaymentTarget {
  const { command, latestPayment } = context;
  if (latestPayment === null) {
    throw mappingFailed(
      'ORDER.NO_PAYMENT',
      `order ${command.orderId} has no payment created at Payflow for ${command.event.type}`,
    );
  }
  return {
    payment: latestPayment,
    organizationId: command.event.organizationId ?? latestPayment.organizationId,
  };
}

export function callOptions(target: PaymentTarget, signal: AbortSignal): CallOptions {
  return target.organizationId === null
    ? { signal }
    : { signal, organizationId: target.organizationId };
}

/** A status event about the target payment. */
export function targetEvent(
  type: PaymentStatusEventType,
  command: OrderCommand,
  target: PaymentTarget,
  data: Record<string, unknown>,
): StatusEvent {
  return {
    type,
    orderId: command.orderId,
    organizationId: target.organizationId,
    paymentId: target.payment.payflowId,
    data: { sourceEventId: command.eventId, ...data },
  };
}
