/**
 * Fills a migrated database with `count` orders as the console search meets them in a
 * long-running installation, by INSERT … SELECT over generate_series (no round trip per
 * row): each order with a payment (Payflow id), a processed event and a command attempt,
 * five orders per customer number, fifty organizations; one order in 1000 blocked with a
 * dead letter, one payment in 997 whose creation failed and one in 1999 in doubt (with its
 * attempt). The same generator serves the benchmark (a million) and the test that reads
 * the plans (tens of thousands).
 *
 * Order i (1-based) has id `orderIdOf(i)`, number `SO-i`, customer `C-(i % customers)` and
 * Payflow payment id `payflowIdOf(i)`, so that callers can name what they look for.
 */
import type { Sql } from '../../src/database/database.js';

/** The order id of order i: a uuid made from i (what an ERP's ids look like). */
export const ORDER_ID_SQL = (i: string): string => `uuid_in(md5('order-' || ${i})::cstring)::text`;
/** Payflow's 24-hex-digit payment id of order i's payment. */
export const PAYFLOW_ID_SQL = (i: string): string => `substr(md5('payflow-' || ${i}), 1, 24)`;

export interface FillOptions {
  readonly count: number;
  /** Orders per customer number. Default 5. */
  readonly ordersPerCustomer?: number;
  /** Rows per INSERT (bounded memory and WAL per statement). Default 100 000. */
  readonly chunk?: number;
  /** Told after each chunk with the orders written so far. */
  readonly progress?: (written: number) => void;
}

export function customersOf(options: FillOptions): number {
  return Math.max(1, Math.floor(options.count / (options.ordersPerCustomer ?? 5)));
}

/** The ids of order i, computed the way the fill does (in the database, for the caller). */
export async function idsOf(
  sql: Sql,
  i: number,
  customers: number,
): Promise<{ orderId: string; orderNumber: string; customerNumber: string; payflowId: string }> {
  const [row] = await sql.query<{
    orderId: string;
    orderNumber: string;
    customerNumber: string;
    payflowId: string;
  }>(
    `SELECT ${ORDER_ID_SQL('$1::int')} AS "orderId", 'SO-' || $1::int AS "orderNumber",
            'C-' || ($1::int % $2::int) AS "customerNumber", ${PAYFLOW_ID_SQL('$1::int')} AS "payflowId"`,
    [i, customers],
  );
  if (row === undefined) throw new Error('no ids');
  return row;
}

export async function fillOrders(sql: Sql, options: FillOptions): Promise<void> {
  const chunk = options.chunk ?? 100_000;
  const customers = customersOf(options);
  for (let from = 1; from <= options.count; from += chunk) {
    const to = Math.min(options.count, from + chunk - 1);
    const range = [from, to] as const;
    // Order i was created i seconds before the newest one (order 1 is the newest).
    await sql.execute(
      `INSERT INTO orders (order_id, organization_id, order_number, customer_number, state,
                           currency, blocked_at, blocked_reason, created_at, updated_at)
       SELECT ${ORDER_ID_SQL('i')}, 'org-' || (i % 50), 'SO-' || i, 'C-' || (i % $3::int),
              'open', 'NOK',
              CASE WHEN i % 1000 = 0 THEN now() - make_interval(secs => i) END,
              CASE WHEN i % 1000 = 0 THEN 'rejected_by_payflow: event e-' || i || ' at erp.orders.v1/0/' || i END,
              now() - make_interval(secs => i), now() - make_interval(secs => i)
         FROM generate_series($1::int, $2::int) AS i`,
      [from, to, customers],
    );
    await sql.execute(
      `INSERT INTO payments (order_id, organization_id, payflow_id, state, status, currency,
                             total_gross_minor, total_net_minor, webhook_token, api_key_hash,
                             created_at, updated_at)
       SELECT ${ORDER_ID_SQL('i')}, 'org-' || (i % 50),
              CASE WHEN i % 997 = 0 OR i % 1999 = 0 THEN NULL ELSE ${PAYFLOW_ID_SQL('i')} END,
              CASE WHEN i % 997 = 0 THEN 'creation_failed' WHEN i % 1999 = 0 THEN 'in_doubt'
                   ELSE 'created' END,
              CASE WHEN i % 997 = 0 OR i % 1999 = 0 THEN NULL ELSE 'pending' END,
              'NOK', 100000 + i % 500000, 80000 + i % 400000, md5('token-' || i),
              decode(md5('key-' || i), 'hex'),
              now() - make_interval(secs => i), now() - make_interval(secs => i)
         FROM generate_series($1::int, $2::int) AS i`,
      range,
    );
    await sql.execute(
      `INSERT INTO processed_events (event_id, order_id, type, topic, partition, "offset",
                                     processed_at)
       SELECT uuid_in(md5('event-' || i)::cstring), ${ORDER_ID_SQL('i')},
              'order.payment_requested', 'erp.orders.v1', i % 12, i,
              now() - make_interval(secs => i)
         FROM generate_series($1::int, $2::int) AS i`,
      range,
    );
    await sql.execute(
      `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                     started_at, sent_at, finished_at)
       SELECT uuid_in(md5('event-' || i)::cstring), ${ORDER_ID_SQL('i')},
              'order.payment_requested',
              CASE WHEN i % 1999 = 0 THEN 'in_doubt' WHEN i % 997 = 0 THEN 'failed'
                   ELSE 'succeeded' END,
              'bench', now() - make_interval(secs => i), now() - make_interval(secs => i),
              now() - make_interval(secs => i), now() - make_interval(secs => i)
         FROM generate_series($1::int, $2::int) AS i`,
      range,
    );
    await sql.execute(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic,
                                 partition, "offset", key, value, headers, attempts, failed_at)
       SELECT ${ORDER_ID_SQL('i')}, 'e-' || i, 'order.installment_added', 'rejected_by_payflow',
              'Payflow refused it (422)', 'erp.orders.v1', 0, i,
              convert_to(${ORDER_ID_SQL('i')}, 'UTF8'), convert_to('{"eventId":"e-' || i || '"}', 'UTF8'),
              '{}'::jsonb, 1, now() - make_interval(secs => i)
         FROM generate_series($1::int, $2::int) AS i WHERE i % 1000 = 0`,
      range,
    );
    options.progress?.(to);
  }
  await sql.execute('ANALYZE');
}
