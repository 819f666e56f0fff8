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
import { openTestPool } from '../support/database.js';
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
    try {
      await status.waitFor(
        (messages) =>
          new Set(messages.map((m) => m.key)).size === orders.length && messages.length >= 900,
        90_000,
      );
    } catch (error) {
      throw new Error(`${String(error)}\n${await whyIncomplete(pipeline, status, orders)}`, {
        cause: error,
      });
    }

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

describe('a rebalance while the previous owner is in the middle of slow Payflow calls', () => {
  it('waits for the owner instead of dead-lettering its events, whatever the attempts budget', async () => {
    // Two attempts in all: before the fix, the new owner's second "busy" answer, a second
    // or so after the rebalance, dead-lettered the event (retries_exhausted) while the old
    // owner's 3 s call was still on its way, and the order's cancellation behind it.
    const slow = await startPipeline('rebalance-slow', { RETRY_MAX_ATTEMPTS: '2' });
    const reader = await TopicReader.start(slow.kafka, slow.topics.status);
    const pool = openTestPool(slow.database.url);
    try {
      const added = await fetch(`${slow.sandbox.url}/sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'POST', path: '/api/payments', latencyMs: 3_000 }),
      });
      expect(added.status).toBeLessThan(300);
      const orders = Array.from({ length: 48 }, () => anOrderId('RS'));
      const first = await slow.startWorker();
      await slow.publish(
        orders.flatMap((orderId) => [
          {
            key: orderId,
            value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
          },
          { key: orderId, value: anEnvelope('order.cancelled', cancelledData(), { orderId }) },
        ]),
      );
      // The first worker's calls are on their way (begun, not answered) when the second joins.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { rows } = await pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM command_attempts WHERE state = 'started'`,
        );
        if (Number(rows[0]?.n) >= orders.length / 2) break;
        if (Date.now() > deadline) throw new Error('the first worker never began its calls');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const second = await slow.startWorker();
      try {
        await reader.waitFor((messages) => messages.length >= orders.length * 2, 60_000);
      } catch (error) {
        throw new Error(`${String(error)}\n${await whyIncomplete(slow, reader, orders, 2)}`, {
          cause: error,
        });
      }
      const { rows: letters } = await pool.query(`SELECT order_id, reason FROM dead_letters`);
      expect(letters).toEqual([]);
      const byOrder = new Map<string, string[]>();
      for (const event of reader.json<StatusEvent>()) {
        byOrder.set(event.orderId, [...(byOrder.get(event.orderId) ?? []), event.type]);
      }
      for (const orderId of orders) {
        expect(byOrder.get(orderId)).toEqual(['payment.created', 'payment.cancelled']);
      }
      // The second worker did meet the first one's attempts (it waited), and sent none again.
      const metrics = await (await fetch(`${second.managementUrl}/metrics`)).text();
      expect(metrics).toMatch(
        /payflow_bridge_order_events_retries_total\{cause="transient"\} [1-9]/,
      );
      const sent = await fetch(`${slow.sandbox.url}/sandbox/payments`);
      const { payments } = (await sent.json()) as { payments: unknown[] };
      expect(payments).toHaveLength(orders.length);
      await Promise.all([first.shutdown(), second.shutdown()]);
    } finally {
      await pool.end();
      await reader.stop();
      await slow.stop();
    }
  }, 120_000);
});

/** What the database says of the orders whose status events are not all there. */
async function whyIncomplete(
  pipeline: Pipeline,
  status: TopicReader,
  orders: readonly string[],
  eventsPerOrder = 3,
): Promise<string> {
  const seen = new Map<string, string[]>();
  for (const event of status.json<StatusEvent>()) {
    seen.set(event.orderId, [...(seen.get(event.orderId) ?? []), event.type]);
  }
  const incomplete = orders.filter((orderId) => (seen.get(orderId) ?? []).length < eventsPerOrder);
  const pool = openTestPool(pipeline.database.url);
  try {
    const attempts = await pool.query(
      `SELECT order_id, command, state, owner, error_code, lease_until, started_at, finished_at
         FROM command_attempts WHERE order_id = ANY($1) ORDER BY order_id, id`,
      [incomplete],
    );
    const letters = await pool.query(
      `SELECT order_id, event_type, reason, attempts, error FROM dead_letters
        WHERE order_id = ANY($1) ORDER BY order_id, id`,
      [incomplete],
    );
    return JSON.stringify(
      {
        incomplete: incomplete.map((orderId) => ({ orderId, seen: seen.get(orderId) ?? [] })),
        attempts: attempts.rows,
        deadLetters: letters.rows,
      },
      null,
      1,
    );
  } finally {
    await pool.end();
  }
}
