/**
 * The Postgres DeadLetterSink: dead_letters row, the dead-letter message in the outbox with
 * the original key and value bytes and the CONTRACT §4 headers, the order blocked, all in
 * one transaction and idempotent per (topic, partition, offset).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { BlockedByEarlierFailureError } from '../../src/errors/dead-letter.errors.js';
import type { DeadLetter } from '../../src/messaging/dead-letter.port.js';
import { anEnvelope, anOrderId, cancelledData, paymentRequestedData } from '../support/builders.js';
import {
  DLQ_TOPIC,
  outboxRows,
  startOrdersTestBed,
  thrown,
  type OrdersTestBed,
  type Pipeline,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_dlq');
  ({ pipeline, db } = bed);
});

afterAll(() => bed.close());

interface DeadLetterRow {
  order_id: string | null;
  event_id: string | null;
  event_type: string | null;
  reason: string;
  error: string;
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string>;
  attempts: number;
}

async function deadLetters(orderId: string | null, offset?: string): Promise<DeadLetterRow[]> {
  const { rows } = await db.query<DeadLetterRow>(
    `SELECT order_id, event_id, event_type, reason, error, topic, partition, "offset", key, value,
            headers, attempts
       FROM dead_letters WHERE ($1::text IS NULL OR order_id = $1) AND ($2::bigint IS NULL OR "offset" = $2)`,
    [orderId, offset ?? null],
  );
  return rows;
}

describe('PostgresDeadLetterSink', () => {
  it('stores the letter, publishes it unchanged with the x-dlq headers and blocks the order', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    const message = pipeline.message(envelope, {
      partition: 2,
      offset: '1234',
      headers: { traceparent: '00-abc-def-01', 'x-dlq-reason': 'stale' },
    });
    const failedAt = new Date('2026-11-21T10:00:00.000Z');
    const letter: DeadLetter = {
      message,
      reason: 'rejected_by_payflow',
      error: 'PAYFLOW.VALIDATION: Payflow rejected createPayment (422)\nsecond line',
      attempts: 3,
      orderId,
      eventId: envelope.eventId,
      eventType: envelope.type,
      failedAt,
    };
    await pipeline.sink.deadLetter(letter);

    const [row, ...more] = await deadLetters(orderId);
    expect(more).toHaveLength(0);
    expect(row).toMatchObject({
      order_id: orderId,
      event_id: envelope.eventId,
      event_type: 'order.payment_requested',
      reason: 'rejected_by_payflow',
      topic: 'erp.orders.v1',
      partition: 2,
      offset: '1234',
      attempts: 3,
    });
    expect(row!.key!.equals(message.key!)).toBe(true);
    expect(row!.value!.equals(message.value!)).toBe(true);

    const [published, ...others] = await outboxRows(db, orderId, DLQ_TOPIC);
    expect(others).toHaveLength(0);
    expect(published!.value.equals(message.value!)).toBe(true);
    expect(published!.key).toBe(orderId);
    expect(published!.headers).toEqual({
      traceparent: '00-abc-def-01',
      'x-dlq-reason': 'rejected_by_payflow',
      'x-dlq-error': 'PAYFLOW.VALIDATION: Payflow rejected createPayment (422) second line',
      'x-dlq-original-topic': 'erp.orders.v1',
      'x-dlq-original-partition': '2',
      'x-dlq-original-offset': '1234',
      'x-dlq-attempts': '3',
      'x-dlq-failed-at': '2026-11-21T10:00:00.000Z',
    });
    expect(row!.headers).toEqual(published!.headers);

    const { rows: orders } = await db.query<{ blocked_at: Date | null; blocked_reason: string }>(
      `SELECT blocked_at, blocked_reason FROM orders WHERE order_id = $1`,
      [orderId],
    );
    expect(orders[0]?.blocked_at).toBeInstanceOf(Date);
    expect(orders[0]?.blocked_reason).toBe(
      `rejected_by_payflow: event ${envelope.eventId} at erp.orders.v1/2/1234`,
    );

    // Idempotent: the same letter again changes nothing.
    await pipeline.sink.deadLetter({ ...letter, attempts: 4, failedAt: new Date() });
    expect(await deadLetters(orderId)).toHaveLength(1);
    expect(await outboxRows(db, orderId, DLQ_TOPIC)).toHaveLength(1);

    // Later events of the order follow it: blocked, and a second letter keeps the first reason.
    const later = anEnvelope('order.cancelled', cancelledData(), { orderId });
    const blocked = await thrown(() => pipeline.deliver(later));
    expect(blocked).toBeInstanceOf(BlockedByEarlierFailureError);
    await pipeline.sink.deadLetter({
      message: pipeline.message(later, { partition: 2, offset: '1240' }),
      reason: 'blocked_by_earlier_failure',
      error: blocked.message,
      attempts: 1,
      orderId,
      eventId: later.eventId,
      eventType: later.type,
      failedAt: new Date(),
    });
    expect(await deadLetters(orderId)).toHaveLength(2);
    expect(await outboxRows(db, orderId, DLQ_TOPIC)).toHaveLength(2);
    const { rows: still } = await db.query<{ blocked_reason: string }>(
      `SELECT blocked_reason FROM orders WHERE order_id = $1`,
      [orderId],
    );
    expect(still[0]?.blocked_reason).toMatch(/^rejected_by_payflow: /);
  });

  it('keeps bytes that are not JSON, and blocks nothing without an order id', async () => {
    const value = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);
    const message = {
      topic: 'erp.orders.v1',
      partition: 0,
      offset: '777',
      key: null,
      value,
      headers: {},
      timestamp: String(Date.now()),
    };
    await pipeline.sink.deadLetter({
      message,
      reason: 'invalid_json',
      error: 'EVENT.INVALID_JSON: message value is not UTF-8 JSON',
      attempts: 1,
      orderId: null,
      eventId: null,
      eventType: null,
      failedAt: new Date(),
    });
    const [row] = await deadLetters(null, '777');
    expect(row).toMatchObject({ order_id: null, reason: 'invalid_json', key: null });
    expect(row!.value!.equals(value)).toBe(true);
    const { rows } = await db.query<{
      key: string | null;
      value: Buffer;
      headers: Record<string, string>;
    }>(
      `SELECT key, value, headers FROM outbox WHERE topic = $1 AND headers->>'x-dlq-original-offset' = '777'`,
      [DLQ_TOPIC],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toBeNull();
    expect(rows[0]!.value.equals(value)).toBe(true);
    expect(rows[0]!.headers['x-dlq-reason']).toBe('invalid_json');
  });
});
