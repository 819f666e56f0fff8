/**
 * The order pipeline as the worker builds it (Nest modules: config, logger, database,
 * Payflow client, OrdersModule) against a test database and a sandbox, with helpers to
 * deliver events the way the transport does (by @EventPattern) and to read what came out.
 */
import { createHash } from 'node:crypto';
import { expect } from '@jest/globals';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { Test, type TestingModule } from '@nestjs/testing';
import pg from 'pg';
import { LoggerModule } from '../../../src/logging/logger.module.js';
import { silentLogger } from '../../../src/logging/logger.js';
import { loadConfig, type AppConfig } from '../../../src/config/app-config.js';
import { ConfigModule } from '../../../src/config/config.module.js';
import { DatabaseModule } from '../../../src/database/database.module.js';
import { DEAD_LETTER_SINK, type DeadLetterSink } from '../../../src/messaging/dead-letter.port.js';
import type { InboundMessage } from '../../../src/messaging/messaging.ports.js';
import type { Delivered } from '../../../src/orders/engine/command-outcome.js';
import type { OrderEnvelope } from '../../../src/events/order-event.schema.js';
import { OrdersConsumer } from '../../../src/orders/orders.consumer.js';
import { DeadLettersModule } from '../../../src/dead-letters/dead-letters.module.js';
import { OrdersModule, type OrdersOptionOverrides } from '../../../src/orders/orders.module.js';
import { PAYFLOW_API, PayflowModule } from '../../../src/payflow/payflow.module.js';
import type { PayflowApi } from '../../../src/payflow/payflow.types.js';
import {
  IN_DOUBT_RESOLVER,
  type InDoubtResolver,
} from '../../../src/payments/in-doubt-resolver.port.js';
import { createTestDatabase, openTestPool, type TestDatabase } from '../../support/database.js';
import { aContext, aMessage, type MessageOptions } from '../../support/builders.js';
import {
  sandboxControl,
  startTestSandbox,
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  type SandboxHandle,
} from '../../support/sandbox.js';

export const WEBHOOK_BASE = 'https://bridge.example.test';
export const STATUS_TOPIC = 'payflow.payment-status.v1';
export const DLQ_TOPIC = 'erp.orders.v1.dlq';

export function testConfig(database: TestDatabase, sandbox: SandboxHandle): AppConfig {
  return loadConfig({
    DATABASE_URL: database.url,
    DB_MIGRATE: 'false',
    DB_POOL_SIZE: '8',
    LOG_LEVEL: 'silent',
    PAYFLOW_BASE_URL: sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
    PAYFLOW_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    PAYFLOW_REQUEST_TIMEOUT: '5s',
    // A call found not applied is sent again 10 s after its request left, not 3 minutes.
    PAYFLOW_LATE_EFFECT_WINDOW: '10s',
    WEBHOOK_PUBLIC_BASE_URL: WEBHOOK_BASE,
  });
}

type ConsumerMethod = (
  envelope: OrderEnvelope,
  ctx: ReturnType<typeof aContext>,
) => Promise<Delivered>;

export interface Pipeline {
  readonly module: TestingModule;
  readonly consumer: OrdersConsumer;
  /** Settles payments whose creation is in doubt (the payment_requested side). */
  readonly payments: InDoubtResolver;
  readonly sink: DeadLetterSink;
  /** Delivers an envelope to its @EventPattern method, like the transport. */
  deliver(
    envelope: OrderEnvelope,
    options?: MessageOptions & { attempt?: number },
  ): Promise<Delivered>;
  /** The message `deliver` would build (for dead letters). */
  message(envelope: OrderEnvelope, options?: MessageOptions): InboundMessage;
  close(): Promise<void>;
}

/** Test-only seams around the Payflow client, installed in the test module. */
export interface PipelineSeams {
  /**
   * Runs after Payflow answered a createPayment and before the handler sees the answer. A
   * hook that throws simulates a worker that died at the worst moment: the request left,
   * nothing is recorded and the error propagates.
   */
  readonly afterCreatePayment?: () => void | Promise<void>;
}

/** Wraps the module's Payflow client (the instance every handler holds) with the seams. */
function installSeams(api: PayflowApi, seams: PipelineSeams): void {
  const after = seams.afterCreatePayment;
  if (after === undefined) return;
  const createPayment = api.createPayment.bind(api);
  api.createPayment = async (input, options) => {
    const created = await createPayment(input, options);
    await after();
    return created;
  };
}

