import { describe, expect, it } from '@jest/globals';
import type { DeadLetter } from './dead-letter.port.js';
import {
  buildDeadLetterHeaders,
  buildDeadLetterMessage,
  deadLetterTopicFor,
} from './dead-letter-headers.js';

const letter = (overrides: Partial<DeadLetter> = {}): DeadLetter => ({
  message: {
    topic: 'erp.orders.v1',
    partition: 7,
    offset: '9007199254740993',
    key: Buffer.from('SO-1'),
    value: Buffer.from('{"not":"changed"}'),
    headers: { traceparent: '00-abc-def-01', 'x-dlq-reason': 'stale', 'X-DLQ-Old': 'stale' },
    timestamp: '1700000000000',
  },
  reason: 'rejected_by_payflow',
  error: 'PAYFLOW.VALIDATION: Payflow rejected createPayment (422):\n lines.0 value_error',
  attempts: 3,
  orderId: 'SO-1',
  eventId: '6f1c0000-0000-4000-8000-000000000000',
  eventType: 'order.payment_requested',
  failedAt: new Date('2026-11-21T10:00:00.123Z'),
  ...overrides,
});

describe('buildDeadLetterHeaders', () => {
  it('adds the CONTRACT §4 headers to the original ones', () => {
    expect(buildDeadLetterHeaders(letter())).toEqual({
      traceparent: '00-abc-def-01',
      'x-dlq-reason': 'rejected_by_payflow',
      'x-dlq-error':
        'PAYFLOW.VALIDATION: Payflow rejected createPayment (422): lines.0 value_error',
      'x-dlq-original-topic': 'erp.orders.v1',
      'x-dlq-original-partition': '7',
      'x-dlq-original-offset': '9007199254740993',
      'x-dlq-attempts': '3',
      'x-dlq-failed-at': '2026-11-21T10:00:00.123Z',
    });
  });

  it('keeps x-dlq-error to one bounded line, never empty', () => {
    const long = buildDeadLetterHeaders(letter({ error: 'a\nb '.repeat(1000) }))['x-dlq-error'];
    expect(long).not.toMatch(/\n/);
    expect(long?.length).toBeLessThanOrEqual(1000);
    expect(buildDeadLetterHeaders(letter({ error: ' \n ' }))['x-dlq-error']).toBe('unknown error');
  });
});

describe('buildDeadLetterMessage', () => {
  it('keeps key and value unchanged and targets the .dlq topic', () => {
    const message = buildDeadLetterMessage(letter());
    expect(deadLetterTopicFor('erp.orders.v1')).toBe('erp.orders.v1.dlq');
    expect(message.topic).toBe('erp.orders.v1.dlq');
    expect(message.key).toEqual(Buffer.from('SO-1'));
    expect(message.value).toEqual(Buffer.from('{"not":"changed"}'));
    expect(message.headers?.['x-dlq-reason']).toBe('rejected_by_payflow');
  });
});
