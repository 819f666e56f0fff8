/**
 * A follow-up whose worker stopped after its request left, or whose call failed in a way
 * that may have taken effect, is decided by reading Payflow before it is parked for a
 * person (issue 19): took effect → completed without a second call, status event once; not
 * applied → sent again, once; Payflow unreadable → in doubt, with that recorded.
 *
 * Requests are counted with a sandbox fault that only adds 1 ms of latency: its `applied`
 * count says how many such requests reached the sandbox.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { InDoubtError } from '../../src/errors/dead-letter.errors.js';
import { Database } from '../../src/database/database.js';
import { LateEffectPendingError } from '../../src/orders/engine/attempt.errors.js';
import { OrderShowQuery } from '../../src/operator/order-show/order-show.query.js';
import { renderOrderView } from '../../src/operator/order-show/order-show.view.js';
import {
  anEnvelope,
  anOrderId,
  cancelledData,
  installmentAddedData,
  isoDay,
  paymentRequestedData,
  resendRequestedData,
} from '../support/builders.js';
import type { SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  startOrdersTestBed,
  statusEvents,
  type OrdersTestBed,
  type Pipeline,
  type SandboxPayment,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_in_doubt_probe');
  ({ sandbox, pipeline, db } = bed);
});
afterEach(() => control(sandbox, 'DELETE', '/faults'));
afterAll(() => bed?.close());

interface AttemptRow {
  state: string;
  owner: string;
  probe_outcome: string | null;
  probe_evidence: { read: string; shown: string } | null;
  probed: boolean;
}

async function attemptOf(eventId: string): Promise<AttemptRow | undefined> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT state, owner, probe_outcome, probe_evidence, probed_at IS NOT NULL AS probed
       FROM command_attempts WHERE event_id = $1`,
    [eventId],
  );
  return rows[0];
}

async function createPayment(orderId: string): Promise<SandboxPayment> {
  await pipeline.deliver(
    anEnvelope(
      'order.payment_requested',
      paymentRequestedData({
        installments: { count: 3, firstDate: isoDay(30), intervalMonths: 1 },
      }),
      { orderId },
    ),
  );
  return (await sandboxPayments(sandbox, orderId)).at(-1)!;
}

/**
 * As if a worker had sent the event's call and then been killed: a started attempt of
 * another owner, sent (by default an hour ago, beyond the late-effect window: its request
 * can no longer land), whose lease ran out.
 */
async function deadWorkersAttempt(
  envelope: { eventId: string; orderId: string; type: string },
  orderId: string,
  sentAgo = '1 hour',
): Promise<void> {
  await db.query(
    `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                   payment_id, sent_at)
     SELECT $1::uuid, $2, $3, 'started', 'dead-worker', now() - interval '1 second', p.id,
            now() - $4::interval
       FROM payments p WHERE p.order_id = $2 ORDER BY p.created_at DESC LIMIT 1`,
    [envelope.eventId, orderId, envelope.type, sentAgo],
  );
}

/** Counts the requests matching method and path from now on (see the file comment). */
async function countRequests(method: string, path: string): Promise<() => Promise<number>> {
  const { id } = await control<{ id: string }>(sandbox, 'POST', '/faults', {
    method,
    path,
    latencyMs: 1,
  });
  return async () => {
    const { faults } = await control<{ faults: { id: string; applied: number }[] }>(
      sandbox,
      'GET',
      '/faults',
    );
    return faults.find((fault) => fault.id === id)?.applied ?? -1;
  };
}

async function eventTypes(orderId: string): Promise<string[]> {
  return (await statusEvents(db, orderId)).map((event) => event.type);
}

