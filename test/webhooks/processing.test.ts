/**
 * The webhook inbox processor against a real database and the sandbox over HTTP: payments
 * created through the real handler, inbox rows as the receiver writes them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { InDoubtError } from '../../src/errors/dead-letter.errors.js';
import { anEnvelope, isoDay, paymentRequestedData } from '../support/builders.js';
import { type SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  statusEvents,
  thrown,
  type Pipeline,
} from '../orders/support/pipeline.js';
import {
  changeEvents,
  createPayment,
  inboxRow,
  insertInboxRow,
  simulate,
  type Processing,
  startProcessing,
  startStatusSyncTestBed,
  type StatusSyncTestBed,
} from '../reconciliation/status-sync-kit.js';

let bed: StatusSyncTestBed;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let processing: Processing;
let db: pg.Pool;

beforeAll(async () => {
  bed = await startStatusSyncTestBed('webhook_proc');
  ({ sandbox, pipeline, processing, db } = bed);
});

afterAll(() => bed?.close());

async function drain(): Promise<void> {
  // Every due row, whatever other tests left.
  for (let i = 0; i < 10; i += 1) {
    const result = await processing.processor.drainOnce();
    if (result.claimed === 0) return;
  }
}

describe('webhook inbox processing', () => {
  it('turns a webhook into one payment.status_changed from the authoritative state', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');
    const row = await insertInboxRow(db, payment.id, 'payment-update', { paymentStatus: 'PAID' });
    await drain();

    const events = await changeEvents(db, payment.orderId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.status_changed',
        orderId: payment.orderId,
        organizationId: 'org-1',
        paymentId: payment.payflowId,
        data: {
          providerStatus: 'OPENED',
          previousProviderStatus: null,
          status: 'pending',
          source: 'webhook',
        },
      }),
    ]);
    expect(await inboxRow(db, row)).toMatchObject({
      processed_at: expect.any(Date),
      last_error: null,
    });
    const { rows } = await db.query(
      `SELECT p.provider_status, p.status, p.status_checked_at IS NOT NULL AS checked,
              h.provider_status AS h_new, h.previous_provider_status AS h_prev, h.source
         FROM payments p JOIN payment_status_history h ON h.payment_id = p.id
        WHERE p.id = $1`,
      [payment.id],
    );
    expect(rows).toEqual([
      {
        provider_status: 'OPENED',
        status: 'pending',
        checked: true,
        h_new: 'OPENED',
        h_prev: null,
        source: 'webhook',
      },
    ]);

    await simulate(sandbox, payment.payflowId, 'paid');
    await insertInboxRow(db, payment.id, 'status-update');
    await drain();
    const [, paid] = await changeEvents(db, payment.orderId);
    expect(paid?.data).toEqual({
      providerStatus: 'SUCCESS',
      previousProviderStatus: 'OPENED',
      status: 'paid',
      source: 'webhook',
    });
  });

  it("reads Payflow in the payment's trace: the status request carries its trace id", async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    const { rows } = await db.query<{ trace_headers: { traceparent: string } | null }>(
      'SELECT trace_headers FROM payments WHERE id = $1',
      [payment.id],
    );
    const traceId = (rows[0]?.trace_headers?.traceparent ?? '').split('-')[1] ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await simulate(sandbox, payment.payflowId, 'opened');
    await insertInboxRow(db, payment.id, 'payment-update', { paymentStatus: 'PAID' });
    await drain();

    const { requests } = await control<{ requests: { method: string; path: string }[] }>(
      sandbox,
      'GET',
      `/request-traces?traceId=${traceId}`,
    );
    const statusReads = requests.filter(
      (r) => r.method === 'GET' && r.path.endsWith(`/${payment.payflowId}/paymentStatus`),
    );
    expect(statusReads).toHaveLength(1);
  });

  it('makes one event of duplicate webhooks for one change, and none of a repeat', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');
    await insertInboxRow(db, payment.id, 'payment-update');
    await insertInboxRow(db, payment.id, 'status-update');
    await insertInboxRow(db, payment.id, 'payment-update');
    await drain();
    expect(await changeEvents(db, payment.orderId)).toHaveLength(1);

    await insertInboxRow(db, payment.id, 'payment-update');
    await drain();
    expect(await changeEvents(db, payment.orderId)).toHaveLength(1);
    const { rows } = await db.query(
      `SELECT count(*)::int AS pending FROM webhook_inbox WHERE payment_id = $1 AND processed_at IS NULL`,
      [payment.id],
    );
    expect(rows[0]).toEqual({ pending: 0 });
  });

  it("wakes on another replica's NOTIFY, not on its poll", async () => {
    // A second processor as another replica would run it: started, polling only every
    // minute, and never told by a receiver in its own process.
    const replica = await startProcessing(bed.database, sandbox, {
      processing: { autoStart: true, pollIntervalMs: 60_000 },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // its LISTEN is up
      const payment = await createPayment(pipeline, db, sandbox);
      await simulate(sandbox, payment.payflowId, 'opened');
      const row = await insertInboxRow(db, payment.id, 'payment-update');
      await db.query(`SELECT pg_notify('payflow_webhook_inbox', '')`);
      const deadline = Date.now() + 10_000;
      while ((await inboxRow(db, row)).processed_at === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await inboxRow(db, row)).toMatchObject({ processed_at: expect.any(Date) });
      expect(await changeEvents(db, payment.orderId)).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });

  it('refuses an older snapshot applied after a newer one: no regression', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');
    const target = { payflowId: payment.payflowId, organizationId: 'org-1' };
    const older = await processing.sync.fetch(target);
    await simulate(sandbox, payment.payflowId, 'paid');
    const newer = await processing.sync.fetch(target);
    expect(older.status.status).toBe('OPENED');
    expect(newer.status.status).toBe('SUCCESS');

    const first = await processing.sync.applyNow(payment.id, newer, { source: 'webhook' });
    const second = await processing.sync.applyNow(payment.id, older, { source: 'webhook' });
    expect(first.outcome).toBe('applied');
    expect(second.outcome).toBe('stale');
    const events = await changeEvents(db, payment.orderId);
    expect(events.map((event) => event.data)).toEqual([
      {
        providerStatus: 'SUCCESS',
        previousProviderStatus: null,
        status: 'paid',
        source: 'webhook',
      },
    ]);
    const { rows } = await db.query(`SELECT provider_status FROM payments WHERE id = $1`, [
      payment.id,
    ]);
    expect(rows[0]).toEqual({ provider_status: 'SUCCESS' });
  });

  it('emits installment.status_changed when an installment is paid', async () => {
    const payment = await createPayment(pipeline, db, sandbox, {
      installments: { count: 2, firstDate: isoDay(10), intervalMonths: 1 },
    });
    const [remote] = await sandboxPayments(sandbox, payment.orderId);
    const first = remote!.installments![0]!;
    await simulate(sandbox, payment.payflowId, 'installment_paid', first.id);
    await insertInboxRow(db, payment.id, 'payment-update');
    await drain();

    const events = await changeEvents(db, payment.orderId);
    const installmentEvents = events.filter((event) => event.type === 'installment.status_changed');
    const ofFirst = installmentEvents.filter(
      (event) => (event.data as { installmentId?: unknown }).installmentId === first.id,
    );
    // The second installment was never paid: its only change is the payment link going out
    // after creation (CREATED → SENT), which the same webhook's status read also finds.
    const second = remote!.installments![1]!;
    const ofSecond = installmentEvents.filter(
      (event) => (event.data as { installmentId?: unknown }).installmentId === second.id,
    );
    expect(
      ofSecond.map((event) => (event.data as { providerStatus?: unknown }).providerStatus),
    ).toEqual(['SENT']);
    expect(ofFirst).toHaveLength(1);
    expect(ofFirst[0]).toMatchObject({
      paymentId: payment.payflowId,
      data: {
        installmentId: first.id,
        installmentRef: expect.any(String),
        providerStatus: 'PAID',
        previousProviderStatus: 'CREATED',
      },
    });
    const { rows } = await db.query(
      `SELECT provider_status FROM installments WHERE payflow_installment_id = $1`,
      [first.id],
    );
    expect(rows[0]).toEqual({ provider_status: 'PAID' });
  });

  it('turns a terminal-failure webhook into payment.terminal_failed', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await insertInboxRow(db, payment.id, 'terminal-failure', {
      paymentId: payment.payflowId,
      terminalId: 'terminal-7',
      reason: 'card reader offline',
    });
    await drain();
    const events = await changeEvents(db, payment.orderId);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment.terminal_failed',
        paymentId: payment.payflowId,
        data: {
          providerStatus: 'DRAFT',
          terminalId: 'terminal-7',
          reason: 'card reader offline',
          source: 'webhook',
        },
      }),
    ]);
  });

  it('retries after a transient Payflow failure, then processes', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');
    await control(sandbox, 'POST', '/faults', {
      method: 'GET',
      path: '/api/payments/*/paymentStatus',
      status: 503,
      times: 3,
    });
    const row = await insertInboxRow(db, payment.id, 'payment-update');
    await drain();
    const failed = await inboxRow(db, row);
    expect(failed).toMatchObject({ processed_at: null, attempts: 1 });
    expect(failed.last_error).toMatch(/PAYFLOW\.SERVER_ERROR/);
    expect(failed.last_error).not.toContain('\n');
    expect(failed.next_attempt_at.getTime()).toBeGreaterThan(Date.now());
    expect(await changeEvents(db, payment.orderId)).toHaveLength(0);

    await db.query(`UPDATE webhook_inbox SET next_attempt_at = now() WHERE id = $1`, [row]);
    await drain();
    expect(await inboxRow(db, row)).toMatchObject({ processed_at: expect.any(Date), attempts: 1 });
    expect(await changeEvents(db, payment.orderId)).toHaveLength(1);
  });

  it('marks rows processed with the error after a permanent failure (404)', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await db.query(`UPDATE payments SET payflow_id = 'ffffffffffffffffffffffff' WHERE id = $1`, [
      payment.id,
    ]);
    const row = await insertInboxRow(db, payment.id, 'payment-update');
    await drain();
    const done = await inboxRow(db, row);
    expect(done.processed_at).toEqual(expect.any(Date));
    expect(done.last_error).toMatch(/PAYFLOW\.NOT_FOUND/);
  });

  it('resolves an in-doubt payment from a verified webhook hint, then applies the status', async () => {
    await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 502,
      afterProcessing: true,
      times: 1,
    });
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData());
    expect(await thrown(() => pipeline.deliver(envelope))).toBeInstanceOf(InDoubtError);
    const { rows } = await db.query<{ id: string; state: string; payflow_id: string | null }>(
      `SELECT id, state, payflow_id FROM payments WHERE order_id = $1`,
      [envelope.orderId],
    );
    const payment = rows[0]!;
    expect(payment).toMatchObject({ state: 'in_doubt', payflow_id: null });
    const [remote] = await sandboxPayments(sandbox, envelope.orderId);

    // No hint: stays pending, with a clear error.
    const bare = await insertInboxRow(db, payment.id, 'payment-update', {});
    await drain();
    const waiting = await inboxRow(db, bare);
    expect(waiting.processed_at).toBeNull();
    expect(waiting.last_error).toMatch(/in doubt .*no usable paymentId/);

    // A wrong hint is refused.
    const wrong = await createPayment(pipeline, db, sandbox);
    const misled = await insertInboxRow(db, payment.id, 'payment-update', {
      paymentId: wrong.payflowId,
    });
    await db.query(`UPDATE webhook_inbox SET next_attempt_at = now() WHERE id = ANY($1)`, [[bare]]);
    await drain();
    expect((await inboxRow(db, misled)).last_error).toMatch(/could be verified/);
    expect(
      (await db.query(`SELECT payflow_id FROM payments WHERE id = $1`, [payment.id])).rows[0],
    ).toEqual({ payflow_id: null });

    await simulate(sandbox, remote!.id, 'opened');
    const hinted = await insertInboxRow(db, payment.id, 'status-update', { paymentId: remote!.id });
    await db.query(
      `UPDATE webhook_inbox SET next_attempt_at = now() WHERE payment_id = $1 AND processed_at IS NULL`,
      [payment.id],
    );
    await drain();
    expect(await inboxRow(db, hinted)).toMatchObject({ processed_at: expect.any(Date) });
    const events = await statusEvents(db, envelope.orderId);
    expect(events.map((event) => event.type)).toEqual([
      'payment.creation_failed',
      'payment.created',
      'payment.status_changed',
    ]);
    expect(events[2]!.data).toEqual({
      providerStatus: 'OPENED',
      previousProviderStatus: null,
      status: 'pending',
      source: 'webhook',
    });
    expect(
      (await db.query(`SELECT state, payflow_id FROM payments WHERE id = $1`, [payment.id]))
        .rows[0],
    ).toEqual({ state: 'created', payflow_id: remote!.id });
  });
});
