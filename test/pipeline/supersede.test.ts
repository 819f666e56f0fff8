/**
 * An ERP event that `supersedes` an earlier one (CONTRACT §10), end to end: real Kafka, a
 * worker as main.ts starts it, real Postgres, the Payflow sandbox. The ERP corrects an
 * event that can never take effect without a person; a supersede that would make a second
 * payment, or replace what is in doubt or unknown, is refused. What counts is what the
 * sandbox holds and what the topics carry.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { OrderEnvelope } from '../../src/events/order-event.schema.js';
import { anEnvelope, anOrderId, cancelledData, paymentRequestedData } from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { sandboxPayments } from '../orders/support/pipeline.js';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: Record<string, unknown>;
}

interface Letter {
  readonly eventId: string | null;
  readonly reason: string;
  readonly replayed: boolean;
  readonly discarded: boolean;
  readonly discardedBy: string | null;
  readonly supersededBy: string | null;
}

describe('supersedes: an ERP event that replaces one that can never take effect', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let dlq: TopicReader;
  let db: pg.Client;

  beforeAll(async () => {
    pipeline = await startPipeline('supersede', { PAYFLOW_REQUEST_TIMEOUT: '5s' });
    [, status, dlq] = await Promise.all([
      pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      TopicReader.start(pipeline.kafka, pipeline.topics.dlq),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    await db?.end();
    await Promise.allSettled([status?.stop(), dlq?.stop()]);
    await pipeline?.stop();
  });

  const eventsOf = (orderId: string) =>
    status.json<StatusEvent>().filter((event) => event.orderId === orderId);
  const dlqOf = (orderId: string) => dlq.messages.filter((message) => message.key === orderId);
  const lettersOf = async (orderId: string): Promise<Letter[]> =>
    (
      await db.query<Letter>(
        `SELECT event_id AS "eventId", reason, replayed_at IS NOT NULL AS replayed,
                discarded_at IS NOT NULL AS discarded, discarded_by AS "discardedBy",
                superseded_by AS "supersededBy"
           FROM dead_letters WHERE order_id = $1 ORDER BY id`,
        [orderId],
      )
    ).rows;
  const blocked = async (orderId: string): Promise<boolean> =>
    (
      await db.query<{ blocked: boolean }>(
        'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
        [orderId],
      )
    ).rows[0]?.blocked ?? false;
  const publish = (...events: OrderEnvelope[]) =>
    pipeline.publish(events.map((value) => ({ key: value.orderId, value })));
  const superseding = (envelope: OrderEnvelope, supersedes: string): OrderEnvelope => ({
    ...envelope,
    supersedes,
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  it('takes the place of an invalid creation with no person, and the parked cancellation follows it', async () => {
    const orderId = anOrderId('CORRECTED');
    const { currency: _omitted, ...invalid } = paymentRequestedData();
    const bad = anEnvelope('order.payment_requested', invalid as never, { orderId });
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });
    await publish(bad, cancel);
    await dlq.waitFor(() => dlqOf(orderId).length === 2);
    expect(dlqOf(orderId).map((m) => m.headers['x-dlq-reason'])).toEqual([
      'invalid_event',
      'blocked_by_earlier_failure',
    ]);

    const corrected = superseding(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      bad.eventId,
    );
    await publish(corrected);
    await status.waitFor(() => eventsOf(orderId).length === 3);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual([
      'event.discarded',
      'payment.created',
      'payment.cancelled',
    ]);
    expect(eventsOf(orderId)[0]?.data).toEqual({
      eventId: bad.eventId,
      eventType: 'order.payment_requested',
      reason: `superseded by event ${corrected.eventId} (order.payment_requested)`,
      discardedBy: 'erp',
      supersededBy: corrected.eventId,
    });
    expect(eventsOf(orderId)[1]?.data).toMatchObject({ sourceEventId: corrected.eventId });
    expect(eventsOf(orderId)[2]?.data).toMatchObject({ sourceEventId: cancel.eventId });
    expect((await sandboxPayments(pipeline.sandbox, orderId)).map((p) => p.status)).toEqual([
      'REJECTED',
    ]);
    expect(await lettersOf(orderId)).toEqual([
      {
        eventId: bad.eventId,
        reason: 'invalid_event',
        replayed: false,
        discarded: true,
        discardedBy: 'erp',
        supersededBy: corrected.eventId,
      },
      expect.objectContaining({ eventId: cancel.eventId, replayed: true, discarded: false }),
    ]);
    expect(await blocked(orderId)).toBe(false);

    // The same superseding event again (the ERP resends it): a duplicate, nothing more.
    await publish(corrected);
    await settle();
    expect(eventsOf(orderId)).toHaveLength(3);
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
    expect(dlqOf(orderId)).toHaveLength(2);
  });

  it('takes the place of a creation Payflow refused', async () => {
    const orderId = anOrderId('REFUSED');
    const refused = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ profileId: 'no-such-profile' }),
      { orderId },
    );
    await publish(refused);
    await dlq.waitFor(() => dlqOf(orderId).length === 1);
    expect(dlqOf(orderId)[0]?.headers['x-dlq-reason']).toBe('rejected_by_payflow');

    const corrected = superseding(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      refused.eventId,
    );
    await publish(corrected);
    await status.waitFor(() => eventsOf(orderId).length === 3);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual([
      'payment.creation_failed',
      'event.discarded',
      'payment.created',
    ]);
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
    expect(await blocked(orderId)).toBe(false);
  });

  it('refuses to supersede an event that took effect (supersede_refused): one payment stays', async () => {
    const orderId = anOrderId('APPLIED');
    const applied = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    await publish(applied);
    await status.waitFor(() => eventsOf(orderId).length === 1);
    expect(eventsOf(orderId)[0]?.type).toBe('payment.created');

    const second = superseding(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      applied.eventId,
    );
    await publish(second);
    await dlq.waitFor(() => dlqOf(orderId).length === 1);
    const [letter] = dlqOf(orderId);
    expect(letter?.headers['x-dlq-reason']).toBe('supersede_refused');
    expect(letter?.headers['x-dlq-error']).toBe(
      `EVENT.SUPERSEDE_REFUSED: event ${second.eventId} cannot supersede event ${applied.eventId}: it took effect`,
    );
    expect(JSON.parse(letter?.value ?? '{}')).toMatchObject({ eventId: second.eventId });

    // Sent again, it stays refused; and the order's later events follow it as usual.
    const later = anEnvelope('order.cancelled', cancelledData(), { orderId });
    await publish(second, later);
    await dlq.waitFor(() => dlqOf(orderId).length === 3);
    expect(dlqOf(orderId).map((m) => m.headers['x-dlq-reason'])).toEqual([
      'supersede_refused',
      'supersede_refused',
      'blocked_by_earlier_failure',
    ]);
    await settle();
    const atPayflow = await sandboxPayments(pipeline.sandbox, orderId);
    expect(atPayflow.map((payment) => payment.status)).not.toContain('REJECTED');
    expect(atPayflow).toHaveLength(1);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual(['payment.created']);
  });

  it('refuses to supersede an unknown event, or another order’s', async () => {
    const other = anOrderId('OTHER');
    const { currency: _omitted, ...invalid } = paymentRequestedData();
    const othersBad = anEnvelope('order.payment_requested', invalid as never, { orderId: other });
    await publish(othersBad);
    await dlq.waitFor(() => dlqOf(other).length === 1);

    const orderId = anOrderId('THIEF');
    const stealing = superseding(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      othersBad.eventId,
    );
    const unknownOrderId = anOrderId('UNKNOWN');
    const unknown = superseding(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId: unknownOrderId }),
      'a0000000-0000-4000-8000-000000000099',
    );
    await publish(stealing, unknown);
    await dlq.waitFor(() => dlqOf(orderId).length === 1 && dlqOf(unknownOrderId).length === 1);
    expect(dlqOf(orderId)[0]?.headers['x-dlq-error']).toMatch(/: it belongs to another order$/);
    expect(dlqOf(unknownOrderId)[0]?.headers['x-dlq-error']).toMatch(
      new RegExp(`: no dead letter of order ${unknownOrderId} has that event id$`),
    );
    expect(await lettersOf(other)).toEqual([
      expect.objectContaining({ reason: 'invalid_event', discarded: false }),
    ]);
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(0);
    expect(await sandboxPayments(pipeline.sandbox, unknownOrderId)).toHaveLength(0);
  });
});
