/**
 * What still slips through is found (issue 26 §1): installments and documents that Payflow
 * holds for a payment of the bridge and that no event of the order explains are recorded once
 * and reported (a warning, a count, `order show`, the console's timeline) whenever the bridge
 * reads the payment: a webhook's refetch, the reconciliation poll, a probe. Real Postgres,
 * the sandbox over HTTP; the effects are made directly at the sandbox through its Payflow API
 * with the sandbox's client credentials, as a late request (or a person) would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module, type DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { LoggerModule } from '../../src/logging/logger.module.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { Database, sqlOf, type Sql } from '../../src/database/database.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { OrderShowQuery } from '../../src/operator/order-show/order-show.query.js';
import { renderOrderView } from '../../src/operator/order-show/order-show.view.js';
import { OrderTimelineQuery } from '../../src/operator/order-timeline/order-timeline.query.js';
import { OrdersModule } from '../../src/orders/orders.module.js';
import { PayflowModule } from '../../src/payflow/payflow.module.js';
import { UnexplainedEffectRepository } from '../../src/payments/unexplained-effects/unexplained-effect.repository.js';
import { UNEXPLAINED_EFFECTS_METRIC } from '../../src/payments/unexplained-effects/unexplained-effects.metrics.js';
import { OutboxCommittedModule } from '../../src/outbox/outbox-committed.js';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module.js';
import { ReconciliationPoller } from '../../src/reconciliation/reconciliation.poller.js';
import { WebhookInboxProcessor } from '../../src/webhooks/processing/webhook-inbox.processor.js';
import { WebhooksProcessingModule } from '../../src/webhooks/webhooks-processing.module.js';
import { anEnvelope, documentAttachedData, isoDay } from '../support/builders.js';
import { capturingLogger, type CapturedLogs } from '../support/capturing-logger.js';
import { createTestDatabase, openTestPool, type TestDatabase } from '../support/database.js';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { startPipeline, testConfig, type Pipeline } from '../orders/support/pipeline.js';
import {
  createPayment,
  insertInboxRow,
  type CreatedPayment,
} from '../reconciliation/status-sync-kit.js';

const FOUND = 'effect at Payflow that no event of the order explains';

/** The worker's metrics registry, as MetricsModule provides it (global). */
@Module({})
class TestRegistryModule {
  static of(registry: Registry): DynamicModule {
    return {
      module: TestRegistryModule,
      global: true,
      providers: [{ provide: Registry, useValue: registry }],
      exports: [Registry],
    };
  }
}

let database: TestDatabase;
let sandbox: SandboxHandle;
let pool: pg.Pool;
let sql: Sql;
let pipeline: Pipeline;
let processing: TestingModule;
let logs: CapturedLogs;
const registry = new Registry();

beforeAll(async () => {
  [database, sandbox] = await Promise.all([
    createTestDatabase('unexplained_effects'),
    startTestSandbox(),
  ]);
  pool = openTestPool(database.url, 3);
  sql = sqlOf(pool);
  pipeline = await startPipeline(database, sandbox);
  logs = capturingLogger('info');
  const config = testConfig(database, sandbox);
  const orders = OrdersModule.forRoot();
  processing = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      LoggerModule.forRoot(logs.logger),
      TestRegistryModule.of(registry),
      DatabaseModule,
      PayflowModule.forRoot(config, undefined, true),
      orders,
      WebhooksProcessingModule.forRoot({
        outbox: OutboxCommittedModule.withoutRelay(),
        imports: [orders],
        options: { autoStart: false, retryBaseMs: 1_000 },
      }),
      ReconciliationModule.forRoot({
        outbox: OutboxCommittedModule.withoutRelay(),
        options: { autoStart: false, ratePerSecond: 200 },
      }),
    ],
  }).compile();
  await processing.init();
});

afterAll(async () => {
  await processing?.close();
  await pipeline?.close();
  await pool?.end();
  await sandbox?.close();
  await database?.drop();
});