describe('order.cancelled in doubt', () => {
  it('completes without a second DELETE when Payflow shows the payment REJECTED', async () => {
    const orderId = anOrderId();
    const payment = await createPayment(orderId);
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });
    await deadWorkersAttempt(cancel, orderId);
    // The dead worker's DELETE reached Payflow: the payment is cancelled there.
    await control(sandbox, 'POST', `/payments/${payment.id}/simulate`, { action: 'cancelled' });
    const deletes = await countRequests('DELETE', '/api/payments/*');

    await expect(pipeline.deliver(cancel, { attempt: 2 })).resolves.toBe('applied');

    expect(await deletes()).toBe(0);
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.cancelled']);
    expect(await attemptOf(cancel.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'took_effect',
      probe_evidence: { read: 'GET paymentStatus', shown: 'paymentStatus REJECTED' },
      probed: true,
    });
    const { rows } = await db.query<{ state: string }>(
      `SELECT state FROM orders WHERE order_id = $1`,
      [orderId],
    );
    expect(rows[0]?.state).toBe('cancelled');
    // `order show` tells what was read and what it showed.
    const view = await new OrderShowQuery().show(pipeline.module.get(Database).sql, orderId);
    expect(view?.probeDecisions).toEqual([
      expect.objectContaining({
        eventId: cancel.eventId,
        eventType: 'order.cancelled',
        outcome: 'took_effect',
        read: 'GET paymentStatus',
        shown: 'paymentStatus REJECTED',
        attemptState: 'succeeded',
      }),
    ]);
    expect(renderOrderView(view!)).toContain('Decided by reading Payflow (1)');
    // A later delivery is a duplicate.
    await expect(pipeline.deliver(cancel, { attempt: 3 })).resolves.toBe('duplicate');
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.cancelled']);
  });

  it('completes an own call whose answer was lost, after reading Payflow', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    await control(sandbox, 'POST', '/faults', {
      method: 'DELETE',
      path: '/api/payments/*',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });

    await expect(pipeline.deliver(cancel)).resolves.toBe('applied');

    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.status).toBe('REJECTED');
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.cancelled']);
    expect(await attemptOf(cancel.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'took_effect',
    });
  });

  it('sends the DELETE again, once, when Payflow shows the payment still open', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });
    await deadWorkersAttempt(cancel, orderId);
    const deletes = await countRequests('DELETE', '/api/payments/*');

    await expect(pipeline.deliver(cancel, { attempt: 2 })).resolves.toBe('applied');

    expect(await deletes()).toBe(1);
    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.status).toBe('REJECTED');
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.cancelled']);
    const attempt = await attemptOf(cancel.eventId);
    expect(attempt).toMatchObject({ state: 'succeeded', probe_outcome: 'not_applied' });
    expect(attempt?.owner).not.toBe('dead-worker');
    expect(attempt?.probe_evidence?.shown).toMatch(/^paymentStatus /);
  });

  it('holds an own call that failed unclearly while it may land, then sends it again once', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    // Answered 500 before processing: it may have taken effect, as far as the bridge knows.
    await control(sandbox, 'POST', '/faults', {
      method: 'DELETE',
      path: '/api/payments/*',
      status: 500,
      times: 1,
    });
    const deletes = await countRequests('DELETE', '/api/payments/*');
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });

    // Not applied, but its request left just now: held, not failed, not sent again.
    await expect(pipeline.deliver(cancel)).rejects.toBeInstanceOf(LateEffectPendingError);
    expect(await attemptOf(cancel.eventId)).toMatchObject({
      state: 'started',
      probe_outcome: 'not_applied',
    });
    await expect(pipeline.deliver(cancel, { attempt: 2 })).rejects.toBeInstanceOf(
      LateEffectPendingError,
    );
    expect(await deletes()).toBe(0);
    expect(await eventTypes(orderId)).toEqual(['payment.created']);

    // Once the window has passed since the request left, "not applied" is trusted.
    await db.query(
      `UPDATE command_attempts SET sent_at = sent_at - interval '1 hour',
              last_sent_at = last_sent_at - interval '1 hour'
        WHERE event_id = $1`,
      [cancel.eventId],
    );
    await expect(pipeline.deliver(cancel, { attempt: 3 })).resolves.toBe('applied');
    expect(await deletes()).toBe(1);
    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.status).toBe('REJECTED');
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.cancelled']);
    expect(await attemptOf(cancel.eventId)).toMatchObject({ state: 'succeeded' });
  });

  it('stays in doubt, with "unreadable" recorded, when Payflow cannot be read', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });
    await deadWorkersAttempt(cancel, orderId);
    await control(sandbox, 'POST', '/faults', {
      method: 'GET',
      path: '/api/payments/*/paymentStatus',
      status: 503,
    });
    const deletes = await countRequests('DELETE', '/api/payments/*');

    await expect(pipeline.deliver(cancel, { attempt: 2 })).rejects.toBeInstanceOf(InDoubtError);

    expect(await deletes()).toBe(0);
    expect(await attemptOf(cancel.eventId)).toMatchObject({
      state: 'in_doubt',
      probe_outcome: 'unreadable',
      probed: true,
    });
    expect((await attemptOf(cancel.eventId))?.probe_evidence?.shown).toContain('PAYFLOW.');
    expect(await eventTypes(orderId)).toEqual(['payment.created']);
    // In doubt stays in doubt: the next delivery does not probe or send.
    await control(sandbox, 'DELETE', '/faults');
    await expect(pipeline.deliver(cancel, { attempt: 3 })).rejects.toBeInstanceOf(InDoubtError);
    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.status).not.toBe('REJECTED');
  });
});

