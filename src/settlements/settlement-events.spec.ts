import { describe, expect, it } from '@jest/globals';
import { settlementFileMessage, settlementLineMessage } from '../../test/support/event-messages.js';
import {
  InvalidOutboundEventError,
  OutboxWriter,
  outboundTopicsFromConfig,
} from '../outbox/outbox-writer.js';
import type { SettlementLine } from './csv/settlement-row.js';
import {
  BAD_ROWS_IN_EVENT,
  settlementLineEvent,
  type SettlementEvent,
  type StoredSettlementFile,
} from './settlement-events.js';

const line: SettlementLine = {
  settlementId: 'st-1',
  settlementDate: '2026-11-21',
  organizationId: 'org-1',
  paymentId: 'pay-1',
  paymentNumber: 1001,
  installmentId: null,
  internalRef: 'SO-1',
  orderNumber: 'ON-1',
  transactionType: 'refund',
  currency: 'NOK',
  grossMinor: -124950,
  feeMinor: -1874,
  netMinor: -123076,
  bookedAt: '2026-11-21T10:00:00.000Z',
};

const file: StoredSettlementFile = {
  fileId: 'file-1',
  organizationId: 'org-1',
  dateFrom: '2026-11-21',
  dateTo: '2026-11-21',
  format: 'standard',
  version: 2,
  previousFileId: 'file-0',
  sha256: 'ab'.repeat(32),
  sizeBytes: 1234,
  rows: 10,
  badRows: 30,
  firstBadRows: Array.from({ length: 30 }, (_, i) => ({ lineNumber: i + 2, error: 'bad' })),
  pulledAt: new Date('2026-11-22T01:30:00Z'),
};

const parse = (value: string | Buffer): Record<string, unknown> =>
  JSON.parse(value.toString()) as Record<string, unknown>;

describe('settlement events', () => {
  it('keys a line by its payment, carries our order id and money as decimal text', () => {
    const message = settlementLineMessage(
      't',
      file,
      7,
      line,
      'SO-1',
      new Date('2026-11-22T02:00:00Z'),
    );
    expect(message.key).toBe('pay-1');
    expect(message.headers).toEqual({
      'content-type': 'application/json',
      'x-event-type': 'settlement.line',
    });
    expect(parse(message.value)).toMatchObject({
      type: 'settlement.line',
      occurredAt: '2026-11-22T02:00:00.000Z',
      organizationId: 'org-1',
      orderId: 'SO-1',
      paymentId: 'pay-1',
      data: {
        fileId: 'file-1',
        lineNumber: 7,
        grossAmount: '-1249.50',
        feeAmount: '-18.74',
        netAmount: '-1230.76',
        currency: 'NOK',
        installmentId: null,
      },
    });
  });

  it('keys a line without a payment by its file', () => {
    const message = settlementLineMessage('t', file, 3, { ...line, paymentId: null }, null);
    expect(message.key).toBe('file-1');
    expect(parse(message.value)).toMatchObject({ orderId: null, paymentId: null });
  });

  it('announces a file with its version, the one it replaces and a sample of bad rows', () => {
    const message = settlementFileMessage('t', file);
    expect(message.key).toBe('org-1');
    const data = parse(message.value)['data'] as Record<string, unknown>;
    expect(data).toMatchObject({
      fileId: 'file-1',
      version: 2,
      replacesFileId: 'file-0',
      rows: 10,
      badRows: 30,
      sha256: 'ab'.repeat(32),
      pulledAt: '2026-11-22T01:30:00.000Z',
    });
    expect(data['badRowSamples']).toHaveLength(BAD_ROWS_IN_EVENT);
  });

  it('gives every event its own id', () => {
    const ids = [1, 2, 3].map(
      (n) => parse(settlementLineMessage('t', file, n, line, null).value)['eventId'],
    );
    expect(new Set(ids).size).toBe(3);
  });
});

/** Type-level: `npm run check`'s tsc fails if the compiler ever accepts the wrong payload. */
describe('SettlementEvent: data typed from its schema', () => {
  it('refuses a renamed field of settlement.line at compile time, and the writer at run time', () => {
    const built = settlementLineEvent(
      { fileId: '3b2d5c8e-7f41-4c1a-9a6e-2d0f8b1c4e57', organizationId: 'org-1' },
      3,
      line,
      null,
    );
    const { grossAmount, ...rest } = built.data;
    const renamed: SettlementEvent = {
      ...built,
      data: {
        ...rest,
        // @ts-expect-error: the field is `grossAmount`; a renamed field fails tsc
        gross: grossAmount,
      },
    };
    const writer = OutboxWriter.forTopics(
      outboundTopicsFromConfig({
        TOPIC_ORDERS: 'erp.orders.v1',
        TOPIC_PAYMENT_STATUS: 'payflow.payment-status.v1',
        TOPIC_SETTLEMENTS: 'payflow.settlements.v1',
      }),
    );
    expect(writer.messages([built])).toHaveLength(1);
    expect(() => writer.messages([renamed])).toThrow(InvalidOutboundEventError);
  });
});
