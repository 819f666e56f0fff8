/**
 * The reconciliation poller against a real database and the sandbox over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { RECONCILIATION_LOCK } from '../../src/reconciliation/reconciliation.poller.js';
import { type TestDatabase } from '../support/database.js';
import { type SandboxHandle } from '../support/sandbox.js';
import { control, type Pipeline } from '../orders/support/pipeline.js';
import {
  changeEvents,
  createPayment,
  simulate,
  startProcessing,
  type Processing,
  startStatusSyncTestBed,
  type StatusSyncTestBed,
} from './status-sync-kit.js';

let bed: StatusSyncTestBed;
let database: TestDatabase;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let processing: Processing;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startStatusSyncTestBed('reconcile');
  ({ database, sandbox, pipeline, processing, db } = bed);
});

afterAll(() => bed?.close());

describe('reconciliation poller', () => {
  it('emits a change no webhook reported (callback domain not whitelisted), once', async () => {
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['elsewhere.example'] });
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');
    await simulate(sandbox, payment.payflowId, 'paid');

    const first = await processing.poller.runPass();
    expect(first.ran).toBe(true);
    expect(first.failed).toEqual([]);
    expect(first.changed).toContainEqual(
      expect.objectContaining({
        orderId: payment.orderId,
        payflowId: payment.payflowId,
        previousProviderStatus: null,
        providerStatus: 'SUCCESS',
        status: 'paid',
      }),
    );
    const events = await changeEvents(db, payment.orderId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.status_changed',
        data: {
          providerStatus: 'SUCCESS',
          previousProviderStatus: null,
          status: 'paid',
          source: 'poll',
        },
      }),
    ]);
    const { rows } = await db.query(
      `SELECT last_polled_at IS NOT NULL AS polled, provider_status FROM payments WHERE id = $1`,
      [payment.id],
    );
    expect(rows[0]).toEqual({ polled: true, provider_status: 'SUCCESS' });
    const { rows: deliveries } = await db.query(`SELECT count(*)::int AS n FROM webhook_inbox`);
    expect(deliveries[0]).toEqual({ n: 0 });

    const second = await processing.poller.runPass();
    expect(second.ran).toBe(true);
    expect(second.changed).toEqual([]);
    expect(await changeEvents(db, payment.orderId)).toHaveLength(1);
  });

  it('skips payments in a final status and records the first DRAFT silently', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    const first = await processing.poller.runPass();
    expect(first.changed.map((change) => change.orderId)).not.toContain(payment.orderId);
    expect(await changeEvents(db, payment.orderId)).toEqual([]);
    const { rows } = await db.query(`SELECT provider_status FROM payments WHERE id = $1`, [
      payment.id,
    ]);
    expect(rows[0]).toEqual({ provider_status: 'DRAFT' });
  });

  it('runs one pass at a time across replicas', async () => {
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [
        RECONCILIATION_LOCK.namespace,
        RECONCILIATION_LOCK.key,
      ]);
      const blocked = await processing.poller.runPass();
      expect(blocked).toMatchObject({ ran: false, checked: 0 });
    } finally {
      await holder.end();
    }

    const other = await startProcessing(database, sandbox);
    try {
      await createPayment(pipeline, db, sandbox);
      await control(sandbox, 'POST', '/faults', {
        method: 'GET',
        path: '/api/payments/*/paymentStatus',
        latencyMs: 300,
        times: 50,
      });
      const results = await Promise.all([processing.poller.runPass(), other.poller.runPass()]);
      expect(results.filter((result) => result.ran)).toHaveLength(1);
    } finally {
      await control(sandbox, 'DELETE', '/faults');
      await other.close();
    }
  });
});
