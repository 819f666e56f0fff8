/**
 * A late effect is never doubled (issue 26): a read of Payflow that shows a call "not
 * applied" is trusted only once PAYFLOW_LATE_EFFECT_WINDOW (10 s in this bed, time-out 5 s)
 * has passed since its request left. Until then the call is held: nothing is sent again,
 * and a read that finds it applied completes it. Each case counts what the sandbox holds
 * (installments, documents), not only what the bridge published.
 *
 * The transport's retries are played by `untilSettled`: deliveries of the same event, one
 * a second, as the order's retry loop would make them while the call is held.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { LateEffectPendingError } from '../../src/orders/engine/attempt.errors.js';
import { mapInstallmentAdded } from '../../src/orders/installment-added/installment-added.mapping.js';
import { PAYFLOW_API } from '../../src/payflow/payflow.module.js';
import type { PayflowApi } from '../../src/payflow/payflow.types.js';
import { Database } from '../../src/database/database.js';
import { UnexplainedEffects } from '../../src/payments/unexplained-effects/unexplained-effects.service.js';
import type { Delivered } from '../../src/orders/engine/command-outcome.js';
import {
  anEnvelope,
  anOrderId,
  documentAttachedData,
  installmentAddedData,
  isoDay,
  paymentRequestedData,
} from '../support/builders.js';
import type { SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  startOrdersTestBed,
  startPipeline,
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
  bed = await startOrdersTestBed('orders_late_effects');
  ({ sandbox, pipeline, db } = bed);
});
afterEach(() => control(sandbox, 'DELETE', '/faults'));
afterAll(() => bed?.close());

const INSTALLMENT_CREATE = '/api/payments/*/installments/create';
const DOCUMENT_UPLOAD = '/api/payments/uploadDocument';

interface AttemptRow {
  state: string;
  owner: string;
  probe_outcome: string | null;
  held_since: Date | null;
  held_until: Date | null;
  window_end: Date | null;
}

async function attemptOf(eventId: string): Promise<AttemptRow | undefined> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT state, owner, probe_outcome, held_since, held_until,
            COALESCE(last_sent_at, sent_at) + interval '10 seconds' AS window_end
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

async function remote(orderId: string): Promise<SandboxPayment> {
  const payment = (await sandboxPayments(sandbox, orderId)).at(-1);
  if (payment === undefined) throw new Error(`no payment of ${orderId} at the sandbox`);
  return payment;
}

async function eventTypes(orderId: string): Promise<string[]> {
  return (await statusEvents(db, orderId)).map((event) => event.type);
}

type Envelope = Parameters<Pipeline['deliver']>[0];

/**
 * Delivers the event again once a second while it is held (as the transport retries it),
 * until it settles; returns the outcome and how many deliveries were held.
 */
async function untilSettled(
  worker: Pipeline,
  envelope: Envelope,
  firstAttempt = 1,
  limitMs = 40_000,
): Promise<{ outcome: Delivered; held: number }> {
  const deadline = Date.now() + limitMs;
  let held = 0;
  for (let attempt = firstAttempt; Date.now() < deadline; attempt++) {
    try {
      return { outcome: await worker.deliver(envelope, { attempt }), held };
    } catch (error) {
      if (!(error instanceof LateEffectPendingError)) throw error;
      held++;
      expect(error.waitsUntilMs).toBeGreaterThan(Date.now() - 1_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  throw new Error(`${envelope.type} ${envelope.eventId} still held after ${limitMs} ms`);
}

describe('an own call that timed out, applied by Payflow after the answer was lost', () => {
  it('is held, not sent again, and completed once the late installment appears', async () => {
    const orderId = anOrderId('LATE');
    await createPayment(orderId);
    // Payflow holds the request 7 s (beyond the bridge's 5 s time-out), then applies it:
    // the handler runs after the wait even though the client is gone.
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: INSTALLMENT_CREATE,
      latencyMs: 7_000,
      times: 1,
    });
    const added = anEnvelope(
      'order.installment_added',
      installmentAddedData({ installmentRef: 'late-1', date: isoDay(120), amount: '250.00' }),
      { orderId },
    );

    await expect(pipeline.deliver(added)).rejects.toBeInstanceOf(LateEffectPendingError);
    const held = await attemptOf(added.eventId);
    expect(held).toMatchObject({ state: 'started', probe_outcome: 'not_applied' });
    expect(held?.held_until?.getTime()).toBe(held?.window_end?.getTime());
    expect((await remote(orderId)).installments).toHaveLength(3);

    const { outcome, held: waits } = await untilSettled(pipeline, added, 2);
    expect(outcome).toBe('applied');
    expect(waits).toBeGreaterThan(0);

    // One installment at Payflow for one event, and one installment.added.
    expect((await remote(orderId)).installments).toHaveLength(4);
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'installment.added']);
    expect(await attemptOf(added.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'took_effect',
    });
    expect((await attemptOf(added.eventId))?.held_since).not.toBeNull();
    // Nothing lands later: the sandbox still holds four.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await remote(orderId)).installments).toHaveLength(4);
  }, 60_000);
});

describe('a gateway that answers 504 while the service behind it still commits', () => {
  it('holds the document upload and completes it when the late upload appears', async () => {
    const orderId = anOrderId('GW');
    await createPayment(orderId);
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: DOCUMENT_UPLOAD,
      status: 504,
      applyDelayMs: 3_000,
      times: 1,
    });
    const attached = anEnvelope(
      'order.document_attached',
      documentAttachedData({ documentRef: 'contract-1', fileName: 'contract.pdf' }),
      { orderId },
    );

    await expect(pipeline.deliver(attached)).rejects.toBeInstanceOf(LateEffectPendingError);
    expect((await remote(orderId)).documents).toHaveLength(0);

    const { outcome } = await untilSettled(pipeline, attached, 2);
    expect(outcome).toBe('applied');
    expect((await remote(orderId)).documents).toHaveLength(1);
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'document.attached']);
  }, 60_000);
});

