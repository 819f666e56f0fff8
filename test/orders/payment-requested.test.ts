/**
 * order.payment_requested end to end: the real consumer and handler (Nest modules as in the
 * worker), a real Postgres database (migrations) and the sandbox over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  BlockedByEarlierFailureError,
  InDoubtError,
  MappingFailedError,
} from '../../src/errors/dead-letter.errors.js';
import { PayflowError, PayflowValidationError } from '../../src/payflow/payflow.errors.js';
import { OrderBusyError } from '../../src/orders/order.errors.js';
import { TransactionBatcher } from '../../src/database/transaction-batcher.js';
import { aLine, anEnvelope, anOrderId, isoDay, paymentRequestedData } from '../support/builders.js';
import { type TestDatabase } from '../support/database.js';
import { type SandboxHandle } from '../support/sandbox.js';
import {
  WEBHOOK_BASE,
  control,
  sandboxPayments,
  sha256,
  startPipeline,
  statusEvents,
  thrown,
  type Pipeline,
  startOrdersTestBed,
  type OrdersTestBed,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let database: TestDatabase;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_create');
  ({ database, sandbox, pipeline, db } = bed);
});

afterAll(() => bed?.close());

interface PaymentRow {
  id: string;
  order_id: string;
  organization_id: string | null;
  payflow_id: string | null;
  state: string;
  status: string | null;
  currency: string;
  total_gross_minor: string;
  total_net_minor: string;
  payment_link: string | null;
  webhook_token: string;
  api_key_hash: Buffer;
  event_id: string;
  payment_method_id: string | null;
}

async function paymentsOf(orderId: string): Promise<PaymentRow[]> {
  const { rows } = await db.query<PaymentRow>(
    `SELECT * FROM payments WHERE order_id = $1 ORDER BY created_at`,
    [orderId],
  );
  return rows;
}

async function attemptOf(eventId: string) {
  const { rows } = await db.query<{
    state: string;
    owner: string;
    error_code: string | null;
    payment_id: string | null;
  }>(`SELECT state, owner, error_code, payment_id FROM command_attempts WHERE event_id = $1`, [
    eventId,
  ]);
  return rows[0];
}

describe('order.payment_requested', () => {
  it('creates the payment at Payflow and records it with payment.created', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({
        lines: [
          aLine({ description: 'Service', quantity: 2, unitPriceNet: '500.00', taxRate: 25 }),
          aLine({
            description: 'Wipers',
            quantity: 1,
            unitPriceNet: '99.90',
            taxRate: 25,
            discountRate: 10,
          }),
        ],
        installments: { count: 3, firstDate: isoDay(10), intervalMonths: 1 },
        invoiceNumber: 'INV-1',
        sendPaymentLink: true,
        redirect: { successUrl: 'https://shop.example/ok', cancelButtonText: 'Back' },
        sharebox: { plateNumber: 'EV12345' },
      }),
      { orderId },
    );
    await expect(pipeline.deliver(envelope)).resolves.toBe('applied');

    // Postgres: order, payment, installments, attempt, processed event.
    const [payment, ...others] = await paymentsOf(orderId);
    expect(others).toHaveLength(0);
    expect(payment).toMatchObject({
      state: 'created',
      status: 'pending',
      currency: 'NOK',
      organization_id: 'org-1',
      total_net_minor: '108991', // 1000.00 + 89.91
      total_gross_minor: '136239', // 1250.00 + 112.3875 → 112.39
      event_id: envelope.eventId,
    });
    expect(payment?.payflow_id).toMatch(/^[0-9a-f]{24}$/);
    const { rows: orders } = await db.query(`SELECT * FROM orders WHERE order_id = $1`, [orderId]);
    expect(orders[0]).toMatchObject({
      organization_id: 'org-1',
      order_number: 'ON-10042',
      blocked_at: null,
    });
    const { rows: installments } = await db.query<{
      installment_ref: string;
      position: number;
      gross_minor: string;
      payflow_installment_id: string | null;
      type: string;
      provider_status: string;
    }>(`SELECT * FROM installments WHERE payment_id = $1 ORDER BY position`, [payment?.id]);
    expect(installments.map((row) => [row.installment_ref, row.gross_minor, row.type])).toEqual([
      ['1', '45413', 'initial'],
      ['2', '45413', 'scheduled'],
      ['3', '45413', 'scheduled'],
    ]);
    expect(
      installments.every((row) => /^[0-9a-f]{24}$/.test(row.payflow_installment_id ?? '')),
    ).toBe(true);
    expect(await attemptOf(envelope.eventId)).toMatchObject({
      state: 'succeeded',
      payment_id: payment?.id,
    });
    const { rows: processed } = await db.query(
      `SELECT * FROM processed_events WHERE event_id = $1`,
      [envelope.eventId],
    );
    expect(processed[0]).toMatchObject({
      order_id: orderId,
      type: 'order.payment_requested',
      topic: 'erp.orders.v1',
    });

    // Payflow (the sandbox) got the mapped body, with this payment's webhook URLs and key.
    const [remote, ...more] = await sandboxPayments(sandbox, orderId);
    expect(more).toHaveLength(0);
    expect(remote?.id).toBe(payment?.payflow_id);
    const body = remote!.body;
    expect(body.customer).toEqual(paymentRequestedData().customer);
    expect(body.order.objects).toEqual([
      {
        type: 'newCar',
        numberPlate: 'EV12345',
        brand: 'Volvo',
        model: 'EX30',
        year: '2026',
        vinNumber: 'YV1ABCDEF12345678',
      },
      { type: 'tradeInCAR', numberPlate: 'AB12345', brand: 'Saab', model: '9-3', year: '2009' },
    ]);
    expect(body.payment).toMatchObject({
      currency: 'NOK',
      totalGrossAmount: 1362.39,
      totalNetAmount: 1089.91,
      internalRef: orderId,
      invoiceNumber: 'INV-1',
      items: [
        expect.objectContaining({
          description: 'Service',
          grossTotalPrice: 1250,
          netTotalPrice: 1000,
          vatAmount: 250,
          netUnitPrice: 500,
          grossUnitPrice: 625,
        }),
        expect.objectContaining({
          description: 'Wipers',
          grossTotalPrice: 112.39,
          netTotalPrice: 89.91,
          vatAmount: 22.48,
          discountRate: 10,
        }),
      ],
      installments: [
        { date: isoDay(10), grossAmount: 454.13 },
        expect.objectContaining({ grossAmount: 454.13 }),
        expect.objectContaining({ grossAmount: 454.13 }),
      ],
    });
    expect(body.serviceAdvisorEmail).toBe('advisor@dealer.example');
    expect(body.communication).toEqual({ send_payment_link: true });
    expect(body.behaviour).toEqual({ redirectSuccessUrl: 'https://shop.example/ok' });
    expect(body.supportFunctions).toEqual([
      { sharebox: { useSharebox: true, plateNumber: 'EV12345' } },
    ]);
    const token = payment!.webhook_token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(body.callback).toEqual({
      url: `${WEBHOOK_BASE}/webhooks/payflow/${token}/payment-update`,
      status_update_url: `${WEBHOOK_BASE}/webhooks/payflow/${token}/status-update`,
      terminal_failure_url: `${WEBHOOK_BASE}/webhooks/payflow/${token}/terminal-failure`,
      api_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(sha256(body.callback!.api_key).equals(payment!.api_key_hash)).toBe(true);

    // The outbox: payment.created with the link, installments and totals.
    const events = await statusEvents(db, orderId);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'payment.created',
      occurredAt: expect.any(String),
      organizationId: 'org-1',
      orderId,
      paymentId: remote!.id,
      data: {
        sourceEventId: envelope.eventId,
        paymentLink: `https://pay.payflow.test/p/${remote!.id}`,
        currency: 'NOK',
        totalGrossAmount: '1362.39',
        totalNetAmount: '1089.91',
        vatAmount: '272.48',
        paymentMethodId: null,
        installments: remote!.installments!.map((installment, index) => ({
          installmentRef: String(index + 1),
          installmentId: installment.id,
          date: installment.date,
          amount: '454.13',
          currency: 'NOK',
          status: 'CREATED',
        })),
      },
    });
  });

  it('does nothing for a redelivered event id', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    await expect(pipeline.deliver(envelope)).resolves.toBe('applied');
    await expect(pipeline.deliver(envelope, { attempt: 2 })).resolves.toBe('duplicate');
    await expect(pipeline.deliver(envelope, { offset: '999999' })).resolves.toBe('duplicate');
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
    expect(await paymentsOf(orderId)).toHaveLength(1);
    expect(await statusEvents(db, orderId)).toHaveLength(1);
  });

  it('creates a new payment for every payment_requested of an order', async () => {
    const orderId = anOrderId();
    await pipeline.deliver(
      anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
    );
    await pipeline.deliver(
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({ lines: [aLine({ unitPriceNet: 10 })] }),
        { orderId },
      ),
    );
    const payments = await paymentsOf(orderId);
    expect(payments.map((payment) => [payment.state, payment.total_gross_minor])).toEqual([
      ['created', '125000'],
      ['created', '1250'],
    ]);
    expect(new Set(payments.map((payment) => payment.webhook_token)).size).toBe(2);
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(2);
  });

  it('writes payment.creation_failed once for an invalid creation, however often it is delivered', async () => {
    // Installments that do not sum to the total: mapping_failed. A rebalance may deliver it
    // again before its dead letter blocks the order; its status event is told once.
    const orderId = anOrderId();
    const invalid = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ installments: [{ date: isoDay(30), amount: '1.00' }] }),
      { orderId },
    );
    for (const attempt of [1, 2, 3]) {
      expect(await thrown(() => pipeline.deliver(invalid, { attempt }))).toBeInstanceOf(
        MappingFailedError,
      );
    }
    const failed = (await statusEvents(db, orderId)).filter(
      (event) => event.type === 'payment.creation_failed',
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({ reason: 'mapping_failed' });
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(0);
  });

  it('checks paymentMethodId against Payflow, refreshing the list on a miss', async () => {
    const unknownId = 'abcdefabcdefabcdefabcdef';
    const orderId = anOrderId();
    const failing = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ paymentMethodId: unknownId }),
      { orderId },
    );
    const error = await thrown(() => pipeline.deliver(failing));
    expect(error).toBeInstanceOf(MappingFailedError);
    expect((error as MappingFailedError).code).toBe('ORDER.UNKNOWN_PAYMENT_METHOD');
    expect(error.message).toContain(unknownId);
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(0);
    expect(await paymentsOf(orderId)).toHaveLength(0);
    const [failed] = await statusEvents(db, orderId);
    expect(failed).toMatchObject({
      type: 'payment.creation_failed',
      paymentId: null,
      data: { reason: 'mapping_failed', code: 'ORDER.UNKNOWN_PAYMENT_METHOD', validation: [] },
    });

    // Payflow learns a new method: the next miss fetches the list again and finds it.
    await control(sandbox, 'PUT', '/payment-methods', {
      paymentMethods: [
        { id: '000000000000000000000000', name: 'Payment link', type: 'payment_link' },
        { id: unknownId, name: 'New link', type: 'payment_link' },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const later = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ paymentMethodId: unknownId }),
      { orderId },
    );
    await expect(pipeline.deliver(later)).resolves.toBe('applied');
    const [remote] = await sandboxPayments(sandbox, orderId);
    expect(remote?.paymentMethodId).toBe(unknownId);
    expect((await paymentsOf(orderId))[0]?.payment_method_id).toBe(unknownId);
  });

  it('records a 422 as creation_failed with the validation detail and throws it as permanent', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ profileId: 'no-such-profile' }),
      { orderId },
    );
    const error = await thrown(() => pipeline.deliver(envelope));
    expect(error).toBeInstanceOf(PayflowValidationError);
    expect((error as PayflowError).transient).toBe(false);
    const [payment] = await paymentsOf(orderId);
    expect(payment).toMatchObject({ state: 'creation_failed', payflow_id: null });
    expect(await attemptOf(envelope.eventId)).toMatchObject({
      state: 'failed',
      error_code: 'PAYFLOW.VALIDATION',
    });
    const events = await statusEvents(db, orderId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.creation_failed',
        paymentId: null,
        data: {
          sourceEventId: envelope.eventId,
          reason: 'rejected_by_payflow',
          code: 'PAYFLOW.VALIDATION',
          message: expect.stringContaining('business.unknown_profile'),
          validation: [
            {
              loc: ['body', 'payment', 'profileId'],
              msg: expect.any(String),
              type: 'business.unknown_profile',
            },
          ],
        },
      }),
    ]);
    const { rows } = await db.query(`SELECT 1 FROM processed_events WHERE event_id = $1`, [
      envelope.eventId,
    ]);
    expect(rows).toHaveLength(0);
  });

  it('retries a call that took no effect, reusing the payment row', async () => {
    const orderId = anOrderId();
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 429,
      retryAfterSeconds: 0,
      times: 1,
    });
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    const error = await thrown(() => pipeline.deliver(envelope));
    expect(error).toBeInstanceOf(PayflowError);
    expect((error as PayflowError).transient).toBe(true);
    expect(await attemptOf(envelope.eventId)).toMatchObject({
      state: 'failed',
      error_code: 'PAYFLOW.RATE_LIMITED',
    });
    const [before] = await paymentsOf(orderId);
    expect(before?.state).toBe('creating');
    expect(await statusEvents(db, orderId)).toHaveLength(0);

    await expect(pipeline.deliver(envelope, { attempt: 2 })).resolves.toBe('applied');
    const after = await paymentsOf(orderId);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: before?.id, state: 'created' });
    expect(after[0]?.webhook_token).not.toBe(before?.webhook_token);
    const [remote] = await sandboxPayments(sandbox, orderId);
    expect(sha256(remote!.body.callback!.api_key).equals(after[0]!.api_key_hash)).toBe(true);
    expect(remote!.body.callback!.url).toContain(after[0]!.webhook_token);
  });

  it('puts a create whose answer was lost in doubt, never sends it again, and resolves it', async () => {
    const orderId = anOrderId();
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 502,
      afterProcessing: true,
      times: 1,
    });
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    const error = await thrown(() => pipeline.deliver(envelope));
    expect(error).toBeInstanceOf(InDoubtError);
    expect((error as InDoubtError).deadLetterReason).toBe('in_doubt');

    const remotes = await sandboxPayments(sandbox, orderId);
    expect(remotes).toHaveLength(1); // it exists at Payflow
    const [payment] = await paymentsOf(orderId);
    expect(payment).toMatchObject({ state: 'in_doubt', payflow_id: null });
    expect(await attemptOf(envelope.eventId)).toMatchObject({
      state: 'in_doubt',
      error_code: 'PAYFLOW.SERVER_ERROR',
    });
    const events = await statusEvents(db, orderId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.creation_failed',
        data: expect.objectContaining({ reason: 'in_doubt', code: 'EVENT.IN_DOUBT' }),
      }),
    ]);

    // A redelivery stays in doubt: no second call, no second event.
    await expect(pipeline.deliver(envelope, { attempt: 2 })).rejects.toBeInstanceOf(InDoubtError);
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
    expect(await statusEvents(db, orderId)).toHaveLength(1);

    // A webhook (issue 4) reveals Payflow's id: the payment is resolved, payment.created follows.
    const remote = remotes[0]!;
    await expect(
      pipeline.payments.resolveInDoubt(payment!.id, {
        payflowId: remote.id,
        paymentLink: `https://pay.payflow.test/p/${remote.id}`,
      }),
    ).resolves.toBe(true);
    await expect(
      pipeline.payments.resolveInDoubt(payment!.id, { payflowId: remote.id }),
    ).resolves.toBe(false);
    expect((await paymentsOf(orderId))[0]).toMatchObject({
      state: 'created',
      payflow_id: remote.id,
    });
    expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'resolved' });
    const [, created] = await statusEvents(db, orderId);
    expect(created).toMatchObject({
      type: 'payment.created',
      paymentId: remote.id,
      data: { totalGrossAmount: '1250.00' },
    });
    await expect(pipeline.deliver(envelope, { attempt: 3 })).resolves.toBe('duplicate');
  });

  it('finds a call of a worker that died before recording it in doubt once its lease ran out', async () => {
    const crashing = await startPipeline(
      database,
      sandbox,
      {},
      {
        afterCreatePayment: () => {
          throw new Error('simulated crash after the Payflow call');
        },
      },
    );
    const restarted = await startPipeline(database, sandbox);
    try {
      const orderId = anOrderId();
      const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
      await expect(crashing.deliver(envelope)).rejects.toThrow('simulated crash');
      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
      expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'started' });

      // While the lease runs, another worker must wait (transient).
      const busy = await thrown(() => restarted.deliver(envelope, { attempt: 2 }));
      expect(busy).toBeInstanceOf(OrderBusyError);
      expect((busy as OrderBusyError).transient).toBe(true);

      await db.query(
        `UPDATE command_attempts SET lease_until = now() - interval '1 second' WHERE event_id = $1`,
        [envelope.eventId],
      );
      await expect(restarted.deliver(envelope, { attempt: 3 })).rejects.toBeInstanceOf(
        InDoubtError,
      );
      await expect(restarted.deliver(envelope, { attempt: 4 })).rejects.toBeInstanceOf(
        InDoubtError,
      );
      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
      expect(await attemptOf(envelope.eventId)).toMatchObject({
        state: 'in_doubt',
        error_code: 'ATTEMPT.LEASE_EXPIRED',
      });
      expect((await paymentsOf(orderId))[0]?.state).toBe('in_doubt');
      const events = await statusEvents(db, orderId);
      expect(events.map((event) => [event.type, event.data.reason])).toEqual([
        ['payment.creation_failed', 'in_doubt'],
      ]);
    } finally {
      await crashing.close();
      await restarted.close();
    }
  });

  it('records an outcome whose recording failed on the retry, without calling Payflow again', async () => {
    const orderId = anOrderId('FAILREC');
    await db.query(
      `ALTER TABLE processed_events ADD CONSTRAINT test_refuse_failrec CHECK (order_id NOT LIKE 'FAILREC-%')`,
    );
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    try {
      await expect(pipeline.deliver(envelope)).rejects.toThrow(/test_refuse_failrec/);
    } finally {
      await db.query(`ALTER TABLE processed_events DROP CONSTRAINT test_refuse_failrec`);
    }
    expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'started' });
    await expect(pipeline.deliver(envelope, { attempt: 2 })).resolves.toBe('applied');
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
    expect((await paymentsOf(orderId))[0]?.state).toBe('created');
    expect((await statusEvents(db, orderId)).map((event) => event.type)).toEqual([
      'payment.created',
    ]);
  });

  it('begins a burst of fresh events with one shared statement, each order once', async () => {
    const batcher = pipeline.module.get(TransactionBatcher);
    const [a, b, c] = [anOrderId(), anOrderId(), anOrderId()];
    const envelopes = [
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({
          installments: { count: 2, firstDate: isoDay(5), intervalMonths: 1 },
        }),
        { orderId: a },
      ),
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({
          orderNumber: 'ON-B',
          installments: [
            { installmentRef: 'dep', date: isoDay(3), amount: '250.00' },
            { installmentRef: 'rest', date: isoDay(33), amount: '1000.00' },
          ],
        }),
        { orderId: b },
      ),
      anEnvelope('order.payment_requested', paymentRequestedData({ currency: 'SEK' }), {
        orderId: c,
        organizationId: null,
      }),
      // A second payment of order a in the same burst: it begins on its own.
      anEnvelope(
        'order.payment_requested',
        paymentRequestedData({ lines: [aLine({ unitPriceNet: 10 })] }),
        { orderId: a },
      ),
    ];
    const unitsBefore = batcher.stats.units;
    const outcomes = await Promise.all(envelopes.map((envelope) => pipeline.deliver(envelope)));
    expect(outcomes).toEqual(['applied', 'applied', 'applied', 'applied']);
    // 4 sent marks + 4 completions + fewer than 4 begin units (the first three shared one).
    expect(batcher.stats.units - unitsBefore).toBeLessThan(12);

    expect((await paymentsOf(a)).map((payment) => payment.total_gross_minor).sort()).toEqual([
      '1250',
      '125000',
    ]);
    const [paymentB] = await paymentsOf(b);
    expect(paymentB).toMatchObject({ state: 'created', organization_id: 'org-1' });
    const { rows: planB } = await db.query<{ installment_ref: string; gross_minor: string }>(
      `SELECT installment_ref, gross_minor, payflow_installment_id FROM installments
        WHERE payment_id = $1 ORDER BY position`,
      [paymentB?.id],
    );
    expect(planB).toEqual([
      expect.objectContaining({ installment_ref: 'dep', gross_minor: '25000' }),
      expect.objectContaining({ installment_ref: 'rest', gross_minor: '100000' }),
    ]);
    const [paymentC] = await paymentsOf(c);
    expect(paymentC).toMatchObject({ state: 'created', currency: 'SEK', organization_id: null });
    const { rows: orders } = await db.query<{ order_id: string; order_number: string }>(
      `SELECT order_id, order_number, currency FROM orders WHERE order_id = ANY($1) ORDER BY order_id`,
      [[a, b, c]],
    );
    expect(orders).toHaveLength(3);
    expect(orders.find((order) => order.order_id === b)?.order_number).toBe('ON-B');
    for (const envelope of envelopes) {
      expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'succeeded' });
    }
    expect(await sandboxPayments(sandbox, a)).toHaveLength(2);
    // Delivered again: nothing more.
    await expect(pipeline.deliver(envelopes[1]!)).resolves.toBe('duplicate');
    expect(await paymentsOf(b)).toHaveLength(1);
  });

  it('sends nothing for a blocked order', async () => {
    const orderId = anOrderId();
    const first = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ lines: [aLine({ unitPriceNet: '1.001' })] }),
      { orderId },
    );
    const failure = await thrown(() => pipeline.deliver(first));
    expect(failure).toBeInstanceOf(MappingFailedError);
    await pipeline.sink.deadLetter({
      message: pipeline.message(first),
      reason: 'mapping_failed',
      error: failure.message,
      attempts: 1,
      orderId,
      eventId: first.eventId,
      eventType: first.type,
      failedAt: new Date(),
    });
    const next = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    const blocked = await thrown(() => pipeline.deliver(next));
    expect(blocked).toBeInstanceOf(BlockedByEarlierFailureError);
    expect(blocked.message).toContain('mapping_failed');
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(0);
    expect(await paymentsOf(orderId)).toHaveLength(0);
  });
});
