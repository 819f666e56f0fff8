import { describe, expect, it } from '@jest/globals';
import { PATTERN_HANDLER_METADATA, PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { PatternHandler } from '@nestjs/microservices/enums/pattern-handler.enum.js';
import { InvalidEventError } from '../errors/dead-letter.errors.js';
import {
  aContext,
  aMessage,
  anEnvelope,
  cancelledData,
  documentAttachedData,
  documentRemovedData,
  installmentAddedData,
  installmentChangedData,
  installmentRemovedData,
  markedPaidData,
  paymentRequestedData,
  receiptRequestedData,
  refundRequestedData,
  resendRequestedData,
} from '../../test/support/builders.js';
import type { OrderCommand } from './engine/order-command.js';
import {
  ORDER_EVENT_TYPES,
  type OrderEnvelope,
  type OrderEventType,
} from '../events/order-event.schema.js';
import { OrdersConsumer } from './orders.consumer.js';

type Method = (envelope: OrderEnvelope, ctx: ReturnType<typeof aContext>) => Promise<unknown>;

/** The consumer's @EventPattern methods by pattern, the way the transport finds them. */
function patterns(consumer: OrdersConsumer): Map<string, Method[]> {
  const found = new Map<string, Method[]>();
  const prototype = Object.getPrototypeOf(consumer) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const method = prototype[name];
    if (typeof method !== 'function' || name === 'constructor') continue;
    const metadata: unknown = Reflect.getMetadata(PATTERN_METADATA, method);
    if (!Array.isArray(metadata)) continue;
    expect(Reflect.getMetadata(PATTERN_HANDLER_METADATA, method)).toBe(PatternHandler.EVENT);
    for (const pattern of metadata as string[]) {
      found.set(pattern, [...(found.get(pattern) ?? []), (method as Method).bind(consumer)]);
    }
  }
  return found;
}

/**
 * The consumer with a runner that records each command and the spec it was handed, and
 * handlers that are only their type's spec.
 */
function recordingConsumer() {
  const received: { command: OrderCommand; spec: string }[] = [];
  const runner = {
    run: (command: OrderCommand, spec: { type: string }) => {
      received.push({ command, spec: spec.type });
      return Promise.resolve({ kind: 'applied' } as const);
    },
  };
  const handlers = ORDER_EVENT_TYPES.map((type) => ({ spec: { type } }));
  const consumer = new (OrdersConsumer as unknown as new (...args: unknown[]) => OrdersConsumer)(
    runner,
    ...handlers,
  );
  return { consumer, received };
}

const SAMPLES: { [T in OrderEventType]: () => OrderEnvelope } = {
  'order.payment_requested': () => anEnvelope('order.payment_requested', paymentRequestedData()),
  'order.cancelled': () => anEnvelope('order.cancelled', cancelledData()),
  'order.refund_requested': () => anEnvelope('order.refund_requested', refundRequestedData()),
  'order.installment_added': () => anEnvelope('order.installment_added', installmentAddedData()),
  'order.installment_changed': () =>
    anEnvelope('order.installment_changed', installmentChangedData()),
  'order.installment_removed': () =>
    anEnvelope('order.installment_removed', installmentRemovedData()),
  'order.marked_paid': () => anEnvelope('order.marked_paid', markedPaidData()),
  'order.payment_resend_requested': () =>
    anEnvelope('order.payment_resend_requested', resendRequestedData()),
  'order.document_attached': () => anEnvelope('order.document_attached', documentAttachedData()),
  'order.document_removed': () => anEnvelope('order.document_removed', documentRemovedData()),
  'order.terminal_receipt_requested': () =>
    anEnvelope('order.terminal_receipt_requested', receiptRequestedData()),
};

describe('OrdersConsumer', () => {
  it('declares exactly one @EventPattern per order event type', () => {
    const { consumer } = recordingConsumer();
    const found = patterns(consumer);
    expect([...found.keys()].sort()).toEqual([...ORDER_EVENT_TYPES].sort());
    for (const methods of found.values()) expect(methods).toHaveLength(1);
  });

  it('hands each type to its handler as a command with the event and its source', async () => {
    const { consumer, received } = recordingConsumer();
    const found = patterns(consumer);
    for (const type of ORDER_EVENT_TYPES) {
      const envelope = SAMPLES[type]();
      const message = aMessage(envelope, { partition: 3, offset: '42' });
      const [method] = found.get(type) ?? [];
      await expect(method?.(envelope, aContext(message, 2))).resolves.toBe('applied');
      const { command, spec } = received.at(-1) ?? {};
      expect(spec).toBe(type);
      expect(command?.event.type).toBe(type);
      expect(command?.eventId).toBe(envelope.eventId);
      expect(command?.source).toEqual({
        topic: 'erp.orders.v1',
        partition: 3,
        offset: '42',
        readAt: expect.any(Date),
      });
      expect(command?.attempt).toBe(2);
    }
    expect(received).toHaveLength(ORDER_EVENT_TYPES.length);
  });

  it('refuses data that breaks the contract, and a type it does not know', async () => {
    const { consumer, received } = recordingConsumer();
    const found = patterns(consumer);
    const [onRefund] = found.get('order.refund_requested') ?? [];
    const refund = anEnvelope('order.refund_requested', refundRequestedData());
    const broken = { ...refund, data: { ...refund.data, amountGross: 'lots' } };
    await expect(onRefund?.(broken, aContext(aMessage(broken)))).rejects.toThrow(InvalidEventError);
    const unknown = { ...refund, type: 'order.teleported' } as unknown as OrderEnvelope;
    await expect(onRefund?.(unknown, aContext(aMessage(refund)))).rejects.toThrow(
      /unknown event type "order.teleported"/,
    );
    expect(received).toHaveLength(0);
  });
});
