import { describe, expect, it } from '@jest/globals';
import { aCancelledEvent, STATUS_SOURCE_EVENT } from '../../test/support/status-events.js';
import type { Sql } from '../database/database.js';
import type { BatchSql } from '../database/transaction-batcher.js';
import type { DeadLetter } from '../messaging/dead-letter.port.js';
import type { OutboundMessage } from '../messaging/messaging.ports.js';
import { paymentCreatedEvent } from '../orders/payment-requested/payment-created.event.js';
import { OutboxRepository } from './outbox.repository.js';
import { PAYMENT_STATUS_EVENT_TYPES, type StatusEvent } from '../payments/payment-status-events.js';
import type { SettlementLine } from '../settlements/csv/settlement-row.js';
import {
  SETTLEMENT_EVENT_TYPES,
  settlementFileEvent,
  settlementLineEvent,
} from '../settlements/settlement-events.js';
import { isOutboundEventType } from '../events/outbound-events.js';
import {
  DEAD_LETTER,
  InvalidOutboundEventError,
  OutboxWriter,
  outboundTopicsFromConfig,
  type OutboxEvent,
} from './outbox-writer.js';

class RecordingOutbox extends OutboxRepository {
  readonly added: OutboundMessage[][] = [];

  override add(_tx: Sql, messages: readonly OutboundMessage[]): Promise<void> {
    this.added.push([...messages]);
    return Promise.resolve();
  }
}

const noSql: Sql = {
  query: () => Promise.reject(new Error('no SQL expected')),
  execute: () => Promise.reject(new Error('no SQL expected')),
};

interface Deferred {
  readonly key: object;
  readonly items: readonly unknown[];
  readonly flush: (tx: Sql, items: unknown[]) => Promise<void>;
}

function batchSql(): BatchSql & { readonly deferred: Deferred[] } {
  const deferred: Deferred[] = [];
  return {
    ...noSql,
    deferred,
    defer<T>(key: object, items: readonly T[], flush: (tx: Sql, items: T[]) => Promise<void>) {
      deferred.push({ key, items, flush: flush as (tx: Sql, items: unknown[]) => Promise<void> });
    },
  };
}

const topics = outboundTopicsFromConfig({
  TOPIC_ORDERS: 'erp.orders.v1',
  TOPIC_PAYMENT_STATUS: 'payflow.payment-status.v1',
  TOPIC_SETTLEMENTS: 'payflow.settlements.v1',
});

function writer(): { writer: OutboxWriter; outbox: RecordingOutbox } {
  const outbox = new RecordingOutbox();
  return { writer: new OutboxWriter(outbox, topics), outbox };
}

const NOW = new Date('2026-11-21T10:00:00.000Z');

const cancelled = aCancelledEvent();

const line: SettlementLine = {
  settlementId: 'st-1',
  settlementDate: '2026-11-21',
  organizationId: 'org-1',
  paymentId: null,
  paymentNumber: 1001,
  installmentId: null,
  internalRef: 'SO-1',
  orderNumber: 'ON-1',
  transactionType: 'payment',
  currency: 'NOK',
  grossMinor: 124950,
  feeMinor: 1874,
  netMinor: 123076,
  bookedAt: '2026-11-21T10:00:00.000Z',
};

const file = {
  fileId: '3f2b7c1e-8a4d-4e6f-9b0a-1c2d3e4f5a6b',
  organizationId: 'org-1',
  dateFrom: '2026-11-21',
  dateTo: '2026-11-21',
  format: 'standard',
  version: 1,
  previousFileId: null,
  sha256: 'ab'.repeat(32),
  sizeBytes: 1234,
  rows: 1,
  badRows: 0,
  firstBadRows: [],
  pulledAt: NOW,
};

