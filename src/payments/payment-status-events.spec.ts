import { describe, expect, it } from '@jest/globals';
import { aCancelledEvent } from '../../test/support/status-events.js';
import { statusEventMessage } from '../../test/support/event-messages.js';
import {
  InvalidOutboundEventError,
  OutboxWriter,
  outboundTopicsFromConfig,
} from '../outbox/outbox-writer.js';
import type { StatusEvent } from './payment-status-events.js';

const writer = OutboxWriter.forTopics(
  outboundTopicsFromConfig({
    TOPIC_ORDERS: 'erp.orders.v1',
    TOPIC_PAYMENT_STATUS: 'payflow.payment-status.v1',
    TOPIC_SETTLEMENTS: 'payflow.settlements.v1',
  }),
);

const cancelled = aCancelledEvent({ paymentId: 'abc' });

describe('statusEventMessage (test support)', () => {
  it('builds the CONTRACT §3 envelope keyed by order id', () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    const message = statusEventMessage('payflow.payment-status.v1', cancelled, now);
    expect(message.topic).toBe('payflow.payment-status.v1');
    expect(message.key).toBe('SO-1');
    expect(message.headers).toEqual({
      'content-type': 'application/json',
      'x-event-type': 'payment.cancelled',
    });
    const envelope = JSON.parse(String(message.value)) as Record<string, unknown>;
    expect(envelope).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'payment.cancelled',
      occurredAt: '2026-11-21T10:00:00.000Z',
      organizationId: 'org-1',
      orderId: 'SO-1',
      paymentId: 'abc',
      data: cancelled.data,
    });
  });
});

/**
 * Type-level tests: `npm run check` runs `tsc` over the specs, and each @ts-expect-error
 * below fails it if the compiler ever accepts the wrong payload. At run time the writer
 * still refuses them (its check is the second line).
 */
describe('StatusEvent: type and data as one pair, typed from the schema', () => {
  it('refuses a renamed field at compile time, and OutboxWriter refuses it at run time', () => {
    const { status, ...unchanged } = cancelled.data;
    const renamed: StatusEvent = {
      ...cancelled,
      data: {
        ...unchanged,
        // @ts-expect-error: the field is `status`; a renamed field fails tsc
        state: status,
      },
    };
    expect(() => writer.messages([renamed])).toThrow(InvalidOutboundEventError);
  });

  it("refuses one type's data under another type", () => {
    // @ts-expect-error: payment.cancelled's data is not receipt.printed's
    const mismatched: StatusEvent = { ...cancelled, type: 'receipt.printed' };
    expect(() => writer.messages([mismatched])).toThrow(InvalidOutboundEventError);
  });

  it('accepts the data its schema describes', () => {
    const [message] = writer.messages([cancelled]);
    expect(message?.key).toBe('SO-1');
    expect(message?.topic).toBe('payflow.payment-status.v1');
  });
});
