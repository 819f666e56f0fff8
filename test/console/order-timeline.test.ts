/**
 * The order's timeline (src/operator/order-timeline) against a real database: one order
 * with a row of every kind the page shows — an event that took effect, a Payflow call in
 * doubt and one that succeeded, a webhook, a status event and a settlement line naming its
 * payment (outbox), a dead letter and its copy for the DLQ topic, a person's verdict and a
 * console action — read back as one list, oldest first, with money in the order's
 * currency, the trace ids the messages carry, and the customer's contact from the dead
 * letter, masked. The rows are written as the tables hold them, by SQL of the test's own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sqlOf, type Sql } from '../../src/database/database.js';
import { OperatorActionRepository } from '../../src/operator/audit/operator-action.repository.js';
import {
  CustomerContactQuery,
  masked,
} from '../../src/operator/order-timeline/customer-contact.query.js';
import { OrderTimelineQuery } from '../../src/operator/order-timeline/order-timeline.query.js';
import { timelineText } from '../../src/operator/order-timeline/order-timeline.view.js';
import type { Database } from '../../src/database/database.js';
import { createTestDatabase, openTestPool, type TestDatabase } from '../support/database.js';

const ORDER = 'SO-TIMELINE-1';
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE}-b7ad6b7169203331-01`;
const at = (minute: number): string => new Date(Date.UTC(2026, 10, 27, 2, minute)).toISOString();

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The tables a plan (EXPLAIN's JSON) reads by a sequential scan. */
function seqScans(plan: unknown): string[] {
  if (Array.isArray(plan)) return plan.flatMap(seqScans);
  if (typeof plan !== 'object' || plan === null) return [];
  const node = plan as Record<string, unknown>;
  const own =
    node['Node Type'] === 'Seq Scan' && typeof node['Relation Name'] === 'string'
      ? [node['Relation Name']]
      : [];
  return [...own, ...Object.values(node).flatMap(seqScans)];
}

