/**
 * Every order command after payment_requested, end to end against Postgres and the
 * sandbox: the Payflow call (seen in the sandbox's state), the state in Postgres, and the
 * CONTRACT §3 status event in the outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { InDoubtError, MappingFailedError } from '../../src/errors/dead-letter.errors.js';
import { PayflowError, PayflowValidationError } from '../../src/payflow/payflow.errors.js';
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
import { type SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  statusEvents,
  thrown,
  type Pipeline,
  type SandboxPayment,
  type StatusEnvelope,
  startOrdersTestBed,
  type OrdersTestBed,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_commands');
  ({ sandbox, pipeline, db } = bed);
});

afterAll(() => bed?.close());

/** A created payment of 3 × 416.67/416.66 NOK installments; returns the sandbox's view. */
async function createPayment(orderId: string, installments = true): Promise<SandboxPayment> {
  await pipeline.deliver(
    anEnvelope(
      'order.payment_requested',
      paymentRequestedData(
        installments
          ? { installments: { count: 3, firstDate: isoDay(30), intervalMonths: 1 } }
          : {},
      ),
      { orderId },
    ),
  );
  const payments = await sandboxPayments(sandbox, orderId);
  return payments.at(-1)!;
}

async function remote(orderId: string): Promise<SandboxPayment> {
  return (await sandboxPayments(sandbox, orderId)).at(-1)!;
}

async function lastEvent(orderId: string): Promise<StatusEnvelope> {
  return (await statusEvents(db, orderId)).at(-1)!;
}

async function installmentRows(orderId: string) {
  const { rows } = await db.query<{
    installment_ref: string;
    payflow_installment_id: string;
    position: number;
    due_date: string;
    gross_minor: string;
    provider_status: string;
    removed_at: Date | null;
  }>(
    `SELECT i.installment_ref, i.payflow_installment_id, i.position,
            to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.gross_minor, i.provider_status, i.removed_at
       FROM installments i JOIN payments p ON p.id = i.payment_id
      WHERE p.order_id = $1 ORDER BY i.position`,
    [orderId],
  );
  return rows;
}

async function paymentRow(orderId: string) {
  const { rows } = await db.query<{
    id: string;
    state: string;
    provider_status: string | null;
    status: string | null;
    total_gross_minor: string;
    payment_method_id: string | null;
  }>(`SELECT * FROM payments WHERE order_id = $1 ORDER BY created_at DESC LIMIT 1`, [orderId]);
  return rows[0]!;
}

function mappingCode(error: Error): string {
  expect(error).toBeInstanceOf(MappingFailedError);
  return (error as MappingFailedError).code;
}

