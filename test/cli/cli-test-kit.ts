/**
 * Test kit for the operator CLI: builders for the rows the commands read (orders, dead
 * letters, payments and what hangs off them), and the compiled CLI as a child process.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { TEST_DATABASE_SERVER } from '../support/database.js';
import type { Sql } from '../../src/database/database.js';

export async function insertOrder(
  sql: Sql,
  orderId: string,
  options: { blocked?: boolean; state?: string; organizationId?: string } = {},
): Promise<void> {
  await sql.execute(
    `INSERT INTO orders (order_id, organization_id, order_number, state, currency, blocked_at, blocked_reason)
     VALUES ($1, $2, $3, $4, 'NOK', $5, $6)`,
    [
      orderId,
      options.organizationId ?? 'org-1',
      `N-${orderId}`,
      options.state ?? 'open',
      options.blocked === true ? new Date() : null,
      options.blocked === true ? 'rejected_by_payflow: event … at erp/0/1' : null,
    ],
  );
}

export interface DeadLetterSeed {
  readonly orderId: string | null;
  readonly reason: string;
  readonly failedAt: Date;
  readonly eventType?: string;
  readonly error?: string;
  readonly replayedAt?: Date | null;
  /** Headers of the original message (x-dlq-* are added like the sink does). */
  readonly headers?: Record<string, string>;
  readonly value?: string | null;
  readonly topic?: string;
}

export interface SeededLetter {
  readonly id: string;
  readonly eventId: string;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: Record<string, string>;
}

let nextOffset = 1000;

export async function insertDeadLetter(sql: Sql, seed: DeadLetterSeed): Promise<SeededLetter> {
  const eventId = randomUUID();
  const offset = nextOffset++;
  const value =
    seed.value === undefined
      ? JSON.stringify({
          eventId,
          type: seed.eventType ?? 'order.cancelled',
          occurredAt: seed.failedAt.toISOString(),
          orderId: seed.orderId,
          data: { reason: 'customer called' },
        })
      : seed.value;
  const originalHeaders = seed.headers ?? { 'x-trace-id': `trace-${offset}` };
  const headers = {
    ...originalHeaders,
    'x-dlq-reason': seed.reason,
    'x-dlq-error': seed.error ?? 'it failed',
    'x-dlq-original-topic': seed.topic ?? 'erp.orders.v1',
    'x-dlq-original-partition': '0',
    'x-dlq-original-offset': String(offset),
    'x-dlq-attempts': '1',
    'x-dlq-failed-at': seed.failedAt.toISOString(),
  };
  const [row] = await sql.query<{ id: string }>(
    `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                               "offset", key, value, headers, attempts, failed_at, replayed_at)
     VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9, $10::jsonb, 1, $11, $12)
     RETURNING id::text AS id`,
    [
      seed.orderId,
      eventId,
      seed.eventType ?? 'order.cancelled',
      seed.reason,
      seed.error ?? 'it failed',
      seed.topic ?? 'erp.orders.v1',
      offset,
      seed.orderId === null ? null : Buffer.from(seed.orderId),
      value === null ? null : Buffer.from(value),
      JSON.stringify(headers),
      seed.failedAt,
      seed.replayedAt ?? null,
    ],
  );
  if (row === undefined) throw new Error('dead letter not inserted');
  return { id: row.id, eventId, key: seed.orderId, value, headers: originalHeaders };
}

export const hoursAgo = (hours: number): Date => new Date(Date.now() - hours * 3_600_000);

const ROOT = process.cwd();
const BUILD_LOCK_KEY = 7_447_101;

/**
 * Compiles the project (`tsc -p tsconfig.build.json`, what `npm run build` runs) so that
 * tests can run the real `bin/payflow-bridge.js`. nest-commander is CommonJS and requires
 * the ESM-only @nestjs/common, which Node 20 allows and jest's module runtime does not: the
 * command classes can only run compiled. Serialized across jest workers by an advisory
 * lock; type errors elsewhere in the tree do not stop tsc from emitting.
 */
