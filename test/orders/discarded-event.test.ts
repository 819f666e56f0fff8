/**
 * A discarded event never takes effect (issue 26 §2): once its dead letter is discarded
 * (dlq discard, or superseded), the ledger says so, and a delivery of the event that Kafka
 * still makes (its offset was not committed when the worker stopped) is a no-op, even when
 * Payflow would now accept it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { Database } from '../../src/database/database.js';
import { CommandAttemptRepository } from '../../src/orders/engine/attempts/command-attempt.repository.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import type { SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  startOrdersTestBed,
  thrown,
  type OrdersTestBed,
  type Pipeline,
} from './support/pipeline.js';

let bed: OrdersTestBed;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startOrdersTestBed('orders_discarded');
  ({ sandbox, pipeline, db } = bed);
});
afterEach(() => control(sandbox, 'DELETE', '/faults'));
afterAll(() => bed?.close());

describe('a discarded event delivered again', () => {
  it('is a no-op, although Payflow would now accept it', async () => {
    const orderId = anOrderId('DISC');
    const creation = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    // Payflow refuses it once (422): no effect, the attempt failed.
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 422,
      times: 1,
    });
    expect((await thrown(() => pipeline.deliver(creation))).name).toBe('PayflowValidationError');
    const sql = pipeline.module.get(Database).sql;
    const event = { eventId: creation.eventId, orderId, command: creation.type };
    expect(await CommandAttemptRepository.discard(sql, event)).toBe(true);
    // Idempotent.
    expect(await CommandAttemptRepository.discard(sql, event)).toBe(true);

    await expect(pipeline.deliver(creation, { attempt: 2 })).resolves.toBe('duplicate');
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(0);
    const { rows } = await db.query<{ state: string }>(
      `SELECT state FROM command_attempts WHERE event_id = $1`,
      [creation.eventId],
    );
    expect(rows).toEqual([{ state: 'discarded' }]);
  });

  it('is refused for an event that took effect', async () => {
    const orderId = anOrderId('DONE');
    const creation = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    await expect(pipeline.deliver(creation)).resolves.toBe('applied');
    const sql = pipeline.module.get(Database).sql;
    expect(
      await CommandAttemptRepository.discard(sql, {
        eventId: creation.eventId,
        orderId,
        command: creation.type,
      }),
    ).toBe(false);
    expect(await sandboxPayments(sandbox, orderId)).toHaveLength(1);
  });
});
