/**
 * Two workers in one consumer group, the second joining mid-stream (a rebalance), with
 * heavy parallel load on other orders: every order gets exactly one payment, and each
 * order's create → add installment → cancel keeps its order.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  anEnvelope,
  anOrderId,
  cancelledData,
  installmentAddedData,
  isoDay,
  paymentRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

interface StatusEvent {
  type: string;
  orderId: string;
}

describe('two workers and a rebalance', () => {
  let pipeline: Pipeline;
  let status: TopicReader;

  beforeAll(async () => {
    pipeline = await startPipeline('rebalance');
    status = await TopicReader.start(pipeline.kafka, pipeline.topics.status);
  });

  afterAll(async () => {
    await status.stop();
    await pipeline.stop();
  });

  it('creates every payment exactly once and keeps each order in sequence', async () => {
    const orders = Array.from({ length: 300 }, () => anOrderId('RB'));
    const events = orders.flatMap((orderId) => [
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({
          installments: { count: 2, firstDate: isoDay(10), intervalMonths: 1 },
        }),
        { orderId },
      ),
      anEnvelope('order.installment_added', installmentAddedData(), { orderId }),
      anEnvelope('order.cancelled', cancelledData(), { orderId }),
    ]);
    const first = await pipeline.startWorker();
    await pipeline.publish(
      events.slice(0, 300).map((event) => ({ key: event.orderId, value: event })),
    );
    await status.waitFor((messages) => messages.length >= 50);
    // The second worker joins while the first is busy: the group rebalances mid-stream.
    const second = await pipeline.startWorker();
    await pipeline.publish(
      events.slice(300).map((event) => ({ key: event.orderId, value: event })),
    );
    await status.waitFor(
      (messages) =>
        new Set(messages.map((m) => m.key)).size === orders.length && messages.length >= 900,
      90_000,
    );

    const byOrder = new Map<string, string[]>();
    for (const event of status.json<StatusEvent>()) {
      byOrder.set(event.orderId, [...(byOrder.get(event.orderId) ?? []), event.type]);
    }
    for (const orderId of orders) {
      // Published once per change; the relay's at-least-once window is a crash, not a rebalance.
      expect(byOrder.get(orderId)).toEqual([
        'payment.created',
        'installment.added',
        'payment.cancelled',
      ]);
    }
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
    const { payments } = (await response.json()) as {
      payments: { body: { payment: { internalRef?: string } } }[];
    };
    const perOrder = new Map<string, number>();
    for (const payment of payments) {
      const ref = payment.body.payment.internalRef ?? '';
      perOrder.set(ref, (perOrder.get(ref) ?? 0) + 1);
    }
    expect(orders.filter((orderId) => perOrder.get(orderId) !== 1)).toEqual([]);
    // Both members did work: the partitions were shared after the rebalance.
    for (const worker of [first, second]) {
      const metrics = await (await fetch(`${worker.managementUrl}/metrics`)).text();
      expect(metrics).toMatch(
        /payflow_bridge_order_events_processed_total\{outcome="succeeded"\} [1-9]/,
      );
    }
    await Promise.all([first.shutdown(), second.shutdown()]);
  }, 120_000);
});