describe('the order timeline', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let sql: Sql;
  const paymentId = randomUUID();
  const created = randomUUID();
  const followUp = randomUUID();
  const broken = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase('order-timeline');
    pool = openTestPool(database.url);
    sql = sqlOf(pool);
    await sql.execute(
      `INSERT INTO orders (order_id, organization_id, order_number, state, currency, created_at)
       VALUES ($1, 'org-1', 'ON-1', 'open', 'NOK', $2)`,
      [ORDER, at(0)],
    );
    await sql.execute(
      `INSERT INTO payments (id, order_id, organization_id, payflow_id, state, status, currency,
                             total_gross_minor, total_net_minor, webhook_token, api_key_hash,
                             event_id, created_at)
       VALUES ($1, $2, 'org-1', 'pf-1', 'created', 'paid', 'NOK', 125000, 100000, 'tok',
               '\\x00', $3, $4)`,
      [paymentId, ORDER, created, at(1)],
    );
    await sql.execute(
      `INSERT INTO processed_events (event_id, order_id, type, topic, partition, "offset",
                                     read_at, processed_at)
       VALUES ($1, $2, 'order.payment_requested', 'erp.orders.v1', 3, 17, $3, $4)`,
      [created, ORDER, at(1), at(2)],
    );
    await sql.execute(
      `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                     payment_id, started_at, sent_at, finished_at)
       VALUES ($1, $2, 'order.payment_requested', 'succeeded', 'w1', $3, $4, $3, $3, $5),
              ($6, $2, 'order.installment_added', 'in_doubt', 'w1', $7, $4, $7, $7, $8)`,
      [created, ORDER, at(1), paymentId, at(2), followUp, at(6), at(7)],
    );
    await sql.execute(
      `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, headers, verdict,
                                  received_at, processed_at)
       VALUES ($1, 'status-update', 'd1', '\\x7b7d', $2::jsonb, 'accepted', $3, $4)`,
      [paymentId, JSON.stringify({ traceparent: TRACEPARENT }), at(4), at(4)],
    );
    const status = {
      eventId: randomUUID(),
      type: 'payment.created',
      orderId: ORDER,
      data: { sourceEventId: created, status: 'pending', totalGrossAmount: '1250.00' },
    };
    const line = {
      eventId: randomUUID(),
      type: 'settlement.line',
      orderId: ORDER,
      paymentId: 'pf-1',
      data: {
        transactionType: 'payment',
        currency: 'NOK',
        grossAmount: '1250.00',
        feeAmount: '12.50',
        netAmount: '1237.50',
        settlementDate: '2026-11-27',
      },
    };
    const letter = {
      eventId: broken,
      type: 'order.installment_added',
      orderId: ORDER,
      data: {
        customer: { email: 'kari@example.com', phone: { countryCode: '+47', number: '41234567' } },
      },
    };
    await sql.execute(
      `INSERT INTO outbox (bucket, topic, key, value, headers, created_at, published_at) VALUES
         (0, 'payflow.payment-status.v1', $1, $2, $3::jsonb, $4, $4),
         (0, 'payflow.settlements.v1', 'pf-1', $5, '{"x-event-type":"settlement.line"}', $6, NULL),
         (0, 'erp.orders.v1.dlq', $1, $7, $8::jsonb, $9, $9),
         (0, 'payflow.payment-status.v1', 'another-order', $2, '{}', $4, $4)`,
      [
        ORDER,
        Buffer.from(JSON.stringify(status)),
        JSON.stringify({ 'x-event-type': 'payment.created', traceparent: TRACEPARENT }),
        at(3),
        Buffer.from(JSON.stringify(line)),
        at(10),
        Buffer.from(JSON.stringify(letter)),
        JSON.stringify({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` }),
        at(5),
      ],
    );
    await sql.execute(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                                 "offset", value, attempts, failed_at)
       VALUES ($1, $2, 'order.installment_added', 'invalid_event', 'bad for kari@example.com',
               'erp.orders.v1', 3, 18, $3, 1, $4)`,
      [ORDER, broken, Buffer.from(JSON.stringify(letter)), at(5)],
    );
    await sql.execute(
      `INSERT INTO in_doubt_verdicts (order_id, event_id, attempt_id, command, verdict, payflow_id,
                                      decided_by, decided_at)
       VALUES ($1, $2, 2, 'order.installment_added', 'not_created', NULL, 'Ola', $3)`,
      [ORDER, followUp, at(8)],
    );
    await new OperatorActionRepository().record(sql, {
      actor: 'Kari Support',
      actorSubject: 'kari-sub-1',
      actorVerified: true,
      clientAddress: '192.0.2.10',
      action: 'replay',
      orderId: ORDER,
      details: { messages: 1 },
      outcome: 'done',
    });
  });

  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('tells every step of the order, oldest first, each from its own table', async () => {
    const query = new OrderTimelineQuery({ sql } as unknown as Database);
    const timeline = await query.read(sql, ORDER);
    expect(timeline).not.toBeNull();
    const steps = (timeline?.entries ?? []).map((entry) => `${entry.kind}: ${entry.title}`);
    expect(steps).toEqual([
      // The ERP event where it was read (cause first), not where its processing ended.
      'erp_event: order.payment_requested',
      'payflow_call: Payflow call for order.payment_requested',
      'status_event: payment.created',
      'webhook: Webhook status-update',
      'dead_letter: order.installment_added dead-lettered',
      'dead_letter: order.installment_added sent to the dead-letter topic',
      'payflow_call: Payflow call for order.installment_added',
      'verdict: Verdict on order.installment_added: not created',
      'settlement_line: Settlement line for payment pf-1',
      'console_action: replay by Kari Support',
    ]);
    const byTitle = new Map(timeline?.entries.map((entry) => [entry.title, entry]));
    expect(timeline?.payments[0]?.total).toEqual({ amount: '1250.00', currency: 'NOK' });
    expect(byTitle.get('order.payment_requested')?.traceId).toBe(TRACE);
    expect(byTitle.get('Payflow call for order.payment_requested')?.traceId).toBe(TRACE);
    expect(byTitle.get('Webhook status-update')?.traceId).toBe(TRACE);
    expect(byTitle.get('order.installment_added dead-lettered')?.traceId).toBe('1'.repeat(32));
    const inDoubt = byTitle.get('Payflow call for order.installment_added');
    expect(inDoubt).toMatchObject({ outcome: 'in_doubt', tone: 'warn' });
    expect(inDoubt?.facts).toContainEqual({ label: 'In doubt', value: 'yes' });
    const line = byTitle.get('Settlement line for payment pf-1');
    expect(line).toMatchObject({ outcome: 'waiting to be published', tone: 'warn' });
    expect(line?.facts).toEqual(
      expect.arrayContaining([
        { label: 'Gross', value: '1250.00 NOK' },
        { label: 'Net', value: '1237.50 NOK' },
      ]),
    );
    // Text from outside is shown sanitized.
    expect(JSON.stringify(timeline)).not.toContain('kari@example.com');
    expect(timelineText(timeline!)).toContain(`Order ${ORDER} (number ON-1)`);
  });

  it('reads each table by an index, never by a scan', async () => {
    const statements: { text: string; params: readonly unknown[] }[] = [];
    const recording: Sql = {
      query: (text, params = []) => {
        statements.push({ text, params });
        return sql.query(text, params);
      },
      execute: (text, params = []) => sql.execute(text, params),
    };
    const query = new OrderTimelineQuery({ sql: recording } as unknown as Database);
    await query.read(recording, ORDER);
    await new CustomerContactQuery().contact(recording, ORDER);
    expect(statements.length).toBeGreaterThanOrEqual(10);
    // With sequential scans priced out, a plan still holds one only when no index serves it.
    const client = await pool.connect();
    const scansOf = async (text: string, params: readonly unknown[]): Promise<string[]> => {
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        params as unknown[],
      );
      return seqScans(rows[0]?.['QUERY PLAN']);
    };
    try {
      await client.query('SET enable_seqscan = off');
      // The check itself: a read no index serves is caught.
      await expect(scansOf('SELECT id FROM outbox WHERE topic = $1', ['x'])).resolves.toEqual([
        'outbox',
      ]);
      for (const statement of statements) {
        const scanned = await scansOf(statement.text, statement.params);
        expect({ statement: oneLine(statement.text), scanned }).toEqual({
          statement: oneLine(statement.text),
          scanned: [],
        });
      }
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  });

  it('knows nothing of an order it never saw', async () => {
    const query = new OrderTimelineQuery({ sql } as unknown as Database);
    await expect(query.read(sql, 'no-such-order')).resolves.toBeNull();
  });

  it('reads the customer’s contact from the dead letter, to be shown masked', async () => {
    const contact = await new CustomerContactQuery().contact(sql, ORDER);
    expect(contact).toEqual({
      email: 'kari@example.com',
      phone: '+47 41234567',
      fromEventId: broken,
    });
    expect(masked(contact!)).toMatchObject({ email: 'k•••@example.com', phone: '+47 ••••••67' });
    await expect(new CustomerContactQuery().contact(sql, 'no-such-order')).resolves.toBeNull();
  });
});
