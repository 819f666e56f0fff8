/**
 * A small Nest application with only the webhook receiver (plus config, logger, database,
 * metrics) over HTTPS with a self-signed certificate, on a fresh test database; and an
 * undici client that trusts the certificate.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config/app-config.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { LoggerModule } from '../../src/logging/logger.module.js';
import { silentLogger } from '../../src/logging/logger.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { MetricsModule } from '../../src/management/metrics/metrics.module.js';
import { newWebhookCredentials } from '../../src/orders/new-payment/webhook-credentials.js';
import type { WebhookReceiverOptions } from '../../src/webhooks/receiver/receiver.options.js';
import { WebhooksReceiverModule } from '../../src/webhooks/webhooks-receiver.module.js';
import { openTestPool, createTestDatabase, type TestDatabase } from '../support/database.js';
import { selfSignedTls } from '../support/tls.js';

@Module({})
class ReceiverTestModule {
  static forRoot(databaseUrl: string, options: WebhookReceiverOptions): DynamicModule {
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      DB_MIGRATE: 'false',
      DB_POOL_SIZE: '8',
      PAYFLOW_BASE_URL: 'http://127.0.0.1:9',
      PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9/partner',
      PAYFLOW_CLIENT_ID: 'test',
      PAYFLOW_CLIENT_SECRET: 'test',
      WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1',
    });
    return {
      module: ReceiverTestModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(silentLogger()),
        DatabaseModule,
        MetricsModule,
        WebhooksReceiverModule.forRoot(options),
      ],
    };
  }
}

export interface TestPayment {
  readonly id: string;
  readonly token: string;
  readonly apiKey: string;
}

export interface ReceiverKit {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly pool: pg.Pool;
  readonly agent: Agent;
  createPayment(): Promise<TestPayment>;
  post(
    path: string,
    body: string | Buffer,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, unknown>; text: string }>;
  inboxRows(paymentId: string): Promise<InboxRow[]>;
  close(): Promise<void>;
}

export interface InboxRow {
  id: string;
  payment_id: string;
  kind: string;
  dedupe_key: string;
  body: Buffer;
  headers: Record<string, string>;
  verdict: string;
  duplicates: number;
}

export async function startReceiverKit(options: WebhookReceiverOptions = {}): Promise<ReceiverKit> {
  const database: TestDatabase = await createTestDatabase('webhook_receiver');
  const tls = await selfSignedTls();
  const adapter = new FastifyAdapter({
    bodyLimit: 256 * 1024,
    https: { key: tls.key, cert: tls.cert },
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    ReceiverTestModule.forRoot(database.url, { pruneIntervalMs: 0, ...options }),
    adapter,
    { logger: false, abortOnError: false },
  );
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const url = `https://127.0.0.1:${port}`;
  const pool = openTestPool(database.url, 2);
  const agent = new Agent({ connect: { ca: tls.ca }, connections: 16 });

  return {
    app,
    url,
    pool,
    agent,
    async createPayment() {
      const credentials = newWebhookCredentials();
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO payments (order_id, state, currency, total_gross_minor, total_net_minor,
                               webhook_token, api_key_hash)
         VALUES ($1, 'created', 'NOK', 100, 80, $2, $3) RETURNING id::text AS id`,
        [`SO-${randomUUID()}`, credentials.token, credentials.apiKeyHash],
      );
      return { id: rows[0]!.id, token: credentials.token, apiKey: credentials.apiKey };
    },
    async post(path, body, headers = {}) {
      const response = await request(`${url}${path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    },
    async inboxRows(paymentId) {
      const { rows } = await pool.query<InboxRow>(
        `SELECT id::text AS id, payment_id::text AS payment_id, kind, dedupe_key, body, headers,
                verdict, duplicates
         FROM webhook_inbox WHERE payment_id = $1 ORDER BY id`,
        [paymentId],
      );
      return rows;
    },
    async close() {
      await agent.close();
      await app.close();
      await pool.end();
      await database.drop();
    },
  };
}