const letter: DeadLetter = {
  message: {
    topic: 'erp.orders.v1',
    partition: 3,
    offset: '42',
    key: Buffer.from('SO-1'),
    value: Buffer.from('not json'),
    headers: { traceparent: '00-abc-def-01' },
    timestamp: '1700000000000',
  },
  reason: 'invalid_json',
  error: 'message value is not UTF-8 JSON',
  attempts: 1,
  orderId: 'SO-1',
  eventId: null,
  eventType: null,
  failedAt: NOW,
};

const parse = (message: OutboundMessage | undefined): Record<string, unknown> =>
  JSON.parse(String(message?.value)) as Record<string, unknown>;

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('OutboxWriter', () => {
  it('knows a schema and a topic for every event type the bridge publishes', () => {
    for (const type of [...PAYMENT_STATUS_EVENT_TYPES, ...SETTLEMENT_EVENT_TYPES]) {
      expect(isOutboundEventType(type)).toBe(true);
    }
  });

  it('writes a status event to the status topic, keyed by order, as the envelope of §3', async () => {
    const { writer: events, outbox } = writer();
    await events.append(noSql, [cancelled], NOW);
    const [[message, ...others] = []] = outbox.added;
    expect(others).toHaveLength(0);
    expect(message).toMatchObject({ topic: 'payflow.payment-status.v1', key: 'SO-1' });
    expect(message?.headers).toEqual({
      'content-type': 'application/json',
      'x-event-type': 'payment.cancelled',
    });
    expect(parse(message)).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'payment.cancelled',
      occurredAt: '2026-11-21T10:00:00.000Z',
      organizationId: 'org-1',
      orderId: 'SO-1',
      paymentId: 'pay-1',
      data: cancelled.data,
    });
    // The wire keeps the envelope's field order.
    expect(Object.keys(parse(message))).toEqual([
      'eventId',
      'type',
      'occurredAt',
      'organizationId',
      'orderId',
      'paymentId',
      'data',
    ]);
  });

  it('checks the events the handlers build', () => {
    const { writer: events } = writer();
    const created = paymentCreatedEvent({
      sourceEventId: STATUS_SOURCE_EVENT,
      orderId: 'SO-1',
      organizationId: null,
      payflowId: 'pay-1',
      paymentLink: 'https://pay.example/x',
      currency: 'NOK',
      totalGrossMinor: 125000,
      totalNetMinor: 100000,
      paymentMethodId: null,
      installments: [
        { ref: '1', payflowId: 'inst-1', date: '2026-12-01', grossMinor: 125000, status: null },
      ],
    });
    expect(events.messages([created], NOW)).toHaveLength(1);
  });

  it('sends settlement events to the settlements topic with their keys', async () => {
    const { writer: events, outbox } = writer();
    await events.append(
      noSql,
      [
        settlementLineEvent(file, 2, line, null),
        settlementLineEvent(file, 3, { ...line, paymentId: 'pay-9' }, 'SO-9'),
        settlementFileEvent(file),
      ],
      NOW,
    );
    const messages = outbox.added.flat();
    expect(messages.map((message) => [message.topic, message.key])).toEqual([
      ['payflow.settlements.v1', file.fileId],
      ['payflow.settlements.v1', 'pay-9'],
      ['payflow.settlements.v1', 'org-1'],
    ]);
    expect(parse(messages[2])).toMatchObject({
      type: 'settlement.file_available',
      orderId: null,
      data: { fileId: file.fileId, replacesFileId: null, pulledAt: '2026-11-21T10:00:00.000Z' },
    });
  });

  it('sends a dead letter to the .dlq topic unchanged, with the x-dlq headers', async () => {
    const { writer: events, outbox } = writer();
    await events.append(noSql, [{ type: DEAD_LETTER, letter }]);
    const [[message] = []] = outbox.added;
    expect(message?.topic).toBe('erp.orders.v1.dlq');
    expect(message?.key).toEqual(Buffer.from('SO-1'));
    expect(message?.value).toEqual(Buffer.from('not json'));
    expect(message?.headers).toMatchObject({
      traceparent: '00-abc-def-01',
      'x-dlq-reason': 'invalid_json',
      'x-dlq-original-offset': '42',
    });
  });

  // Each payload below fails `tsc` (the @ts-expect-error lines); the writer refuses them at
  // run time too, for an event the compiler could not see (built from parsed JSON, a cast).
  const missingField: StatusEvent<'payment.cancelled'> = {
    ...cancelled,
    data: {
      ...cancelled.data,
      // @ts-expect-error: every field of payment.cancelled is required
      status: undefined,
    },
  };
  const wrongType: StatusEvent<'payment.cancelled'> = {
    ...cancelled,
    data: {
      ...cancelled.data,
      // @ts-expect-error: reason is text or null
      reason: 7,
    },
  };
  const outsideEnum: StatusEvent<'payment.cancelled'> = {
    ...cancelled,
    data: {
      ...cancelled.data,
      // @ts-expect-error: status is one of NORMALIZED_STATUSES
      status: 'gone',
    },
  };
  const extraField: StatusEvent<'payment.cancelled'> = {
    ...cancelled,
    data: {
      ...cancelled.data,
      // @ts-expect-error: payment.cancelled has no field `extra`
      extra: 'x',
    },
  };

  it.each<[string, OutboxEvent]>([
    ['a missing field', missingField],
    ['a field of the wrong type', wrongType],
    ['a value outside its enum', outsideEnum],
    ['a field the schema lacks', extraField],
    ['no payment id where one is due', { ...cancelled, paymentId: null }],
    [
      'a type without a schema',
      { ...cancelled, type: 'payment.vanished' } as unknown as StatusEvent,
    ],
    [
      'a dead letter with a broken x-dlq header',
      { type: DEAD_LETTER, letter: { ...letter, message: { ...letter.message, offset: 'x' } } },
    ],
  ])('refuses an event with %s and writes nothing of the call', async (_case, bad) => {
    const { writer: events, outbox } = writer();
    const error = await events.append(noSql, [cancelled, bad]).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InvalidOutboundEventError);
    expect((error as InvalidOutboundEventError).code).toBe('EVENTS.INVALID_OUTBOUND');
    expect((error as InvalidOutboundEventError).transient).toBe(false);
    expect(outbox.added).toHaveLength(0);
  });

  it('names the field and the rule, not the value', () => {
    const { writer: events } = writer();
    const error = thrown(() =>
      events.messages([
        {
          ...cancelled,
          data: {
            ...cancelled.data,
            // @ts-expect-error: status is one of NORMALIZED_STATUSES
            status: 'secret@example.com',
          },
        },
      ]),
    );
    expect(error).toBeInstanceOf(InvalidOutboundEventError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^payment\.cancelled of order SO-1 does not match its schema: data\.status: /,
    );
    expect(message).not.toContain('secret@example.com');
  });

  it('defers checked events to one write at the end of the batch, keyed by the writer', async () => {
    const { writer: events, outbox } = writer();
    const tx = batchSql();
    events.defer(tx, [cancelled]);
    events.defer(tx, [{ type: DEAD_LETTER, letter }]);
    events.defer(tx, []);
    expect(tx.deferred).toHaveLength(2);
    expect(tx.deferred.every((entry) => entry.key === events)).toBe(true);
    expect(outbox.added).toHaveLength(0);
    const [first] = tx.deferred;
    await first?.flush(noSql, [...tx.deferred.flatMap((entry) => entry.items)]);
    expect(outbox.added.flat().map((message) => message.topic)).toEqual([
      'payflow.payment-status.v1',
      'erp.orders.v1.dlq',
    ]);
  });

  it('throws at once from defer, so that only the caller’s unit fails', () => {
    const { writer: events } = writer();
    const tx = batchSql();
    expect(() => events.defer(tx, [{ ...cancelled, orderId: '' }])).toThrow(
      InvalidOutboundEventError,
    );
    expect(tx.deferred).toHaveLength(0);
  });
});