describe('order.installment_added in doubt', () => {
  it('adopts the installment Payflow created, without a second one', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments/*/installments/create',
      status: 500,
      afterProcessing: true,
      times: 1,
    });
    const added = anEnvelope(
      'order.installment_added',
      installmentAddedData({ installmentRef: 'extra-1', date: isoDay(150), amount: '300.00' }),
      { orderId },
    );

    await expect(pipeline.deliver(added)).resolves.toBe('applied');

    const remote = (await sandboxPayments(sandbox, orderId)).at(-1)!;
    expect(remote.installments).toHaveLength(4);
    const created = remote.installments!.find((entry) => entry.date === isoDay(150));
    const { rows } = await db.query<{ payflow_installment_id: string; gross_minor: string }>(
      `SELECT i.payflow_installment_id, i.gross_minor FROM installments i
         JOIN payments p ON p.id = i.payment_id
        WHERE p.order_id = $1 AND i.installment_ref = 'extra-1'`,
      [orderId],
    );
    expect(rows).toEqual([{ payflow_installment_id: created?.id, gross_minor: '30000' }]);
    const events = await statusEvents(db, orderId);
    expect(events.map((event) => event.type)).toEqual(['payment.created', 'installment.added']);
    expect(events[1]?.data).toMatchObject({
      installmentRef: 'extra-1',
      installmentId: created?.id,
    });
    expect(await attemptOf(added.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'took_effect',
    });
    await expect(pipeline.deliver(added, { attempt: 2 })).resolves.toBe('duplicate');
    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.installments).toHaveLength(4);
  });

  it('sends it again when a dead worker’s create never reached Payflow', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    const added = anEnvelope(
      'order.installment_added',
      installmentAddedData({ installmentRef: 'extra-2', date: isoDay(160) }),
      { orderId },
    );
    await deadWorkersAttempt(added, orderId);

    await expect(pipeline.deliver(added, { attempt: 2 })).resolves.toBe('applied');

    expect((await sandboxPayments(sandbox, orderId)).at(-1)?.installments).toHaveLength(4);
    expect(await attemptOf(added.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'not_applied',
    });
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'installment.added']);
  });
});

describe('a repeatable follow-up whose worker stopped after its request left', () => {
  it('is never in doubt: the re-send is simply sent again, without a probe', async () => {
    const orderId = anOrderId();
    await createPayment(orderId);
    const resend = anEnvelope('order.payment_resend_requested', resendRequestedData(), {
      orderId,
    });
    await deadWorkersAttempt(resend, orderId);
    const resends = await countRequests('POST', '/partner/payment-methods/resend');

    await expect(pipeline.deliver(resend, { attempt: 2 })).resolves.toBe('applied');

    expect(await resends()).toBe(1);
    const attempt = await attemptOf(resend.eventId);
    expect(attempt).toMatchObject({ state: 'succeeded', probe_outcome: null, probed: false });
    expect(attempt?.owner).not.toBe('dead-worker');
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'payment.resent']);
  });
});
