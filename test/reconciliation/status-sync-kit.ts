/**
 * Kit for the status sync tests (webhook processor, reconciliation poller): the order
 * pipeline to create payments through the real handler, and the processing modules as the
 * worker wires them, against a test database and the sandbox over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import pg from 'pg';
import { LoggerModule } from '../../src/logging/logger.module.js';
import { silentLogger } from '../../src/logging/logger.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { OrdersModule } from '../../src/orders/orders.module.js';
import { PayflowModule } from '../../src/payflow/payflow.module.js';
import { PaymentStatusSync } from '../../src/payments/status-sync/payment-status-sync.js';
import { OutboxCommittedModule } from '../../src/outbox/outbox-committed.js';
import { ReconciliationModule } from '../../src/reconciliation/reconciliation.module.js';
import {
  ReconciliationPoller,
  type ReconciliationOptions,
} from '../../src/reconciliation/reconciliation.poller.js';
import { WebhookInboxProcessor } from '../../src/webhooks/processing/webhook-inbox.processor.js';
import type { WebhookProcessingOptions } from '../../src/webhooks/processing/webhook-processing.options.js';
import { WebhooksProcessingModule } from '../../src/webhooks/webhooks-processing.module.js';
import {
  anEnvelope,
  paymentRequestedData,
  type PaymentRequestedInput,
} from '../support/builders.js';
import type { TestDatabase } from '../support/database.js';
import type { SandboxHandle } from '../support/sandbox.js';
import {
  control,
  sandboxPayments,
  startOrdersTestBed,
  statusEvents,
  testConfig,
  type OrdersTestBed,
  type Pipeline,
  type StatusEnvelope,
} from '../orders/support/pipeline.js';

export interface Processing {
  readonly module: TestingModule;
  readonly processor: WebhookInboxProcessor;
  readonly poller: ReconciliationPoller;
  readonly sync: PaymentStatusSync;
  close(): Promise<void>;
}

export async function startProcessing(
  database: TestDatabase,
  sandbox: SandboxHandle,
  options: { processing?: WebhookProcessingOptions; reconciliation?: ReconciliationOptions } = {},
): Promise<Processing> {
  const config = testConfig(database, sandbox);
  const orders = OrdersModule.forRoot();
  const module = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      LoggerModule.forRoot(silentLogger()),
      DatabaseModule,
      PayflowModule.forRoot(config, undefined, true),
      orders,
      WebhooksProcessingModule.forRoot({
        outbox: OutboxCommittedModule.withoutRelay(),
        imports: [orders],
        options: { autoStart: false, retryBaseMs: 1_000, ...options.processing },
      }),
      ReconciliationModule.forRoot({
        outbox: OutboxCommittedModule.withoutRelay(),
        options: { autoStart: false, ratePerSecond: 200, ...options.reconciliation },
      }),
    ],
  }).compile();
  await module.init();
  return {
    module,
    processor: module.get(WebhookInboxProcessor),
    poller: module.get(ReconciliationPoller),
    sync: module.get(PaymentStatusSync),
    close: () => module.close(),
  };
}

export interface CreatedPayment {
  readonly orderId: string;
  /** payments.id */
  readonly id: string;
  readonly payflowId: string;
}

/** Creates a payment through the real PaymentRequestedHandler. */
export async function createPayment(
  pipeline: Pipeline,
  db: pg.Pool,
  sandbox: SandboxHandle,
  data: Partial<PaymentRequestedInput> = {},
): Promise<CreatedPayment> {
  const envelope = anEnvelope('order.payment_requested', paymentRequestedData(data));
  await pipeline.deliver(envelope);
  const { rows } = await db.query<{ id: string; payflow_id: string }>(
    `SELECT id, payflow_id FROM payments WHERE order_id = $1`,
    [envelope.orderId],
  );
  const [remote] = await sandboxPayments(sandbox, envelope.orderId);
  if (rows[0] === undefined || remote === undefined) throw new Error('payment not created');
  return { orderId: envelope.orderId, id: rows[0].id, payflowId: rows[0].payflow_id };
}

export function simulate(
  sandbox: SandboxHandle,
  payflowId: string,
  action: string,
  installmentId?: string,
): Promise<unknown> {
  return control(sandbox, 'POST', `/payments/${payflowId}/simulate`, {
    action,
    ...(installmentId === undefined ? {} : { installmentId }),
  });
}

/** An inbox row as the receiver writes it. */
export async function insertInboxRow(
  db: pg.Pool,
  paymentId: string,
  kind: 'payment-update' | 'status-update' | 'terminal-failure',
  body: Record<string, unknown> = {},
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, verdict)
     VALUES ($1, $2, $3, $4, 'accepted') RETURNING id::text AS id`,
    [paymentId, kind, randomUUID(), Buffer.from(JSON.stringify(body))],
  );
  return rows[0]!.id;
}

export interface InboxRow {
  id: string;
  attempts: number;
  last_error: string | null;
  processed_at: Date | null;
  next_attempt_at: Date;
}

export async function inboxRow(db: pg.Pool, id: string): Promise<InboxRow> {
  const { rows } = await db.query<InboxRow>(
    `SELECT id::text AS id, attempts, last_error, processed_at, next_attempt_at
       FROM webhook_inbox WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

/** Status events of an order other than payment.created. */
export async function changeEvents(db: pg.Pool, orderId: string): Promise<StatusEnvelope[]> {
  return (await statusEvents(db, orderId)).filter((event) => event.type !== 'payment.created');
}

/** An orders test bed plus the webhook processing and reconciliation of its worker. */
export interface StatusSyncTestBed extends OrdersTestBed {
  readonly processing: Processing;
}

export async function startStatusSyncTestBed(label: string): Promise<StatusSyncTestBed> {
  const bed = await startOrdersTestBed(label, 3);
  const processing = await startProcessing(bed.database, bed.sandbox);
  return {
    ...bed,
    processing,
    async close() {
      await processing.close();
      await bed.close();
    },
  };
}
