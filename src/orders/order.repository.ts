/**
 * The only owner of the `orders` table's SQL. Its parts join the statements of the
 * command engine (is the order blocked?) and of payment creation (the order row brought up
 * to date), so that each step stays one round trip; the dead-letter sink blocks an order
 * and the replay locks and unblocks it through the methods below.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { Part } from '../database/statement.js';

const orderRow = z.object({
  orderId: z.string(),
  organizationId: z.string().nullable(),
  orderNumber: z.string().nullable(),
  customerNumber: z.string().nullable(),
  state: z.string(),
  currency: z.string().nullable(),
  blockedAt: timestampField.nullable(),
  blockedReason: z.string().nullable(),
  createdAt: timestampField,
  updatedAt: timestampField,
});

/** An order row as the operator's reads show it. */
export type OrderRow = z.infer<typeof orderRow>;

/** How an order was found by the console's search. */
export type OrderMatch = 'order_id' | 'order_number' | 'customer_number';

const matchRow = z.object({
  orderId: z.string(),
  matchedBy: z.enum(['order_id', 'order_number', 'customer_number']),
});

const blockedRow = z.object({
  orderId: z.string(),
  blockedAt: timestampField,
  blockedReason: z.string().nullable(),
});

/** An order blocked by a dead-lettered event: since when and why. */
export type BlockedOrder = z.infer<typeof blockedRow>;

const personalDataRow = z.object({
  orderId: z.string(),
  customerNumber: z.string().nullable(),
  personalDataErasedAt: timestampField.nullable(),
});

/** The personal data an order's row holds (privacy export and erasure), and when it was erased. */
export type OrderPersonalData = z.infer<typeof personalDataRow>;

const orderIdRow = z.object({ orderId: z.string() });

@Injectable()
export class OrderRepository {
  /**
   * A one-row (or empty) relation for a LATERAL join: `blocked` and `blocked_reason` of
   * the order whose id is the SQL expression `orderId` (a placeholder or a column).
   */
  blockOf(orderId: string): string {
    return `SELECT blocked_at IS NOT NULL AS blocked, blocked_reason
              FROM orders WHERE order_id = ${orderId}`;
  }

  /**
   * A scalar subquery: the organization of the order whose id is the SQL expression
   * `orderId` (null when it has no row or no organization yet). Primary-key lookup.
   */
  organizationOf(orderId: string): string {
    return `(SELECT organization_id FROM orders WHERE order_id = ${orderId})`;
  }

  /**
   * CTE `new_orders`: the orders of the payments `new_payments` creates (its columns
   * order_id, organization_id, order_number, customer_number, currency, n), created or
   * brought up to date, and touched only when something changed.
   */
  upsertForNewPayments(source: string): Part {
    return () => `
  new_orders AS (
    INSERT INTO orders (order_id, organization_id, order_number, customer_number, currency)
    SELECT order_id, organization_id, order_number, customer_number, currency
      FROM ${source} ORDER BY n
    ON CONFLICT (order_id) DO UPDATE
       SET organization_id = COALESCE(EXCLUDED.organization_id, orders.organization_id),
           order_number = EXCLUDED.order_number,
           customer_number = COALESCE(EXCLUDED.customer_number, orders.customer_number),
           currency = EXCLUDED.currency, updated_at = now()
     WHERE (orders.organization_id, orders.order_number, orders.customer_number, orders.currency)
           IS DISTINCT FROM (COALESCE(EXCLUDED.organization_id, orders.organization_id),
                             EXCLUDED.order_number,
                             COALESCE(EXCLUDED.customer_number, orders.customer_number),
                             EXCLUDED.currency))`;
  }

  /** The orders with these ids (those that exist), in no particular order. */
  byIds(sql: Sql, orderIds: readonly string[]): Promise<OrderRow[]> {
    return queryRows(
      sql,
      orderRow,
      `SELECT order_id AS "orderId", organization_id AS "organizationId",
              order_number AS "orderNumber", customer_number AS "customerNumber", state,
              currency, blocked_at AS "blockedAt",
              blocked_reason AS "blockedReason", created_at AS "createdAt", updated_at AS "updatedAt"
         FROM orders WHERE order_id = ANY($1::text[])`,
      [orderIds],
    );
  }

  /**
   * The orders whose id, order number or customer number is `term` (exact), each way an
   * index lookup (the primary key, orders_order_number_idx, orders_customer_number_idx);
   * a customer's newest orders first, at most `limit` per way.
   */
  findIds(
    sql: Sql,
    term: string,
    limit: number,
  ): Promise<{ orderId: string; matchedBy: OrderMatch }[]> {
    return queryRows(
      sql,
      matchRow,
      `(SELECT order_id AS "orderId", 'order_id' AS "matchedBy" FROM orders WHERE order_id = $1)
       UNION ALL
       (SELECT order_id, 'order_number' FROM orders WHERE order_number = $1
         ORDER BY created_at DESC LIMIT $2)
       UNION ALL
       (SELECT order_id, 'customer_number' FROM orders WHERE customer_number = $1
         ORDER BY customer_number, created_at DESC LIMIT $2)`,
      [term, limit],
    );
  }

  /** The orders blocked most recently (an event dead-lettered, not replayed yet), newest first. */
  recentlyBlocked(sql: Sql, limit: number): Promise<BlockedOrder[]> {
    return queryRows(
      sql,
      blockedRow,
      `SELECT order_id AS "orderId", blocked_at AS "blockedAt", blocked_reason AS "blockedReason"
         FROM orders WHERE blocked_at IS NOT NULL ORDER BY blocked_at DESC LIMIT $1`,
      [limit],
    );
  }