describe('installment commands', () => {
  it('adds, changes and removes installments by the ERP references', async () => {
    const orderId = anOrderId();
    const created = await createPayment(orderId);
    expect(created.installments).toHaveLength(3);

    // added
    const added = anEnvelope(
      'order.installment_added',
      installmentAddedData({ installmentRef: 'extra-1', date: isoDay(150), amount: '300.00' }),
      { orderId },
    );
    await expect(pipeline.deliver(added)).resolves.toBe('applied');
    let view = await remote(orderId);
    expect(view.installments).toHaveLength(4);
    const extra = view.installments![3]!;
    expect(extra).toMatchObject({ date: isoDay(150), grossAmount: 300, type: 'scheduled' });
    expect(view.totalAmount).toBe(1550);
    expect(
      (await installmentRows(orderId)).map((row) => [row.installment_ref, row.position]),
    ).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 3],
      ['extra-1', 4],
    ]);
    expect((await paymentRow(orderId)).total_gross_minor).toBe('155000');
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'installment.added',
      orderId,
      organizationId: 'org-1',
      paymentId: created.id,
      data: {
        sourceEventId: added.eventId,
        installmentRef: 'extra-1',
        installmentId: extra.id,
        date: isoDay(150),
        amount: '300.00',
        currency: 'NOK',
        status: 'CREATED',
      },
    });

    // changed
    const second = created.installments![1]!;
    const changed = anEnvelope(
      'order.installment_changed',
      installmentChangedData({ installmentRef: '2', date: isoDay(70), amount: '400.00' }),
      { orderId },
    );
    await expect(pipeline.deliver(changed)).resolves.toBe('applied');
    view = await remote(orderId);
    expect(view.installments![1]).toMatchObject({
      id: second.id,
      date: isoDay(70),
      grossAmount: 400,
    });
    const rows = await installmentRows(orderId);
    expect(rows[1]).toMatchObject({
      installment_ref: '2',
      due_date: isoDay(70),
      gross_minor: '40000',
    });
    expect((await paymentRow(orderId)).total_gross_minor).toBe(String(155000 - 41666 + 40000));
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'installment.changed',
      data: {
        installmentRef: '2',
        installmentId: second.id,
        date: isoDay(70),
        amount: '400.00',
        previousAmount: '416.66',
        currency: 'NOK',
      },
    });

    // removed
    const removed = anEnvelope(
      'order.installment_removed',
      installmentRemovedData({ installmentRef: '3' }),
      {
        orderId,
      },
    );
    await expect(pipeline.deliver(removed)).resolves.toBe('applied');
    view = await remote(orderId);
    expect(view.installments![2]).toMatchObject({ status: 'CANCELLED' });
    const afterRemove = await installmentRows(orderId);
    expect(afterRemove[2]?.removed_at).not.toBeNull();
    expect(afterRemove[2]?.provider_status).toBe('CANCELLED');
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'installment.removed',
      data: { installmentRef: '3', amount: '416.66', status: 'CANCELLED' },
    });

    // Unknown and removed references, and a reference used twice, cannot be mapped.
    for (const [type, data] of [
      ['order.installment_changed', installmentChangedData({ installmentRef: 'nope' })],
      ['order.installment_removed', installmentRemovedData({ installmentRef: '3' })],
    ] as const) {
      const error = await thrown(() => pipeline.deliver(anEnvelope(type, data, { orderId })));
      expect(mappingCode(error)).toBe('ORDER.UNKNOWN_INSTALLMENT_REF');
    }
    const duplicate = await thrown(() =>
      pipeline.deliver(
        anEnvelope('order.installment_added', installmentAddedData({ installmentRef: '1' }), {
          orderId,
        }),
      ),
    );
    expect(mappingCode(duplicate)).toBe('ORDER.DUPLICATE_INSTALLMENT_REF');
    expect((await remote(orderId)).installments).toHaveLength(4);
  });
});

describe('document commands', () => {
  it('attaches and removes documents by the ERP reference', async () => {
    const orderId = anOrderId();
    const created = await createPayment(orderId, false);
    const content = Buffer.from('%PDF-1.7 a small invoice');
    const attach = anEnvelope(
      'order.document_attached',
      documentAttachedData({ documentRef: 'inv-1', contentBase64: content.toString('base64') }),
      { orderId },
    );
    await expect(pipeline.deliver(attach)).resolves.toBe('applied');
    const [document] = (await remote(orderId)).documents;
    expect(document).toMatchObject({ fileName: 'invoice.pdf', size: content.length });
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'document.attached',
      paymentId: created.id,
      data: {
        documentRef: 'inv-1',
        documentId: document!.id,
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        size: content.length,
      },
    });
    const duplicate = await thrown(() =>
      pipeline.deliver(
        anEnvelope('order.document_attached', documentAttachedData({ documentRef: 'inv-1' }), {
          orderId,
        }),
      ),
    );
    expect(mappingCode(duplicate)).toBe('ORDER.DUPLICATE_DOCUMENT_REF');

    const remove = anEnvelope(
      'order.document_removed',
      documentRemovedData({ documentRef: 'inv-1' }),
      { orderId },
    );
    await expect(pipeline.deliver(remove)).resolves.toBe('applied');
    expect((await remote(orderId)).documents).toHaveLength(0);
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'document.removed',
      data: { documentRef: 'inv-1', documentId: document!.id },
    });
    const { rows } = await db.query<{ removed_at: Date | null; payflow_document_id: string }>(
      `SELECT d.removed_at, d.payflow_document_id FROM documents d JOIN payments p ON p.id = d.payment_id
        WHERE p.order_id = $1`,
      [orderId],
    );
    expect(rows).toEqual([{ removed_at: expect.any(Date), payflow_document_id: document!.id }]);
    const unknown = await thrown(() =>
      pipeline.deliver(
        anEnvelope('order.document_removed', documentRemovedData({ documentRef: 'inv-1' }), {
          orderId,
        }),
      ),
    );
    expect(mappingCode(unknown)).toBe('ORDER.UNKNOWN_DOCUMENT_REF');

    // The reference may be used again once its document is removed.
    await expect(
      pipeline.deliver(
        anEnvelope('order.document_attached', documentAttachedData({ documentRef: 'inv-1' }), {
          orderId,
        }),
      ),
    ).resolves.toBe('applied');
    expect((await remote(orderId)).documents).toHaveLength(1);
  });
});

