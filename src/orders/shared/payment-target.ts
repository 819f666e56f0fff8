/** Helpers of the commands that act on the order's latest payment. */
import { Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import type { CallOptions } from '../../payflow/payflow.types.js';
import type { PaymentStatusEventType, StatusEvent } from '../../payments/payment-status-events.js';
import { PaymentRepository, type LatestPayment } from '../../payments/payment.repository.js';
import type { OrderCommand } from '../engine/order-command.js';
import { mappingFailed } from './order-amounts.js';

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
