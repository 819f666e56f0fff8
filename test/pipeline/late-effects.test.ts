/**
 * Late effects through the whole pipeline on real Kafka (issue 26): Payflow applies a
 * follow-up after the bridge stopped waiting for it (its own 1 s time-out; a gateway's 504
 * while the service behind it still commits). The worker holds the call for the
 * late-effect window (6 s here) instead of sending it again, the order's later event waits
 * behind it, and the late effect is completed once it appears. Counted at the sandbox:
 * one installment and one document for one event each.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  anEnvelope,
  anOrderId,
  documentAttachedData,
  installmentAddedData,
  isoDay,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

interface StatusEvent {
  type: string;
  orderId: string;
  data: Record<string, unknown>;
}

interface SandboxPayment {
  status: string;
  body: { payment: { internalRef?: string } };
  installments: unknown[] | null;
  documents: unknown[];
}

describe('late effects on real Kafka', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let dlq: TopicReader;

  beforeAll(async () => {
    pipeline = await startPipeline('late_effects', {
      PAYFLOW_REQUEST_TIMEOUT: '1s',
      PAYFLOW_LATE_EFFECT_WINDOW: '6s',
    });
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
  const atPayflow = async (orderId: string): Promise<SandboxPayment> => {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
    const { payments } = (await response.json()) as { payments: SandboxPayment[] };
    const payment = payments.find((entry) => entry.body.payment.internalRef === orderId);
    if (payment === undefined) throw new Error(`no payment of ${orderId} at the sandbox`);
    return payment;
  };
  const typesOf = (orderId: string) =>
    status
      .json<StatusEvent>()
      .filter((event) => event.orderId === orderId)
      .map((event) => event.type);

  async function created(orderId: string): Promise<void> {
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope(
          'order.payment_requested',
          paymentRequestedData({
            installments: { count: 2, firstDate: isoDay(30), intervalMonths: 1 },
          }),
          { orderId },
        ),
      },
    ]);
    await status.waitFor(() => typesOf(orderId).includes('payment.created'));
  }

  it('holds an installment whose request Payflow applies after the time-out, and the next event waits', async () => {
    const orderId = anOrderId('KLATE');
    await created(orderId);
    // 3 s at Payflow against a 1 s time-out: applied 2 s after the bridge gave up.
    await fault({
      method: 'POST',
      path: '/api/payments/*/installments/create',
      latencyMs: 3_000,
      times: 1,
    });
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope(
          'order.installment_added',
          installmentAddedData({ installmentRef: 'k-late', date: isoDay(90), amount: '80.00' }),
          { orderId },
        ),
      },
      { key: orderId, value: anEnvelope('order.marked_paid', markedPaidData(), { orderId }) },
    ]);
    await status.waitFor(() => typesOf(orderId).includes('payment.marked_paid'), 30_000);

    expect(typesOf(orderId)).toEqual([
      'payment.created',
      'installment.added',
      'payment.marked_paid',
    ]);
    expect((await atPayflow(orderId)).installments).toHaveLength(3);
    expect(dlq.messages.filter((message) => message.key === orderId)).toHaveLength(0);
    // Nothing lands later.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await atPayflow(orderId)).installments).toHaveLength(3);
  }, 60_000);

  it('holds a document upload answered 504 while Payflow still stores it', async () => {
    const orderId = anOrderId('K504');
    await created(orderId);
    await fault({
      method: 'POST',
      path: '/api/payments/uploadDocument',
      status: 504,
      applyDelayMs: 2_000,
      times: 1,
    });
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope(
          'order.document_attached',
          documentAttachedData({ documentRef: 'k-doc', fileName: 'offer.pdf' }),
          { orderId },
        ),
      },
    ]);
    await status.waitFor(() => typesOf(orderId).includes('document.attached'), 30_000);
    expect((await atPayflow(orderId)).documents).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await atPayflow(orderId)).documents).toHaveLength(1);
    expect(typesOf(orderId)).toEqual(['payment.created', 'document.attached']);
  }, 60_000);
});
