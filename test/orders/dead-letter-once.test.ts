/**
 * A dead letter is counted and logged once. After a kill, Kafka delivers again what was not
 * committed, including events that already reached the dead-letter sink; the sink finds
 * the row and writes nothing, and the processor must not count or log it a second time
 * (the fault campaign saw 271 in payflow_bridge_dead_letters_total for 198 rows).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { MessageProcessor } from '../../src/messaging/transport/message-processor.js';
import { InMemoryInboundEventsMetrics } from '../../src/messaging/transport/transport.metrics.js';
import { orderEventCodec } from '../../src/orders/order-event.codec.js';
import { anEnvelope, anOrderId, cancelledData, markedPaidData } from '../support/builders.js';
import { startOrdersTestBed, type OrdersTestBed, type Pipeline } from './support/pipeline.js';
import { capturingLogger } from '../support/capturing-logger.js';

let bed: OrdersTestBed;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('dlq_once');
  ({ pipeline, db } = bed);
});

afterAll(() => bed.close());

describe('a dead letter delivered again', () => {
  it('is neither counted nor logged again as blocked_by_earlier_failure', async () => {
    const orderId = anOrderId();
    const { logger, lines } = capturingLogger();
    const metrics = new InMemoryInboundEventsMetrics();
    const processor = new MessageProcessor({
      codec: orderEventCodec,
      dispatch: async (event, context) => {
        const message = context.getMessage();
        await pipeline.deliver(event.payload, {
          partition: message.partition,
          offset: message.offset,
        });
      },
      deadLetterSink: pipeline.sink,
      retry: { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 1, maxDelayMs: 2 },
      logger,
      metrics,
    });
    const never = new AbortController().signal;

    // The order's first event is parked (as if Payflow had rejected it): the order is blocked.
    const first = anEnvelope('order.marked_paid', markedPaidData(), { orderId });
    await pipeline.sink.deadLetter({
      message: pipeline.message(first, { partition: 4, offset: '100' }),
      reason: 'rejected_by_payflow',
      error: 'PAYFLOW.NOT_FOUND: no payment',
      attempts: 1,
      orderId,
      eventId: first.eventId,
      eventType: first.type,
      failedAt: new Date(),
    });

    // The next event follows it, then is delivered again (a kill before the commit).
    const next = anEnvelope('order.cancelled', cancelledData(), { orderId });
    const message = pipeline.message(next, { partition: 4, offset: '101' });
    await expect(processor.process(message, never)).resolves.toBe('dead_lettered');
    await expect(processor.process(message, never)).resolves.toBe('dead_lettered');
    await expect(processor.process(message, never)).resolves.toBe('dead_lettered');

    expect(metrics.deadLetters.get('blocked_by_earlier_failure')).toBe(1);
    const logged = lines.filter((line) => line.msg === 'order event dead-lettered');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ reason: 'blocked_by_earlier_failure', offset: '101' });
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dead_letters WHERE order_id = $1 AND reason = 'blocked_by_earlier_failure'`,
      [orderId],
    );
    expect(rows[0]?.n).toBe(1);
    // The repeats are still done (their offset may be committed), just not news.
    expect(
      lines.filter((line) => line.msg === 'order event already dead-lettered; not counted again'),
    ).toHaveLength(2);
  });
});