describe('payment commands', () => {
  it('re-sends, marks paid, prints a receipt and refunds', async () => {
    const orderId = anOrderId();
    const created = await createPayment(orderId, false);

    const resend = anEnvelope('order.payment_resend_requested', resendRequestedData(), { orderId });
    await expect(pipeline.deliver(resend)).resolves.toBe('applied');
    expect(await remote(orderId)).toMatchObject({ lastTerminalId: 'terminal-1' });
    expect((await paymentRow(orderId)).payment_method_id).toBe('000000000000000000000001');
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'payment.resent',
      paymentId: created.id,
      data: {
        paymentMethodId: '000000000000000000000001',
        terminalId: 'terminal-1',
        invoiceType: null,
        status: 'accepted',
      },
    });
    const unknownMethod = await thrown(() =>
      pipeline.deliver(
        anEnvelope(
          'order.payment_resend_requested',
          resendRequestedData({ paymentMethodId: 'ffffffffffffffffffffffff' }),
          {
            orderId,
          },
        ),
      ),
    );
    expect(mappingCode(unknownMethod)).toBe('ORDER.UNKNOWN_PAYMENT_METHOD');

    // A receipt before the payment is paid: Payflow refuses (permanent), nothing is emitted.
    const early = anEnvelope('order.terminal_receipt_requested', receiptRequestedData(), {
      orderId,
    });
    const refused = await thrown(() => pipeline.deliver(early));
    expect(refused).toBeInstanceOf(PayflowValidationError);
    expect((refused as PayflowError).transient).toBe(false);
    expect((await lastEvent(orderId)).type).toBe('payment.resent');

    const paid = anEnvelope('order.marked_paid', markedPaidData({ note: 'cash' }), { orderId });
    await expect(pipeline.deliver(paid)).resolves.toBe('applied');
    expect(await remote(orderId)).toMatchObject({ status: 'PAID', manualPaidNote: 'cash' });
    expect(await paymentRow(orderId)).toMatchObject({ provider_status: 'PAID', status: 'paid' });
    const { rows: history } = await db.query(
      `SELECT h.provider_status, h.previous_provider_status, h.status, h.source, h.event_id
         FROM payment_status_history h JOIN payments p ON p.id = h.payment_id WHERE p.order_id = $1`,
      [orderId],
    );
    expect(history).toEqual([
      {
        provider_status: 'PAID',
        previous_provider_status: null,
        status: 'paid',
        source: 'command',
        event_id: paid.eventId,
      },
    ]);
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'payment.marked_paid',
      data: { note: 'cash', providerStatus: 'PAID', previousProviderStatus: null, status: 'paid' },
    });

    await expect(pipeline.deliver(early, { attempt: 2 })).resolves.toBe('applied');
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'receipt.printed',
      data: { sourceEventId: early.eventId, terminalId: 'terminal-1', status: 'printed' },
    });

    const refund = anEnvelope(
      'order.refund_requested',
      refundRequestedData({ refundId: 'R-1', amountGross: '125.00', amountNet: '100.00' }),
      { orderId },
    );
    await expect(pipeline.deliver(refund)).resolves.toBe('applied');
    const [remoteRefund] = (await remote(orderId)).refunds;
    expect(remoteRefund).toMatchObject({ grossRefundedAmount: 125, netRefundedAmount: 100 });
    const { rows: refunds } = await db.query(
      `SELECT r.refund_ref, r.payflow_refund_id, r.gross_minor, r.net_minor, r.refund_type, r.remaining_minor, r.currency
         FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id = $1`,
      [orderId],
    );
    expect(refunds).toEqual([
      {
        refund_ref: 'R-1',
        payflow_refund_id: remoteRefund!.refundId,
        gross_minor: '12500',
        net_minor: '10000',
        refund_type: 'partial',
        remaining_minor: '112500',
        currency: 'NOK',
      },
    ]);
    expect(await lastEvent(orderId)).toMatchObject({
      type: 'payment.refunded',
      paymentId: created.id,
      data: {
        refundId: 'R-1',
        payflowRefundId: remoteRefund!.refundId,
        refundType: 'partial',
        currency: 'NOK',
        amountGross: '125.00',
        amountNet: '100.00',
        remainingAmount: '1125.00',
      },
    });
    const again = await thrown(() =>
      pipeline.deliver(
        anEnvelope('order.refund_requested', refundRequestedData({ refundId: 'R-1' }), { orderId }),
      ),
    );
    expect(mappingCode(again)).toBe('ORDER.DUPLICATE_REFUND');
    const otherCurrency = await thrown(() =>
      pipeline.deliver(
        anEnvelope('order.refund_requested', refundRequestedData({ currency: 'EUR' }), { orderId }),
      ),
    );
    expect(mappingCode(otherCurrency)).toBe('ORDER.CURRENCY_MISMATCH');
    expect((await remote(orderId)).refunds).toHaveLength(1);
  });

  it('cancels the latest payment of the order', async () => {
    const orderId = anOrderId();
    const first = await createPayment(orderId);
    const latest = await createPayment(orderId);
    const cancel = anEnvelope(
      'order.cancelled',
      cancelledData({ reason: 'customer changed mind' }),
      { orderId },
    );
    await expect(pipeline.deliver(cancel)).resolves.toBe('applied');
    const [older, newer] = await sandboxPayments(sandbox, orderId);
    expect(older).toMatchObject({ id: first.id, status: 'DRAFT' });
    expect(newer).toMatchObject({ id: latest.id, status: 'REJECTED' });
    expect(newer!.installments!.every((installment) => installment.status === 'CANCELLED')).toBe(
      true,
    );
    expect(await paymentRow(orderId)).toMatchObject({
      state: 'cancelled',
      provider_status: 'REJECTED',
      status: 'cancelled',
    });
    const { rows } = await db.query(`SELECT state FROM orders WHERE order_id = $1`, [orderId]);
    expect(rows).toEqual([{ state: 'cancelled' }]);
    expect(
      (await installmentRows(orderId)).filter((row) => row.provider_status === 'CANCELLED'),
    ).toHaveLength(3);
    expect(await lastEvent(orderId)).toEqual({
      eventId: expect.any(String),
      type: 'payment.cancelled',
      occurredAt: expect.any(String),
      organizationId: 'org-1',
      orderId,
      paymentId: latest.id,
      data: {
        sourceEventId: cancel.eventId,
        reason: 'customer changed mind',
        providerStatus: 'REJECTED',
        previousProviderStatus: null,
        status: 'cancelled',
      },
    });
    await expect(pipeline.deliver(cancel, { attempt: 2 })).resolves.toBe('duplicate');
  });

  it('refuses commands for an order without a created payment', async () => {
    const orderId = anOrderId();
    for (const envelope of [
      anEnvelope('order.cancelled', cancelledData(), { orderId }),
      anEnvelope('order.marked_paid', markedPaidData(), { orderId }),
      anEnvelope('order.refund_requested', refundRequestedData(), { orderId }),
      anEnvelope('order.document_attached', documentAttachedData(), { orderId }),
    ]) {
      const error = await thrown(() => pipeline.deliver(envelope));
      expect(mappingCode(error)).toBe('ORDER.NO_PAYMENT');
    }
    expect(await statusEvents(db, orderId)).toHaveLength(0);
  });

  it('puts a refund whose answer was lost in doubt and never sends it again', async () => {
    const orderId = anOrderId();
    await createPayment(orderId, false);
    await pipeline.deliver(anEnvelope('order.marked_paid', markedPaidData(), { orderId }));
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/refund',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const refund = anEnvelope('order.refund_requested', refundRequestedData(), { orderId });
    await expect(pipeline.deliver(refund)).rejects.toBeInstanceOf(InDoubtError);
    await expect(pipeline.deliver(refund, { attempt: 2 })).rejects.toBeInstanceOf(InDoubtError);
    expect((await remote(orderId)).refunds).toHaveLength(1);
    const { rows } = await db.query(`SELECT state FROM command_attempts WHERE event_id = $1`, [
      refund.eventId,
    ]);
    expect(rows).toEqual([{ state: 'in_doubt' }]);
    expect((await lastEvent(orderId)).type).toBe('payment.marked_paid');
  });

  it('retries a repeatable call (re-send) after an unclear failure', async () => {
    const orderId = anOrderId();
    await createPayment(orderId, false);
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/partner/payment-methods/resend',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const resend = anEnvelope('order.payment_resend_requested', resendRequestedData(), { orderId });
    const error = await thrown(() => pipeline.deliver(resend));
    expect(error).toBeInstanceOf(PayflowError);
    expect((error as PayflowError).transient).toBe(true);
    const { rows } = await db.query(`SELECT state FROM command_attempts WHERE event_id = $1`, [
      resend.eventId,
    ]);
    expect(rows).toEqual([{ state: 'failed' }]);
    await expect(pipeline.deliver(resend, { attempt: 2 })).resolves.toBe('applied');
    expect((await lastEvent(orderId)).type).toBe('payment.resent');
  });
});
