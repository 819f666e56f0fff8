/**
 * What the pipeline does when things go wrong, seen from Kafka: Payflow refusing (422),
 * Payflow briefly unavailable (503), an answer lost after Payflow did the work, and the
 * later events of an order whose earlier event was dead-lettered.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  anEnvelope,
  anOrderId,
  cancelledData,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

interface StatusEvent {
  type: string;
  orderId: string;
  data: Record<string, unknown>;
}

describe('order pipeline failure paths', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let dlq: TopicReader;

  beforeAll(async () => {
    pipeline = await startPipeline('failures', { PAYFLOW_REQUEST_TIMEOUT: '1s' });
    [, status, dlq] = await Promise.all([
      pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      TopicReader.start(pipeline.kafka, pipeline.topics.dlq),
    ]);
  });

  afterAll(async () => {
    await Promise.allSettled([status.stop(), dlq.stop()]);
    await pipeline.stop();
  });

  const fault = async (body: Record<string, unknown>) => {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBeLessThan(300);
  };
  const paymentsAtPayflow = async (orderId: string) => {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
    const { payments } = (await response.json()) as {
      payments: { body: { payment: { internalRef?: string } } }[];
    };
    return payments.filter((payment) => payment.body.payment.internalRef === orderId).length;
  };
  const eventsOf = (orderId: string) =>
    status.json<StatusEvent>().filter((e) => e.orderId === orderId);
  const letterOf = (orderId: string) => dlq.messages.filter((m) => m.key === orderId);

  it('dead-letters a payment Payflow refuses (422) and reports creation_failed with the detail', async () => {
    const orderId = anOrderId('REJECT');
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope(
          'order.payment_requested',
          paymentRequestedData({ profileId: 'no-such-profile' }),
          {
            orderId,
          },
        ),
      },
    ]);
    await dlq.waitFor(() => letterOf(orderId).length === 1);
    await status.waitFor(() => eventsOf(orderId).length === 1);
    expect(letterOf(orderId)[0]?.headers['x-dlq-reason']).toBe('rejected_by_payflow');
    const failed = eventsOf(orderId)[0];
    expect(failed?.type).toBe('payment.creation_failed');
    expect(failed?.data).toMatchObject({ reason: 'rejected_by_payflow' });
    expect(JSON.stringify(failed?.data.validation)).toContain('business.unknown_profile');
  });

  it('retries a 503 and creates exactly one payment', async () => {
    const orderId = anOrderId('RETRY');
    await fault({ method: 'POST', path: '/api/payments', status: 503, times: 2 });
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      },
    ]);
    await status.waitFor(() => eventsOf(orderId).length === 1);
    expect(eventsOf(orderId)[0]?.type).toBe('payment.created');
    expect(await paymentsAtPayflow(orderId)).toBe(1);
    expect(letterOf(orderId)).toHaveLength(0);
  });

  it('parks a payment whose answer was lost after Payflow created it, instead of creating a second', async () => {
    const orderId = anOrderId('DOUBT');
    await fault({
      method: 'POST',
      path: '/api/payments',
      reset: true,
      afterProcessing: true,
      times: 1,
    });
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      },
    ]);
    await dlq.waitFor(() => letterOf(orderId).length === 1);
    await status.waitFor(() => eventsOf(orderId).length === 1);
    expect(letterOf(orderId)[0]?.headers['x-dlq-reason']).toBe('in_doubt');
    expect(eventsOf(orderId)[0]).toMatchObject({
      type: 'payment.creation_failed',
      data: { reason: 'in_doubt' },
    });
    expect(await paymentsAtPayflow(orderId)).toBe(1);
  });

  it('sends later events of an order after its dead-lettered event, in order', async () => {
    const orderId = anOrderId('BLOCKED');
    const { currency: _omitted, ...invalid } = paymentRequestedData();
    const later = [
      anEnvelope('order.marked_paid', markedPaidData(), { orderId }),
      anEnvelope('order.cancelled', cancelledData(), { orderId }),
    ];
    await pipeline.publish([
      { key: orderId, value: anEnvelope('order.payment_requested', invalid as never, { orderId }) },
      ...later.map((event) => ({ key: orderId, value: event })),
    ]);
    await dlq.waitFor(() => letterOf(orderId).length === 3);
    expect(letterOf(orderId).map((m) => m.headers['x-dlq-reason'])).toEqual([
      'invalid_event',
      'blocked_by_earlier_failure',
      'blocked_by_earlier_failure',
    ]);
    expect(
      letterOf(orderId)
        .slice(1)
        .map((m) => (JSON.parse(m.value) as { eventId: string }).eventId),
    ).toEqual(later.map((event) => event.eventId));
    expect(await paymentsAtPayflow(orderId)).toBe(0);
  });
});
