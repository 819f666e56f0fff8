/**
 * The demo's bookkeeping of what came back: duplicates of at-least-once delivery are
 * shown once, missing and unexpected outcomes are found, and every outcome reaches the
 * screen under the ERP event it answers.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TOPICS, type ReceivedMessage } from '../../demo/kafka.js';
import { demoOrders, type DemoOrder } from '../../demo/scenario.js';
import {
  missingOutcomes,
  outcomesOf,
  renderScreen,
  styleFor,
  failedOutcomes,
  wrap,
} from '../../demo/screen.js';

const placement = {
  bootstrapServers: '127.0.0.1:1',
  brokers: 1,
  sandboxUrl: 'http://127.0.0.1:2',
  sandboxPid: 2,
  workerPid: 3,
  workerUrl: 'http://127.0.0.1:4',
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/payflow_bridge_demo',
};

function sourceId(order: DemoOrder, index: number): string {
  return (JSON.parse(order.messages[index]?.value ?? '{}') as { eventId: string }).eventId;
}

function status(order: DemoOrder, index: number, type: string, eventId: string = randomUUID()) {
  return {
    topic: TOPICS.status,
    key: order.orderId,
    value: JSON.stringify({
      eventId,
      type,
      orderId: order.orderId,
      paymentId: '0123456789abcdef01234567',
      data: { sourceEventId: sourceId(order, index), currency: 'NOK' },
    }),
    headers: {},
  } satisfies ReceivedMessage;
}

function letter(order: DemoOrder, index: number, reason: string, offset: string) {
  return {
    topic: TOPICS.dlq,
    key: order.orderId,
    value: order.messages[index]?.value ?? '',
    headers: {
      'x-dlq-reason': reason,
      'x-dlq-error': 'it failed',
      'x-dlq-original-partition': '0',
      'x-dlq-original-offset': offset,
    },
  } satisfies ReceivedMessage;
}

describe('demo outcomes', () => {
  const orders = demoOrders(new Date('2026-11-22T10:00:00Z'));
  const [single, plan, tradeIn, invalid, notJson] = orders as [
    DemoOrder,
    DemoOrder,
    DemoOrder,
    DemoOrder,
    DemoOrder,
  ];
  const everything: ReceivedMessage[] = [
    status(single, 0, 'payment.created', 'the-same-event'),
    status(plan, 0, 'payment.created'),
    status(plan, 1, 'installment.added'),
    status(tradeIn, 0, 'payment.created'),
    status(tradeIn, 1, 'payment.cancelled'),
    letter(invalid, 0, 'invalid_event', '1'),
    letter(notJson, 0, 'invalid_json', '2'),
  ];

  it('knows when everything arrived, counting a redelivered event once', () => {
    const duplicate = status(single, 0, 'payment.created', 'the-same-event');
    const outcomes = outcomesOf([
      ...everything,
      duplicate,
      letter(invalid, 0, 'invalid_event', '1'),
    ]);
    expect(outcomes).toHaveLength(7);
    expect(missingOutcomes(orders, outcomes)).toEqual([]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
  });

  it('shows an extra status event without failing', () => {
    const extra = status(tradeIn, 1, 'payment.status_changed');
    const outcomes = outcomesOf([...everything, extra]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
    const screen = renderScreen({
      orders,
      outcomes,
      placement,
      elapsedMs: 1,
      style: styleFor(false),
    });
    const cancelled = screen.findIndex((line) => line.includes('← payment.cancelled'));
    expect(screen[cancelled + 1]).toContain('← payment.status_changed');
  });

  it('names what is missing', () => {
    const outcomes = outcomesOf(everything.slice(0, 4));
    expect(missingOutcomes(orders, outcomes)).toEqual([
      'SO-10044: payment.cancelled',
      'SO-10045: dead letter invalid_event',
      'SO-10046: dead letter invalid_json',
    ]);
  });

  it('flags a dead letter of an event that should have worked, and shows it under that event', () => {
    const outcomes = outcomesOf([
      status(plan, 0, 'payment.created'),
      letter(plan, 1, 'mapping_failed', '9'),
    ]);
    const failed = failedOutcomes(orders, outcomes);
    expect(failed.map((outcome) => outcome.message.headers['x-dlq-reason'])).toEqual([
      'mapping_failed',
    ]);
    const screen = renderScreen({
      orders,
      outcomes,
      placement,
      elapsedMs: 1234,
      style: styleFor(false),
    });
    const added = screen.findIndex((line) => line.includes('→ order.installment_added'));
    expect(screen[added + 1]).toContain('✗ dead letter');
    expect(screen[added + 2]).toContain('x-dlq-reason mapping_failed');
    expect(screen.filter((line) => line.includes('nothing came back'))).toHaveLength(5);
  });

  it('wraps long values at spaces', () => {
    expect(wrap('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrap('averyveryverylongword x', 5)).toEqual(['averyveryverylongword', 'x']);
  });
});