export async function buildCli(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${TEST_DATABASE_SERVER}/postgres` });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [BUILD_LOCK_KEY]);
    await new Promise<void>((resolve) => {
      execFile(
        process.execPath,
        [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
        { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
        () => resolve(),
      );
    });
  } finally {
    await admin.end();
  }
  if (!existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
    throw new Error('the build did not produce dist/src/cli/main.js');
  }
}

export interface BinaryResult {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Runs `node bin/payflow-bridge.js …args` with exactly `env` (plus PATH). */
export function runBinary(
  args: readonly string[],
  env: Record<string, string>,
): Promise<BinaryResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/payflow-bridge.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

export const SECRETS = {
  webhookToken: 'whk_9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  apiKey: 'pk_live_SUPERSECRETAPIKEY123',
  email: 'kari.nordmann@example.no',
  phone: '+47 912 34 567',
};

/**
 * An order with two payments (the newer one with installments, a document, a refund and
 * status history) and two dead letters, one replayed. Secrets and personal data are
 * planted where careless code could pick them up.
 */
export async function seedOrderWithPayments(sql: Sql, orderId: string): Promise<void> {
  await insertOrder(sql, orderId, { blocked: true });
  const apiKeyHash = Buffer.from(SECRETS.apiKey);
  const [old] = await sql.query<{ id: string }>(
    `INSERT INTO payments (order_id, organization_id, payflow_id, state, provider_status, status,
                           currency, total_gross_minor, total_net_minor, payment_link,
                           webhook_token, api_key_hash, created_at)
     VALUES ($1, 'org-1', 'aaaaaaaaaaaaaaaaaaaaaaa1', 'cancelled', 'REJECTED', 'cancelled', 'NOK',
             50000, 40000, NULL, $2, $3, now() - interval '2 days')
     RETURNING id`,
    [orderId, `${SECRETS.webhookToken}-old`, apiKeyHash],
  );
  const [payment] = await sql.query<{ id: string }>(
    `INSERT INTO payments (order_id, organization_id, payflow_id, state, provider_status, status,
                           currency, total_gross_minor, total_net_minor, payment_link,
                           webhook_token, api_key_hash, payment_method_id)
     VALUES ($1, 'org-1', 'bbbbbbbbbbbbbbbbbbbbbbb2', 'created', 'INITIATED', 'pending', 'NOK',
             124950, 99960, $2, $3, $4, '000000000000000000000000')
     RETURNING id`,
    [
      orderId,
      `https://pay.example.test/p/bbbbbbbbbbbbbbbbbbbbbbb2?api_key=${SECRETS.apiKey}`,
      SECRETS.webhookToken,
      apiKeyHash,
    ],
  );
  if (old === undefined || payment === undefined) throw new Error('payments not inserted');
  await sql.execute(
    `INSERT INTO installments (payment_id, installment_ref, payflow_installment_id, position,
                               due_date, gross_minor, type, provider_status)
     VALUES ($1, 'INST-1', 'ccccccccccccccccccccccc1', 1, '2026-12-01', 62475, 'initial', 'PAID'),
            ($1, 'INST-2', 'ccccccccccccccccccccccc2', 2, '2027-01-01', 62475, 'scheduled', 'CREATED')`,
    [payment.id],
  );
  await sql.execute(
    `INSERT INTO documents (payment_id, document_ref, payflow_document_id, file_name, content_type, size)
     VALUES ($1, 'DOC-1', 'ddddddddddddddddddddddd1', 'invoice-10042.pdf', 'application/pdf', 48213)`,
    [payment.id],
  );
  await sql.execute(
    `INSERT INTO refunds (payment_id, refund_ref, payflow_refund_id, currency, gross_minor,
                          net_minor, refund_type, remaining_minor)
     VALUES ($1, 'RF-1', 'eeeeeeeeeeeeeeeeeeeeeee1', 'NOK', 10000, 8000, 'partial', 114950)`,
    [payment.id],
  );
  await sql.execute(
    `INSERT INTO payment_status_history (payment_id, provider_status, previous_provider_status, status, source)
     VALUES ($1, 'DRAFT', NULL, 'pending', 'create'),
            ($1, 'OPENED', 'DRAFT', 'pending', 'webhook'),
            ($1, 'INITIATED', 'OPENED', 'pending', 'poll')`,
    [payment.id],
  );
  await insertDeadLetter(sql, {
    orderId,
    reason: 'rejected_by_payflow',
    failedAt: hoursAgo(5),
    eventType: 'order.refund_requested',
    error: `Payflow 422 business.refund_exceeds_remaining for ${SECRETS.email} (${SECRETS.phone})`,
    replayedAt: hoursAgo(4),
  });
  await insertDeadLetter(sql, {
    orderId,
    reason: 'blocked_by_earlier_failure',
    failedAt: hoursAgo(1),
    eventType: 'order.installment_added',
    error: `blocked; callback https://bridge.example/webhooks?api_key=${SECRETS.apiKey}`,
    value: JSON.stringify({ data: { customer: { email: SECRETS.email, phone: SECRETS.phone } } }),
  });
}
