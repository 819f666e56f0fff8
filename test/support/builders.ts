/**
 * Test data builders for ERP order events (CONTRACT §2): envelopes of every type with
 * valid defaults, the Kafka message around them and the transport's context. Each call
 * gives a fresh eventId; every data builder takes overrides typed like the contract.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { InboundMessage } from '../../src/messaging/messaging.ports.js';
import { OrderEventContext } from '../../src/orders/order-event.context.js';
import {
  parseOrderEvent,
  type ORDER_EVENT_DATA_SCHEMAS,
  type OrderEnvelope,
  type OrderEvent,
  type OrderEventType,
} from '../../src/events/order-event.schema.js';

/** What an ERP may send as `data` of each type (zod input: amounts as text or numbers). */
export type OrderEventInput<T extends OrderEventType> = z.input<
  (typeof ORDER_EVENT_DATA_SCHEMAS)[T]
>;
export type PaymentRequestedInput = OrderEventInput<'order.payment_requested'>;
export type LineInput = PaymentRequestedInput['lines'][number];

/** A date `days` from today (UTC), YYYY-MM-DD. */
export function isoDay(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

export function aLine(overrides: Partial<LineInput> = {}): LineInput {
  return {
    description: 'Service package',
    quantity: 1,
    unitPriceNet: '1000.00',
    taxRate: 25,
    ...overrides,
  };
}

let orderCounter = 0;

/** A unique ERP order id. */
export function anOrderId(prefix = 'SO'): string {
  orderCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${orderCounter}-${randomUUID().slice(0, 8)}`;
}

/** order.payment_requested data: one 1000.00 + 25 % VAT line (gross 1250.00 NOK). */
export function paymentRequestedData(
  overrides: Partial<PaymentRequestedInput> = {},
): PaymentRequestedInput {
  return {
    orderNumber: 'ON-10042',
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari@example.com',
      phone: { countryCode: '+47', number: '41234567' },
      customerNumber: 'C-77',
      billingAddress: { street: 'Storgata 1', postalCode: '0155', city: 'Oslo', countryCode: 'NO' },
    },
    serviceAdvisorEmail: 'advisor@dealer.example',
    vehicles: [
      {
        role: 'new',
        numberPlate: 'EV12345',
        brand: 'Volvo',
        model: 'EX30',
        year: 2026,
        vin: 'YV1ABCDEF12345678',
      },
      { role: 'tradeIn', numberPlate: 'AB12345', brand: 'Saab', model: '9-3', year: '2009' },
    ],
    currency: 'NOK',
    lines: [aLine()],
    dueDate: isoDay(14),
    ...overrides,
  };
}

export interface EnvelopeOptions {
  readonly eventId?: string;
  readonly orderId?: string;
  /** null: no organizationId in the envelope. Default org-1. */
  readonly organizationId?: string | null;
  readonly occurredAt?: string;
}

/** An envelope as the transport hands it to @Payload(). */
export function anEnvelope<T extends OrderEventType>(
  type: T,
  data: OrderEventInput<T>,
  options: EnvelopeOptions = {},
): OrderEnvelope & { type: T } {
  return {
    eventId: options.eventId ?? randomUUID(),
    type,
    occurredAt: options.occurredAt ?? new Date().toISOString(),
    ...(options.organizationId === null
      ? {}
      : { organizationId: options.organizationId ?? 'org-1' }),
    orderId: options.orderId ?? anOrderId(),
    data,
  };
}

/** A validated event (as a handler's command carries it). */
export function anEvent<T extends OrderEventType>(
  type: T,
  data: OrderEventInput<T>,
  options: EnvelopeOptions = {},
): OrderEvent<T> {
  return parseOrderEvent(anEnvelope(type, data, options));
}

let offsetCounter = 0;

export interface MessageOptions {
  readonly topic?: string;
  readonly partition?: number;
  readonly offset?: string;
  readonly headers?: Record<string, string>;
  /** Raw value instead of the envelope's JSON. */
  readonly value?: Buffer | null;
  readonly key?: Buffer | null;
}

/** The Kafka message carrying an envelope (key = orderId, value = its JSON). */
export function aMessage(envelope: OrderEnvelope, options: MessageOptions = {}): InboundMessage {
  offsetCounter += 1;
  return {
    topic: options.topic ?? 'erp.orders.v1',
    partition: options.partition ?? 0,
    offset: options.offset ?? String(offsetCounter),
    key: options.key === undefined ? Buffer.from(envelope.orderId, 'utf8') : options.key,
    value:
      options.value === undefined ? Buffer.from(JSON.stringify(envelope), 'utf8') : options.value,
    headers: options.headers ?? {},
    timestamp: String(Date.now()),
  };
}

/** The @Ctx() of an @EventPattern handler. */
export function aContext(message: InboundMessage, attempt = 1): OrderEventContext {
  return new OrderEventContext([message, attempt]);
}

// ---------------------------------------------------------------- the other event types

export const cancelledData = (
  overrides: Partial<OrderEventInput<'order.cancelled'>> = {},
): OrderEventInput<'order.cancelled'> => ({ reason: 'customer changed their mind', ...overrides });

export const refundRequestedData = (
  overrides: Partial<OrderEventInput<'order.refund_requested'>> = {},
): OrderEventInput<'order.refund_requested'> => ({
  refundId: `R-${randomUUID().slice(0, 8)}`,
  amountGross: '125.00',
  amountNet: '100.00',
  currency: 'NOK',
  lines: [{ description: 'Returned part', quantity: 1, unitPriceNet: '100.00', taxRate: 25 }],
  ...overrides,
});

export const installmentAddedData = (
  overrides: Partial<OrderEventInput<'order.installment_added'>> = {},
): OrderEventInput<'order.installment_added'> => ({
  installmentRef: 'extra-1',
  date: isoDay(120),
  amount: '300.00',
  ...overrides,
});

export const installmentChangedData = (
  overrides: Partial<OrderEventInput<'order.installment_changed'>> = {},
): OrderEventInput<'order.installment_changed'> => ({
  installmentRef: '2',
  date: isoDay(75),
  ...overrides,
});

export const installmentRemovedData = (
  overrides: Partial<OrderEventInput<'order.installment_removed'>> = {},
): OrderEventInput<'order.installment_removed'> => ({ installmentRef: '3', ...overrides });

export const markedPaidData = (
  overrides: Partial<OrderEventInput<'order.marked_paid'>> = {},
): OrderEventInput<'order.marked_paid'> => ({ note: 'paid cash at the desk', ...overrides });

export const resendRequestedData = (
  overrides: Partial<OrderEventInput<'order.payment_resend_requested'>> = {},
): OrderEventInput<'order.payment_resend_requested'> => ({
  paymentMethodId: '000000000000000000000001',
  terminalId: 'terminal-1',
  ...overrides,
});

export const documentAttachedData = (
  overrides: Partial<OrderEventInput<'order.document_attached'>> = {},
): OrderEventInput<'order.document_attached'> => ({
  documentRef: 'invoice-pdf',
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  contentBase64: Buffer.from('%PDF-1.7 test document').toString('base64'),
  ...overrides,
});

export const documentRemovedData = (
  overrides: Partial<OrderEventInput<'order.document_removed'>> = {},
): OrderEventInput<'order.document_removed'> => ({ documentRef: 'invoice-pdf', ...overrides });

export const receiptRequestedData = (
  overrides: Partial<OrderEventInput<'order.terminal_receipt_requested'>> = {},
): OrderEventInput<'order.terminal_receipt_requested'> => ({
  terminalId: 'terminal-1',
  ...overrides,
});
