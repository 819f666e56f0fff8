/**
 * Every ERP event type through Kafka, the worker, the sandbox and back: one order lives
 * its whole life (installments, documents, re-send, manual payment, receipt, refund), a
 * second is cancelled. Published in one go, so per-order ordering is exercised too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  anEnvelope,
  anOrderId,
  cancelledData,
  documentAttachedData,
  documentRemovedData,
  installmentAddedData,
  installmentChangedData,
  installmentRemovedData,
  isoDay,
  markedPaidData,
  paymentRequestedData,
  receiptRequestedData,
  refundRequestedData,
  resendRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

interface StatusEvent {
  type: string;
  orderId: string;
  paymentId: string | null;
  data: Record<string, unknown>;
}

interface SandboxState {
  id: string;
  status: string;
  body: { payment: { internalRef?: string } };
  installments: { id: string; grossAmount: number; status: string }[];
  refunds: { grossRefundedAmount: number }[];
  documents: unknown[];
}

describe('every order event type end to end', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let dlq: TopicReader;

  beforeAll(async () => {
    pipeline = await startPipeline('every_type');
    [, status, dlq] = await Promise.all([
      pipeline.startWorker(),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      TopicReader.start(pipeline.kafka, pipeline.topics.dlq),
    ]);
  });

  afterAll(async () => {
    await Promise.allSettled([status.stop(), dlq.stop()]);
    await pipeline.stop();
  });

  it('applies each command in order and reports each outcome once', async () => {
    const life = anOrderId('LIFE');
    const cancelled = anOrderId('CANCEL');
    const events = [
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({
          installments: [
            { installmentRef: 'A', date: isoDay(10), amount: '500.00' },
            { installmentRef: 'B', date: isoDay(40), amount: '750.00' },
          ],
        }),
        { orderId: life },
      ),
      anEnvelope(
        'order.installment_added',
        installmentAddedData({ installmentRef: 'C', amount: '100.00' }),
        {
          orderId: life,
        },
      ),
      anEnvelope(
        'order.installment_changed',
        installmentChangedData({ installmentRef: 'C', amount: '200.00' }),
        {
          orderId: life,
        },
      ),
      anEnvelope('order.installment_removed', installmentRemovedData({ installmentRef: 'C' }), {
        orderId: life,
      }),
      anEnvelope('order.document_attached', documentAttachedData({ documentRef: 'D1' }), {
        orderId: life,
      }),
      anEnvelope('order.document_attached', documentAttachedData({ documentRef: 'D2' }), {
        orderId: life,
      }),
      anEnvelope('order.document_removed', documentRemovedData({ documentRef: 'D1' }), {
        orderId: life,
      }),
      anEnvelope('order.payment_resend_requested', resendRequestedData(), { orderId: life }),
      anEnvelope('order.marked_paid', markedPaidData(), { orderId: life }),
      anEnvelope('order.terminal_receipt_requested', receiptRequestedData(), { orderId: life }),
      anEnvelope('order.refund_requested', refundRequestedData({ refundId: 'R-1' }), {
        orderId: life,
      }),
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId: cancelled }),
      anEnvelope('order.cancelled', cancelledData(), { orderId: cancelled }),
    ];
    await pipeline.publish(events.map((event) => ({ key: event.orderId, value: event })));

    await status.waitFor(
      (messages) =>
        messages.filter((m) => m.key === life).length >= 11 &&
        messages.filter((m) => m.key === cancelled).length >= 2,
    );
    const typesOf = (orderId: string) =>
      status
        .json<StatusEvent>()
        .filter((event) => event.orderId === orderId)
        .map((event) => event.type);
    expect(typesOf(life)).toEqual([
      'payment.created',
      'installment.added',
      'installment.changed',
      'installment.removed',
      'document.attached',
      'document.attached',
      'document.removed',
      'payment.resent',
      'payment.marked_paid',
      'receipt.printed',
      'payment.refunded',
    ]);
    expect(typesOf(cancelled)).toEqual(['payment.created', 'payment.cancelled']);
    expect(dlq.messages).toHaveLength(0);

    // Payflow's side agrees: the sandbox holds exactly what the commands asked for.
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
    const payments = ((await response.json()) as { payments: SandboxState[] }).payments;
    const remote = payments.filter((payment) => payment.body.payment.internalRef === life);
    expect(remote).toHaveLength(1);
    expect(remote[0]?.status).toBe('PAID');
    expect(remote[0]?.installments.map((i) => [i.grossAmount, i.status])).toEqual([
      // The payment link went out after creation (send_payment_link defaults to true).
      [500, 'SENT'],
      [750, 'SENT'],
      [200, 'CANCELLED'],
    ]);
    expect(remote[0]?.refunds.map((refund) => refund.grossRefundedAmount)).toEqual([125]);
    const cancelledRemote = payments.find(
      (payment) => payment.body.payment.internalRef === cancelled,
    );
    expect(cancelledRemote?.status).toBe('REJECTED');

    const created = status.json<StatusEvent>().find((event) => event.orderId === life);
    expect(created?.data).toMatchObject({ currency: 'NOK' });
    const refunded = status.json<StatusEvent>().find((event) => event.type === 'payment.refunded');
    expect(refunded?.data).toMatchObject({ refundId: 'R-1', currency: 'NOK' });
  });
});
