import { describe, expect, it } from '@jest/globals';
import { statusEventMessage } from '../../test/support/event-messages.js';
import { outboundViolations, type ReadMessage } from './outbound-check.js';

const read = (message: {
  key: string | Buffer | null;
  value: string | Buffer;
  headers?: Readonly<Record<string, string>>;
}): ReadMessage => ({
  key: message.key === null ? null : message.key.toString(),
  value: message.value.toString(),
  headers: { ...message.headers },
});

const resent = read(
  statusEventMessage('t', {
    type: 'payment.resent',
    orderId: 'SO-1',
    organizationId: null,
    paymentId: 'pay-1',
    data: {
      sourceEventId: '6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90',
      paymentMethodId: 'pm-1',
      terminalId: null,
      invoiceType: null,
      status: 'SENT',
    },
  }),
);

describe('outboundViolations', () => {
  it('passes an event that keeps its contract', () => {
    expect(outboundViolations(resent)).toEqual([]);
    expect(
      outboundViolations({ ...resent, headers: { ...resent.headers, traceparent: '00-a' } }),
    ).toEqual([]);
  });

  it('names a broken value, header and key', () => {
    const value = JSON.parse(resent.value) as { data: Record<string, unknown> };
    const broken = { ...value, data: { ...value.data, status: 1 } };
    expect(outboundViolations({ ...resent, value: JSON.stringify(broken) })).toEqual([
      'payment.resent value: data.status: Invalid input: expected string, received number',
    ]);
    expect(outboundViolations({ ...resent, key: 'SO-2' })).toEqual([
      'payment.resent key: "SO-2" instead of "SO-1"',
    ]);
    expect(
      outboundViolations({ ...resent, headers: { 'x-event-type': 'payment.resent' } }),
    ).toHaveLength(1);
    expect(outboundViolations({ ...resent, headers: {} })).toHaveLength(1);
    expect(outboundViolations({ ...resent, headers: { 'x-event-type': 'payment.gone' } })).toEqual([
      'x-event-type "payment.gone" has no schema',
    ]);
  });

  it('checks the headers of a dead letter and leaves order events alone', () => {
    const deadLetter = {
      key: 'SO-1',
      value: 'not json',
      headers: {
        'x-dlq-reason': 'invalid_json',
        'x-dlq-error': 'message value is not UTF-8 JSON',
        'x-dlq-original-topic': 'erp.orders.v1',
        'x-dlq-original-partition': '3',
        'x-dlq-original-offset': '42',
        'x-dlq-attempts': '1',
        'x-dlq-failed-at': '2026-11-21T10:00:00.000Z',
      },
    };
    expect(outboundViolations(deadLetter)).toEqual([]);
    expect(
      outboundViolations({
        ...deadLetter,
        headers: { ...deadLetter.headers, 'x-dlq-reason': 'x' },
      }),
    ).toHaveLength(1);
    expect(
      outboundViolations({ key: 'SO-1', value: '{"type":"order.cancelled"}', headers: {} }),
    ).toEqual([]);
  });
});
