import { describe, expect, it } from '@jest/globals';
import { statusEventMessage } from './payment-status-events.js';

describe('statusEventMessage', () => {
  it('builds the CONTRACT §3 envelope keyed by order id', () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    const message = statusEventMessage(
      'payflow.payment-status.v1',
      {
        type: 'payment.cancelled',
        orderId: 'SO-1',
        organizationId: 'org-1',
        paymentId: 'abc',
        data: { status: 'cancelled' },
      },
      now,
    );
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
      data: { status: 'cancelled' },
    });
  });
});