  markCancelled(orderId: string): Part {
    return (bind) => `
    UPDATE orders SET state = 'cancelled', updated_at = now() WHERE order_id = ${bind(orderId)}`;
  }

  /**
   * Blocks the order so that its later events follow a dead-lettered one. The first block's
   * time and reason are kept; `state` is left as it is (the replay clears `blocked_at`).
   */
  async block(tx: Sql, orderId: string, reason: string): Promise<void> {
    await tx.execute(
      `INSERT INTO orders (order_id, blocked_at, blocked_reason) VALUES ($1, now(), $2)
       ON CONFLICT (order_id) DO UPDATE
          SET blocked_at = COALESCE(orders.blocked_at, EXCLUDED.blocked_at),
              blocked_reason = CASE WHEN orders.blocked_at IS NULL
                                    THEN EXCLUDED.blocked_reason ELSE orders.blocked_reason END,
              updated_at = now()`,
      [orderId, reason],
    );
  }

  /** Locks the order's row (if any) until the end of the transaction. */
  async lock(tx: Sql, orderId: string): Promise<void> {
    await tx.query('SELECT 1 FROM orders WHERE order_id = $1 FOR UPDATE', [orderId]);
  }

  /** Lets the order's next events take effect again. */
  async unblock(tx: Sql, orderId: string): Promise<void> {
    await tx.execute(
      `UPDATE orders
          SET blocked_at = NULL, blocked_reason = NULL,
              state = CASE WHEN state = 'blocked' THEN 'open' ELSE state END,
              updated_at = now()
        WHERE order_id = $1 AND (blocked_at IS NOT NULL OR state = 'blocked')`,
      [orderId],
    );
  }

  // --- personal data (privacy export, erasure and retention) ------------------------------

  /** The orders whose payment request named this customer number. */
  async ofCustomer(sql: Sql, customerNumber: string): Promise<string[]> {
    const rows = await queryRows(
      sql,
      orderIdRow,
      `SELECT order_id AS "orderId" FROM orders WHERE customer_number = $1 ORDER BY order_id`,
      [customerNumber],
    );
    return rows.map((row) => row.orderId);
  }

  /**
   * Whether the bridge holds anything under this order id: its row, a dead letter, an outbox
   * row. One statement over three tables, read-only, kept here because an order id is this
   * table's key (the `dead_letters` and `outbox` parts are their owners' columns as they are).
   */
  async isKnown(sql: Sql, orderId: string): Promise<boolean> {
    const [row] = await queryRows(
      sql,
      z.object({ known: z.boolean() }),
      `SELECT EXISTS (SELECT 1 FROM orders WHERE order_id = $1)
           OR EXISTS (SELECT 1 FROM dead_letters WHERE order_id = $1)
           OR EXISTS (SELECT 1 FROM outbox WHERE key = $1) AS known`,
      [orderId],
    );
    return row?.known === true;
  }

  /** The personal data of the order's row, or null when the bridge has none. */
  async personalDataOf(sql: Sql, orderId: string): Promise<OrderPersonalData | null> {
    const [row] = await queryRows(
      sql,
      personalDataRow,
      `SELECT order_id AS "orderId", customer_number AS "customerNumber",
              personal_data_erased_at AS "personalDataErasedAt"
         FROM orders WHERE order_id = $1`,
      [orderId],
    );
    return row ?? null;
  }

  /**
   * Orders with personal data untouched since before `cutoff` (their row, payments, dead
   * letters and webhooks), not erased since they were last touched; up to `limit`, least
   * recently touched first. One read-only statement that selects from `orders` and reads the
   * last activity of `payments`, `dead_letters` and `webhook_inbox` (their owners' columns as
   * they are), so that the retention sees one snapshot in one round trip.
   */
  async untouchedSince(sql: Sql, cutoff: Date, limit: number): Promise<string[]> {
    const rows = await queryRows(
      sql,
      orderIdRow,
      `WITH activity AS (
         SELECT o.order_id, o.personal_data_erased_at AS erased_at,
                GREATEST(o.updated_at,
                  (SELECT max(p.updated_at) FROM payments p WHERE p.order_id = o.order_id),
                  (SELECT max(GREATEST(d.failed_at, d.replayed_at, d.discarded_at))
                     FROM dead_letters d WHERE d.order_id = o.order_id),
                  (SELECT max(w.last_received_at) FROM webhook_inbox w
                     JOIN payments p ON p.id = w.payment_id WHERE p.order_id = o.order_id)
                ) AS touched_at
           FROM orders o WHERE o.updated_at < $1)
       SELECT order_id AS "orderId" FROM activity
        WHERE touched_at < $1 AND (erased_at IS NULL OR erased_at < touched_at)
        ORDER BY touched_at, order_id LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((row) => row.orderId);
  }

  /** Forgets the order's customer number; 1 when there was one (0: erased already). */
  eraseCustomerNumber(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE orders SET customer_number = NULL WHERE order_id = $1 AND customer_number IS NOT NULL`,
      [orderId],
    );
  }

  /** Marks the order's personal data erased now (the retention takes it again only once touched since). */
  async markPersonalDataErased(tx: Sql, orderId: string): Promise<void> {
    await tx.execute(`UPDATE orders SET personal_data_erased_at = now() WHERE order_id = $1`, [
      orderId,
    ]);
  }
}
