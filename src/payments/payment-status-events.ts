/**
 * Messages of the payment status topic (CONTRACT §3): keyed by order id, a JSON envelope
 * `{ eventId, type, occurredAt, organizationId, orderId, paymentId, data }`, with
 * `content-type` and `x-event-type` headers. Money inside `data` is decimal text in major
 * units beside a `currency` field. The schema of each type is in
 * src/events/payment-status-events.schema.ts; OutboxWriter checks every event against it.
 */
import { eventMessage, stampEvent } from '../events/event-message.js';
import type { OutboundMessage } from '../messaging/messaging.ports.js';

export const PAYMENT_STATUS_EVENT_TYPES = [
  'payment.created',
  'payment.creation_failed',
  'payment.status_changed',
  'installment.status_changed',
  'payment.terminal_failed',
  'payment.cancelled',
  'payment.refunded',
  'payment.marked_paid',
  'payment.resent',
  'document.attached',
  'document.removed',
  'installment.added',
  'installment.changed',
  'installment.removed',
  'receipt.printed',
] as const;
export type PaymentStatusEventType = (typeof PAYMENT_STATUS_EVENT_TYPES)[number];

/** A status event before it gets its id and time. */
export interface StatusEvent {
  readonly type: PaymentStatusEventType;
  readonly orderId: string;
  readonly organizationId: string | null;
  /** Payflow's payment id, or null when Payflow has none (yet). */
  readonly paymentId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The outbox message of a status event, with a fresh event id. */
export function statusEventMessage(
  topic: string,
  event: StatusEvent,
  now: Date = new Date(),
): OutboundMessage {
  return eventMessage(topic, event.orderId, stampEvent(event, now));
}
