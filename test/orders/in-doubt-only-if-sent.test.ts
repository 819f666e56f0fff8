/**
 * A command counts as in doubt only if its request may have left the process. The fault
 * campaign parked 95 creates after one SIGKILL although none had reached Payflow: their
 * attempts were recorded, then they waited behind the client's 429 gate. Now the attempt
 * is marked sent (`sent_at`) just before the request is written, after the gate and a
 * connection slot; an attempt whose worker died before that is taken over, not parked. A
 * fresh create now records its attempt only there (`begin_sent`, in the send hook): while
 * it waits behind the gate nothing is recorded at all.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { InDoubtError } from '../../src/errors/dead-letter.errors.js';
import { PayflowRateLimitedError } from '../../src/payflow/payflow.errors.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import type { TestDatabase } from '../support/database.js';
import type { SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  startOrdersTestBed,
  startPipeline,
  statusEvents,
  thrown,
  type OrdersTestBed,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let database: TestDatabase;
let sandbox: SandboxHandle;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_in_doubt_sent');
  ({ database, sandbox, db } = bed);
});
afterAll(() => bed?.close());

interface AttemptRow {
  state: string;
  sent: boolean;
  error_code: string | null;
}

async function attemptOf(eventId: string): Promise<AttemptRow | undefined> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT state, sent_at IS NOT NULL AS sent, error_code FROM command_attempts WHERE event_id = $1`,
    [eventId],
  );
  return rows[0];
}

/** As if the worker had been killed: its lease runs out while the attempt is still started. */
async function expireLease(eventId: string): Promise<void> {
  await db.query(
    `UPDATE command_attempts SET lease_until = now() - interval '1 second' WHERE event_id = $1`,
    [eventId],
  );
}

describe('a crash during a 429 storm', () => {
  it('parks nothing that never left: the next delivery creates the payment, once', async () => {
    // The call deadline outlives the lease: the worker is "dead" (frozen), not aborting.
    const dying = await startPipeline(database, sandbox, { callDeadlineMs: 120_000 });
    const restarted = await startPipeline(database, sandbox);
    let held: Promise<unknown> | undefined;
    try {
      // A 429 with Retry-After closes the dying worker's gate for 60 s.
      await control(sandbox, 'POST', '/faults', {
        method: 'POST',
        path: '/api/payments',
        status: 429,
        retryAfterSeconds: 60,
        times: 1,
      });
      const first = anEnvelope('order.payment_requested', paymentRequestedData(), {
        orderId: anOrderId(),
      });
      expect(await thrown(() => dying.deliver(first))).toBeInstanceOf(PayflowRateLimitedError);

      // The next create waits behind the gate: nothing leaves, and its attempt, recorded
      // in the send hook after the gate (begin_sent), is not recorded yet.
      const orderId = anOrderId();
      const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
      held = dying.deliver(envelope).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await attemptOf(envelope.eventId)).toBeUndefined();
      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(0);

      // The worker is killed there; the event is delivered again.
      await expect(restarted.deliver(envelope, { attempt: 2 })).resolves.toBe('applied');

      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
      expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'succeeded', sent: true });
      const events = await statusEvents(db, orderId);
      expect(events.map((event) => event.type)).toEqual(['payment.created']);

      // The dead worker's held call never leaves, even once its gate opens or it is closed.
      await dying.close();
      expect(await held).toBeInstanceOf(Error);
      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
      expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'succeeded' });
    } finally {
      await control(sandbox, 'DELETE', '/faults');
      await dying.close();
      await restarted.close();
      await held;
    }
  });

  it('still parks a call that did leave', async () => {
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
      expect(await attemptOf(envelope.eventId)).toMatchObject({ state: 'started', sent: true });

      await expireLease(envelope.eventId);
      await expect(restarted.deliver(envelope, { attempt: 2 })).rejects.toBeInstanceOf(
        InDoubtError,
      );
      expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
      expect(await attemptOf(envelope.eventId)).toMatchObject({
        state: 'in_doubt',
        error_code: 'ATTEMPT.LEASE_EXPIRED',
      });
    } finally {
      await crashing.close();
      await restarted.close();
    }
  });
});
