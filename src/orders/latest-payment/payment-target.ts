/** Helpers of the commands that act on the order's latest payment. */
import { Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import type { CallOptions } from '../../payflow/payflow.types.js';
import type {
  PaymentStatusEventType,
  StatusEvent,
  StatusEventData,
} from '../../payments/payment-status-events.js';
import { PaymentRepository, type LatestPayment } from '../../payments/payment.repository.js';
import type { OrderCommand } from '../engine/order-command.js';
import { mappingFailed } from '../mapping/order-amounts.js';

/** The payment a command acts on, and the organization its calls name. */
export interface PaymentTarget {
  readonly payment: LatestPayment;
  /** The event's organizationId, else the payment's. */
  readonly organizationId: string | null;
}

/**
 * Finds the payment a command acts on, before its begin transaction (the events of one
 * order are handled one at a time, so the order's earlier events are committed by then).
 */
@Injectable()
export class PaymentTargets {
  constructor(
    private readonly database: Database,
    private readonly payments: PaymentRepository,
  ) {}

  /** The order's latest payment that Payflow created; none → mapping_failed ORDER.NO_PAYMENT. */
  async require(command: OrderCommand): Promise<PaymentTarget> {
    const latest = await this.payments.latestCreated(this.database.sql, command.orderId);
    if (latest === null) {
      throw mappingFailed(
        'ORDER.NO_PAYMENT',
        `order ${command.orderId} has no payment created at Payflow for ${command.event.type}`,
      );
    }
    return {
      payment: latest,
      organizationId: command.event.organizationId ?? latest.organizationId,
    };
  }
}

export function callOptions(target: PaymentTarget, signal: AbortSignal): CallOptions {
  return target.organizationId === null
    ? { signal }
    : { signal, organizationId: target.organizationId };
}

/** The status events a command answers with: each carries the ERP event's id. */
type CommandOutcomeType = {
  [K in PaymentStatusEventType]: StatusEventData<K> extends { readonly sourceEventId: string }
    ? K
    : never;
}[PaymentStatusEventType];

/** A status event about the target payment; `data` is its schema's, but `sourceEventId`. */
export function targetEvent<T extends CommandOutcomeType>(
  type: T,
  command: OrderCommand,
  target: PaymentTarget,
  data: Omit<StatusEventData<T>, 'sourceEventId'>,
): StatusEvent<T> {
  // TypeScript cannot see that Omit<D, 'sourceEventId'> plus sourceEventId is D for a
  // generic T; the signature above is what checks the callers.
  const event = {
    type,
    orderId: command.orderId,
    organizationId: target.organizationId,
    paymentId: target.payment.payflowId,
    data: { sourceEventId: command.eventId, ...data },
  };
  return event as StatusEvent<T>;
}
