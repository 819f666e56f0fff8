/**
 * Messages of the payment status topic (CONTRACT §3): keyed by order id, a JSON envelope
 * `{ eventId, type, occurredAt, organizationId, orderId, paymentId, data }`, with
 * `content-type` and `x-event-type` headers. Money inside `data` is decimal text in major
 * units beside a `currency` field. The schema of each type is in
 * src/events/payment-status-events.schema.ts; `StatusEvent` types each event's `data` from
 * it, so the compiler checks every builder, and OutboxWriter checks every event against it
 * again at run time.
 */
import type { OutboundEventData, OutboundEventType } from '../events/outbound-events.js';

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
] as const satisfies readonly OutboundEventType[];
export type PaymentStatusEventType = (typeof PAYMENT_STATUS_EVENT_TYPES)[number];

/** The `data` of a status event of type `T`, typed from its schema. */
export type StatusEventData<T extends PaymentStatusEventType> = OutboundEventData<T>;

/**
 * A status event before it gets its id and time: its type and its data as one typed pair
 * (a union over the types in `T`).
 */
export type StatusEvent<T extends PaymentStatusEventType = PaymentStatusEventType> = {
  readonly [K in T]: {
    readonly type: K;
    readonly orderId: string;
    readonly organizationId: string | null;
    /** Payflow's payment id, or null when Payflow has none (yet). */
    readonly paymentId: string | null;
    readonly data: StatusEventData<K>;
  };
}[T];