describe('a worker stopped while Payflow still held its request', () => {
  it('is waited out by the next worker, and the one after, from the recorded send mark, without a second call', async () => {
    const orderId = anOrderId('KILL');
    const payment = await createPayment(orderId);
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: INSTALLMENT_CREATE,
      latencyMs: 4_000,
      times: 1,
    });
    const killData = installmentAddedData({
      installmentRef: 'kill-1',
      date: isoDay(130),
      amount: '120.00',
    });
    const added = anEnvelope('order.installment_added', killData, { orderId });
    // A worker sent the request and was stopped while Payflow held it: its attempt is
    // sent, its lease ran out, and its request (the same call, abandoned by its client
    // after 300 ms) is still held by Payflow, which applies it after 4 s.
    await db.query(
      `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                     payment_id, sent_at, last_sent_at)
       SELECT $1::uuid, $2, $3, 'started', 'dead-worker', now() - interval '1 second', p.id,
              now(), now()
         FROM payments p WHERE p.order_id = $2 ORDER BY p.created_at DESC LIMIT 1`,
      [added.eventId, orderId, added.type],
    );
    const payflow = pipeline.module.get<PayflowApi>(PAYFLOW_API);
    const abandoned = payflow
      .installment(
        {
          action: 'create',
          paymentId: payment.id,
          input: mapInstallmentAdded(killData, payment.currency).input,
        },
        { signal: AbortSignal.timeout(300), currency: payment.currency },
      )
      .then(
        () => 'answered',
        () => 'abandoned',
      );
    expect(await abandoned).toBe('abandoned');

    // The replacement reads "not applied", but the request may still land: held.
    await expect(pipeline.deliver(added, { attempt: 2 })).rejects.toBeInstanceOf(
      LateEffectPendingError,
    );
    const held = await attemptOf(added.eventId);
    expect(held?.held_until?.getTime()).toBe(held?.window_end?.getTime());

    // A third worker after the replacement died too waits out the same window.
    const third = await startPipeline(bed.database, sandbox);
    try {
      const { outcome } = await untilSettled(third, added, 3);
      expect(outcome).toBe('applied');
    } finally {
      await third.close();
    }
    expect((await remote(orderId)).installments).toHaveLength(4);
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'installment.added']);
    expect(await attemptOf(added.eventId)).toMatchObject({
      state: 'succeeded',
      probe_outcome: 'took_effect',
    });
  }, 60_000);
});

describe('a request Payflow applies after the window', () => {
  it('is sent again after the window; the late one lands as a second installment', async () => {
    const orderId = anOrderId('AFTER');
    await createPayment(orderId);
    // Held 14 s: beyond the 10 s window, which Payflow is assumed never to exceed.
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: INSTALLMENT_CREATE,
      latencyMs: 14_000,
      times: 1,
    });
    const added = anEnvelope(
      'order.installment_added',
      installmentAddedData({ installmentRef: 'after-1', date: isoDay(140), amount: '99.00' }),
      { orderId },
    );
    await expect(pipeline.deliver(added)).rejects.toBeInstanceOf(LateEffectPendingError);
    // After the window "not applied" is trusted: failed, and the retry sends it again.
    const sentAgain = await untilSettledOrRetried(added);
    expect(sentAgain).toBe('applied');
    expect((await remote(orderId)).installments).toHaveLength(4);
    // The first request lands at 14 s: Payflow now holds an installment no event explains.
    await waitFor(async () => ((await remote(orderId)).installments ?? []).length === 5, 15_000);
    expect(await eventTypes(orderId)).toEqual(['payment.created', 'installment.added']);

    // The next read of the payment reports it, once: nothing is deleted.
    const { rows } = await db.query<{ id: string; payflow_id: string; currency: string }>(
      `SELECT id::text AS id, payflow_id, currency FROM payments WHERE order_id = $1`,
      [orderId],
    );
    const ours = rows[0]!;
    const read = await pipeline.module
      .get<PayflowApi>(PAYFLOW_API)
      .getPaymentStatus(ours.payflow_id, { currency: ours.currency.trim() });
    const effects = UnexplainedEffects.create(pipeline.module.get(Database).sql);
    const found = await effects.check({ id: ours.id, orderId }, read, 'probe');
    expect(found).toEqual([expect.objectContaining({ kind: 'installment', firstSeen: true })]);
    expect(await effects.check({ id: ours.id, orderId }, read, 'probe')).toEqual([
      expect.objectContaining({ firstSeen: false }),
    ]);
    expect((await remote(orderId)).installments).toHaveLength(5);
  }, 60_000);
});

/** untilSettled, where the held call's own attempt fails after the window and is retried. */
async function untilSettledOrRetried(envelope: Envelope): Promise<Delivered> {
  for (let attempt = 2; attempt < 60; attempt++) {
    try {
      return (await untilSettled(pipeline, envelope, attempt)).outcome;
    } catch (error) {
      if (!(error instanceof Error) || !/can no longer land/.test(error.message)) throw error;
    }
  }
  throw new Error('never settled');
}

async function waitFor(check: () => Promise<boolean>, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`condition not met within ${limitMs} ms`);
}