export async function startPipeline(
  database: TestDatabase,
  sandbox: SandboxHandle,
  overrides: OrdersOptionOverrides = {},
  seams: PipelineSeams = {},
): Promise<Pipeline> {
  const config = testConfig(database, sandbox);
  const module = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      LoggerModule.forRoot(silentLogger()),
      DatabaseModule,
      PayflowModule.forRoot(config, undefined, true),
      OrdersModule.forRoot(overrides),
      DeadLettersModule,
    ],
  }).compile();
  installSeams(module.get<PayflowApi>(PAYFLOW_API), seams);
  await module.init();
  const consumer = module.get(OrdersConsumer);
  const routes = new Map<string, ConsumerMethod>();
  const prototype = Object.getPrototypeOf(consumer) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const method = prototype[name];
    if (typeof method !== 'function') continue;
    const patterns: unknown = Reflect.getMetadata(PATTERN_METADATA, method);
    if (!Array.isArray(patterns)) continue;
    for (const pattern of patterns)
      routes.set(String(pattern), (method as ConsumerMethod).bind(consumer));
  }
  return {
    module,
    consumer,
    payments: module.get<InDoubtResolver>(IN_DOUBT_RESOLVER),
    sink: module.get<DeadLetterSink>(DEAD_LETTER_SINK),
    message: (envelope, options = {}) => aMessage(envelope, options),
    deliver: (envelope, options = {}) => {
      const route = routes.get(envelope.type);
      if (route === undefined) throw new Error(`no @EventPattern for ${envelope.type}`);
      return route(envelope, aContext(aMessage(envelope, options), options.attempt ?? 1));
    },
    close: () => module.close(),
  };
}

// ---------------------------------------------------------------- reading the results

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export interface OutboxRow {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly value: Buffer;
  readonly headers: Record<string, string>;
}

export interface StatusEnvelope {
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: string;
  readonly organizationId: string | null;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: Record<string, unknown>;
}

export async function outboxRows(
  db: pg.Pool,
  key: string,
  topic = STATUS_TOPIC,
): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    `SELECT id, topic, key, value, headers FROM outbox WHERE key = $1 AND topic = $2 ORDER BY id`,
    [key, topic],
  );
  return rows;
}

/** The status events of an order, oldest first. */
export async function statusEvents(db: pg.Pool, orderId: string): Promise<StatusEnvelope[]> {
  return (await outboxRows(db, orderId)).map((row) => {
    // A status event carries the trace of the step that made it, when it had one (CONTRACT §8).
    expect(row.headers).toEqual({
      'content-type': 'application/json',
      'x-event-type': expect.any(String),
      ...(row.headers.traceparent === undefined
        ? {}
        : { traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/) }),
      ...(row.headers.tracestate === undefined ? {} : { tracestate: expect.any(String) }),
    });
    const envelope = JSON.parse(row.value.toString('utf8')) as StatusEnvelope;
    expect(row.headers['x-event-type']).toBe(envelope.type);
    return envelope;
  });
}

/** Sandbox control API (no auth). */
export const control = sandboxControl;

export interface SandboxInstallment {
  id: string;
  date: string;
  type: string;
  grossAmount: number;
  status: string;
}

export interface SandboxPayment {
  id: string;
  organizationId: string;
  status: string;
  currency: string;
  totalAmount: number;
  paymentMethodId: string;
  lastTerminalId: string | null;
  manualPaidNote: string | null;
  body: {
    customer: Record<string, unknown>;
    order: { orderNumber: string; objects: Record<string, unknown>[] };
    payment: Record<string, unknown> & { internalRef?: string; items?: Record<string, unknown>[] };
    serviceAdvisorEmail?: string | null;
    paymentMethodId?: string | null;
    callback?: {
      url: string;
      status_update_url: string;
      terminal_failure_url: string;
      api_key: string;
    };
    communication?: Record<string, unknown>;
    behaviour?: Record<string, unknown>;
    supportFunctions?: Record<string, unknown>[];
  };
  installments: SandboxInstallment[] | null;
  refunds: { refundId: string; grossRefundedAmount: number; netRefundedAmount: number }[];
  documents: { id: string; fileName: string; size: number }[];
}

/** The sandbox's payments of one order (by internalRef). */
export async function sandboxPayments(
  sandbox: SandboxHandle,
  orderId: string,
): Promise<SandboxPayment[]> {
  const { payments } = await control<{ payments: SandboxPayment[] }>(sandbox, 'GET', '/payments');
  return payments.filter((payment) => payment.body.payment.internalRef === orderId);
}

/** Runs `run` and returns what it threw (fails when it did not throw). */
export async function thrown(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

/** A test file's world: its database, a sandbox, the order pipeline and a pool for queries. */
export interface OrdersTestBed {
  readonly database: TestDatabase;
  readonly sandbox: SandboxHandle;
  readonly pipeline: Pipeline;
  readonly db: pg.Pool;
  close(): Promise<void>;
}

export async function startOrdersTestBed(label: string, poolSize = 2): Promise<OrdersTestBed> {
  const [database, sandbox] = await Promise.all([createTestDatabase(label), startTestSandbox()]);
  const db = openTestPool(database.url, poolSize);
  const pipeline = await startPipeline(database, sandbox);
  return {
    database,
    sandbox,
    pipeline,
    db,
    async close() {
      await pipeline.close();
      await db.end();
      await sandbox.close();
      await database.drop();
    },
  };
}
