/**
 * order.payment_requested with the payment's own references (issue 29): `paymentRef` and
 * `externalRef` reach Payflow (the sandbox keeps the create body as received) under the
 * spec's names, `internalRef` stays the order id, and the payment row keeps them for
 * reconciliation and `order show`. A payment without them sends none and stores nulls.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { type SandboxHandle } from '../support/sandbox.js';
import {
  sandboxPayments,
  startOrdersTestBed,
  type OrdersTestBed,
  type Pipeline,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_refs');
  ({ sandbox, pipeline, db } = bed);
});

afterAll(() => bed?.close());

async function referencesOf(orderId: string) {
  const { rows } = await db.query<{
    payflow_id: string | null;
    state: string;
    payment_ref: string | null;
    external_ref: string | null;
  }>(
    `SELECT payflow_id, state, payment_ref, external_ref FROM payments WHERE order_id = $1
      ORDER BY created_at`,
    [orderId],
  );
  return rows;
}

describe("order.payment_requested with the payment's own references", () => {
  it('sends paymentRef and externalRef to Payflow and keeps them on the payment row', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ paymentRef: '  PAY-2026-0042 ', externalRef: 'DMS/77-1' }),
      { orderId },
    );
    await expect(pipeline.deliver(envelope)).resolves.toBe('applied');

    const [remote, ...more] = await sandboxPayments(sandbox, orderId);
    expect(more).toHaveLength(0);
    expect(remote!.body.payment).toMatchObject({
      paymentRef: 'PAY-2026-0042',
      externalRef: 'DMS/77-1',
      internalRef: orderId,
    });

    expect(await referencesOf(orderId)).toEqual([
      {
        payflow_id: remote!.id,
        state: 'created',
        payment_ref: 'PAY-2026-0042',
        external_ref: 'DMS/77-1',
      },
    ]);
  });

  it('sends none and stores nulls when the order has none', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ paymentRef: null }),
      { orderId },
    );
    await expect(pipeline.deliver(envelope)).resolves.toBe('applied');

    const [remote] = await sandboxPayments(sandbox, orderId);
    expect(remote!.body.payment).not.toHaveProperty('paymentRef');
    expect(remote!.body.payment).not.toHaveProperty('externalRef');
    expect(remote!.body.payment.internalRef).toBe(orderId);
    expect(await referencesOf(orderId)).toEqual([
      { payflow_id: remote!.id, state: 'created', payment_ref: null, external_ref: null },
    ]);
  });
});