/** A payment the bridge created through its real handler, with a plan of two installments. */
function aPayment(): Promise<CreatedPayment> {
  return createPayment(pipeline, pool, sandbox, {
    installments: { count: 2, firstDate: isoDay(30), intervalMonths: 1 },
  });
}

/** A call of Payflow's API at the sandbox, as any client with its credentials makes it. */
async function atPayflow<T>(path: string, body: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await fetchToken(sandbox)}`,
      'content-type': 'application/json',
      'x-organization-id': 'org-1',
    },
    body: JSON.stringify(body),
  });
  if (response.status !== 200)
    throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** An installment made at Payflow that no event of the order asked for. */
function installmentAtPayflow(payment: CreatedPayment, date: string): Promise<{ id: string }> {
  return atPayflow(`/api/payments/${payment.payflowId}/installments/create`, {
    date,
    grossAmount: 125,
  });
}

function documentAtPayflow(payment: CreatedPayment, fileName: string): Promise<{ id: string }> {
  return atPayflow('/api/payments/uploadDocument', {
    paymentId: payment.payflowId,
    fileName,
    contentType: 'application/pdf',
    contentBase64: Buffer.from('%PDF-1.7 a copy').toString('base64'),
  });
}

async function webhookRead(payment: CreatedPayment): Promise<void> {
  await insertInboxRow(pool, payment.id, 'payment-update');
  const processor = processing.get(WebhookInboxProcessor);
  for (let i = 0; i < 10; i += 1) if ((await processor.drainOnce()).claimed === 0) return;
}

interface EffectRow {
  order_id: string;
  kind: string;
  payflow_id: string;
  due_date: string | null;
  gross_minor: string | null;
  currency: string | null;
  provider_status: string | null;
  file_name: string | null;
  first_seen_by: string;
  first_seen_at: Date;
  last_seen_at: Date;
}

async function effectsOf(payment: CreatedPayment): Promise<EffectRow[]> {
  const { rows } = await pool.query<EffectRow>(
    `SELECT order_id, kind, payflow_id, to_char(due_date, 'YYYY-MM-DD') AS due_date,
            gross_minor::text AS gross_minor, currency, provider_status, file_name,
            first_seen_by, first_seen_at, last_seen_at
       FROM unexplained_effects WHERE payment_id = $1 ORDER BY id`,
    [payment.id],
  );
  return rows;
}

function reported(payment: CreatedPayment): Record<string, unknown>[] {
  return logs.lines.filter((line) => line.msg === FOUND && line.paymentId === payment.id);
}

async function counted(kind: string, source: string): Promise<number> {
  const metric = await registry.getSingleMetric(UNEXPLAINED_EFFECTS_METRIC)?.get();
  const value = metric?.values.find((v) => v.labels.kind === kind && v.labels.source === source);
  return value?.value ?? 0;
}

async function orderShow(orderId: string): Promise<string> {
  const view = await new OrderShowQuery().show(sql, orderId);
  if (view === null) throw new Error(`order ${orderId} not found`);
  return renderOrderView(view);
}

describe('effects no event explains', () => {
  let payment: CreatedPayment;
  let extra: { id: string };
  const date = isoDay(120);

  it("are found by a webhook's refetch: one row, one line, one count, and order show lists it", async () => {
    payment = await aPayment();
    extra = await installmentAtPayflow(payment, date);
    const before = await counted('installment', 'webhook');

    await webhookRead(payment);

    expect(await effectsOf(payment)).toEqual([
      expect.objectContaining({
        order_id: payment.orderId,
        kind: 'installment',
        payflow_id: extra.id,
        due_date: date,
        gross_minor: '12500',
        currency: 'NOK',
        first_seen_by: 'webhook',
      }),
    ]);
    const lines = reported(payment);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        orderId: payment.orderId,
        paymentId: payment.id,
        payflowPaymentId: payment.payflowId,
        kind: 'installment',
        payflowId: extra.id,
        source: 'webhook',
      }),
    ]);
    // Ids only: nothing of the customer, of the amount or of the order's events.
    const ids = ['orderId', 'paymentId', 'payflowPaymentId', 'kind', 'payflowId', 'source'];
    const allowed = new Set([...ids, 'traceId', 'level', 'time', 'pid', 'hostname', 'msg']);
    expect(Object.keys(lines[0] ?? {}).filter((key) => !allowed.has(key))).toEqual([]);
    expect(logs.text()).not.toMatch(/kari|Nordmann|41234567/i);
    expect(await counted('installment', 'webhook')).toBe(before + 1);

    const text = await orderShow(payment.orderId);
    expect(text).toContain('Found at Payflow without an event of this order (1)');
    expect(text).toMatch(
      new RegExp(
        `installment ${extra.id} \\(125\\.00 NOK, ${date}\\) at Payflow that no event of this order ` +
          `explains, first seen \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z by webhook`,
      ),
    );
    const view = await new OrderShowQuery().show(sql, payment.orderId);
    expect(JSON.parse(JSON.stringify(view))).toMatchObject({
      payments: [
        {
          unexplainedEffects: [
            {
              kind: 'installment',
              payflowId: extra.id,
              gross: { amount: '125.00', currency: 'NOK' },
              dueDate: date,
              firstSeenBy: 'webhook',
              explainedBy: null,
            },
          ],
        },
      ],
    });
  });

  it('are reported once: a second webhook and a reconciliation pass only see it again', async () => {
    const [first] = await effectsOf(payment);
    const before = await counted('installment', 'webhook');
    await webhookRead(payment);
    await processing.get(ReconciliationPoller).runPass();

    const rows = await effectsOf(payment);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.first_seen_by).toBe('webhook');
    expect(rows[0]?.last_seen_at.getTime()).toBeGreaterThan(first!.last_seen_at.getTime());
    expect(reported(payment)).toHaveLength(1);
    expect(await counted('installment', 'webhook')).toBe(before);
    expect(await counted('installment', 'reconcile')).toBe(0);
  });

  it("show on the console's timeline, and no longer as unexplained once the bridge records them", async () => {
    const timelines = new OrderTimelineQuery(processing.get(Database, { strict: false }));
    const entry = (await timelines.read(sql, payment.orderId))?.entries.find(
      (e) => e.kind === 'unexplained_effect',
    );
    expect(entry).toMatchObject({
      title: `installment ${extra.id} (125.00 NOK, ${date}) at Payflow that no event of this order explains`,
      outcome: 'unexplained',
      tone: 'bad',
    });
    expect(entry?.facts).toEqual(
      expect.arrayContaining([
        { label: 'Payflow payment', value: payment.payflowId },
        { label: 'First seen by', value: 'webhook' },
      ]),
    );

    // The bridge records it after all (as a probe that adopts it would): the finding stays.
    await pool.query(
      `INSERT INTO installments (payment_id, installment_ref, payflow_installment_id, position,
                                 due_date, gross_minor, type, provider_status)
       VALUES ($1, 'INST-LATE', $2, 3, $3, 12500, 'scheduled', 'CREATED')`,
      [payment.id, extra.id, date],
    );
    const text = await orderShow(payment.orderId);
    expect(text).not.toContain('no event of this order explains');
    expect(text).toContain('explained since, the bridge recorded it as installment INST-LATE');
    expect(
      (await timelines.read(sql, payment.orderId))?.entries.find(
        (e) => e.kind === 'unexplained_effect',
      ),
    ).toMatchObject({ outcome: 'explained since', tone: 'info' });
    const [before] = await effectsOf(payment);
    await webhookRead(payment);
    expect((await effectsOf(payment))[0]?.last_seen_at).toEqual(before?.last_seen_at);
  });

  it('are found by the reconciliation poll, documents too, beside those the bridge attached', async () => {
    const other = await aPayment();
    await pipeline.deliver(
      anEnvelope('order.document_attached', documentAttachedData(), { orderId: other.orderId }),
    );
    const copy = await documentAtPayflow(other, 'invoice (copy).pdf');

    const pass = await processing.get(ReconciliationPoller).runPass();

    expect(pass.failed).toEqual([]);
    expect(pass.unexplained).toBe(1);
    expect(await effectsOf(other)).toEqual([
      expect.objectContaining({
        kind: 'document',
        payflow_id: copy.id,
        file_name: 'invoice (copy).pdf',
        gross_minor: null,
        first_seen_by: 'reconcile',
      }),
    ]);
    expect(reported(other)).toEqual([
      expect.objectContaining({ kind: 'document', payflowId: copy.id, source: 'reconcile' }),
    ]);
    expect(await counted('document', 'reconcile')).toBe(1);
    expect(JSON.stringify(reported(other))).not.toContain('copy).pdf');
    expect(await orderShow(other.orderId)).toContain(
      `document ${copy.id} (invoice (copy).pdf) at Payflow that no event of this order explains`,
    );

    const again = await processing.get(ReconciliationPoller).runPass();
    expect(again.unexplained).toBe(0);
    expect(await counted('document', 'reconcile')).toBe(1);
  });

  it('wait while an attempt that may be about to record them is live', async () => {
    const busy = await aPayment();
    const attempt = randomUUID();
    await pool.query(
      `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                     payment_id, sent_at)
       VALUES ($1, $2, 'order.installment_added', 'started', 'another-worker',
               now() + interval '1 minute', $3, now())`,
      [attempt, busy.orderId, busy.id],
    );
    const late = await installmentAtPayflow(busy, isoDay(150));

    await webhookRead(busy);
    expect(await effectsOf(busy)).toEqual([]);
    expect(reported(busy)).toEqual([]);

    // Its attempt ended without recording it: now nothing explains it.
    await pool.query(
      `UPDATE command_attempts SET state = 'failed', finished_at = now() WHERE event_id = $1`,
      [attempt],
    );
    await webhookRead(busy);
    expect(await effectsOf(busy)).toEqual([
      expect.objectContaining({ kind: 'installment', payflow_id: late.id }),
    ]);
  });

  it('are found by a probe, of the kind its own attempt does not wait for', async () => {
    const probed = await aPayment();
    const late = await installmentAtPayflow(probed, isoDay(180));
    // A worker sent the upload an hour ago and died: the next delivery reads Payflow first.
    const upload = anEnvelope('order.document_attached', documentAttachedData(), {
      orderId: probed.orderId,
    });
    await pool.query(
      `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                     payment_id, sent_at)
       VALUES ($1, $2, $3, 'started', 'dead-worker', now() - interval '1 minute', $4,
               now() - interval '1 hour')`,
      [upload.eventId, probed.orderId, upload.type, probed.id],
    );

    // How the engine goes on from its probe is its own business; the read was checked.
    await pipeline.deliver(upload, { attempt: 2 }).catch(() => undefined);

    expect(await effectsOf(probed)).toEqual([
      expect.objectContaining({ kind: 'installment', payflow_id: late.id, first_seen_by: 'probe' }),
    ]);
  });

  it('cost one statement per check, read by indexes only', async () => {
    const statements: { text: string; params: readonly unknown[] }[] = [];
    const recording: Sql = {
      query: (text, params = []) => {
        statements.push({ text, params });
        return sql.query(text, params);
      },
      execute: (text, params = []) => sql.execute(text, params),
    };
    const repository = new UnexplainedEffectRepository();
    await repository.recordsOf(recording, [{ id: payment.id, orderId: payment.orderId }]);
    await repository.listForOrder(recording, payment.orderId);
    expect(statements).toHaveLength(2);
    const client = await pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      for (const statement of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
          `EXPLAIN (FORMAT JSON) ${statement.text}`,
          statement.params as unknown[],
        );
        expect(JSON.stringify(rows[0]?.['QUERY PLAN'])).not.toContain('Seq Scan');
      }
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  });
});
