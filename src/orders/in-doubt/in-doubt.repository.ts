/**
 * The reads of `in-doubt list` and `in-doubt resolve`: the Payflow calls in doubt (an
 * attempt `in_doubt`) with what was sent and what the bridge knows, read across
 * command_attempts, payments, installments, orders and dead_letters. A read model serving
 * the operator, kept apart from the tables' repositories like order-show.repository.ts;
 * the writes of a verdict go through those repositories. Columns are chosen one by one:
 * no webhook token, no key hash; of an event's payload only counts and references are
 * taken (what-was-sent.ts).
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';

const timestamp = z.union([z.date(), z.string()]).transform((value) => new Date(value));

const inDoubtRow = z.object({
  attemptId: z.string(),
  eventId: z.string(),
  orderId: z.string(),
  command: z.string(),
  errorCode: z.string().nullable(),
  startedAt: timestamp,
  sentAt: timestamp.nullable(),
  inDoubtSince: timestamp.nullable(),
  paymentId: z.string().nullable(),
  organizationId: z.string().nullable(),
  payflowId: z.string().nullable(),
  paymentState: z.string().nullable(),
  currency: z.string().nullable(),
  totalGross: z.string().nullable(),
  plannedInstallments: z.number().int(),
  blocked: z.boolean(),
  parked: z.number().int(),
  letterValue: z.instanceof(Buffer).nullable(),
});

/** One call in doubt, as the tables hold it. */
export type InDoubtRow = z.infer<typeof inDoubtRow>;

const resolvedRow = z.object({
  attemptId: z.string(),
  eventId: z.string(),
  command: z.string(),
  paymentId: z.string().nullable(),
  payflowId: z.string().nullable(),
  paymentState: z.string().nullable(),
  finishedAt: timestamp.nullable(),
});

/** An attempt of the order settled without a verdict (by a webhook, or a run cut short). */
export type ResolvedAttemptRow = z.infer<typeof resolvedRow>;

const parkedRow = z.object({ blocked: z.boolean(), parked: z.number().int() });

const IN_DOUBT = `
  SELECT a.id::text AS "attemptId", a.event_id::text AS "eventId", a.order_id AS "orderId",
         a.command, a.error_code AS "errorCode", a.started_at AS "startedAt",
         a.sent_at AS "sentAt", a.finished_at AS "inDoubtSince",
         a.payment_id::text AS "paymentId",
         COALESCE(p.organization_id, o.organization_id) AS "organizationId",
         p.payflow_id AS "payflowId", p.state AS "paymentState", p.currency,
         p.total_gross_minor::text AS "totalGross",
         (SELECT count(*)::int FROM installments i
           WHERE i.payment_id = p.id AND i.removed_at IS NULL) AS "plannedInstallments",
         COALESCE(o.blocked_at IS NOT NULL, false) AS blocked,
         (SELECT count(*)::int FROM dead_letters l
           WHERE l.order_id = a.order_id AND l.replayed_at IS NULL
             AND l.event_id IS DISTINCT FROM a.event_id::text) AS parked,
         d.value AS "letterValue"
    FROM command_attempts a
    LEFT JOIN payments p ON p.id = a.payment_id
    LEFT JOIN orders o ON o.order_id = a.order_id
    LEFT JOIN LATERAL (
      SELECT l.value FROM dead_letters l
       WHERE l.order_id = a.order_id AND l.event_id = a.event_id::text
       ORDER BY l.id DESC LIMIT 1) d ON true
   WHERE a.state = 'in_doubt'`;

@Injectable()
export class InDoubtRepository {
  /** Every call in doubt, the longest-waiting first. */
  list(sql: Sql): Promise<InDoubtRow[]> {
    return queryRows(sql, inDoubtRow, `${IN_DOUBT} ORDER BY a.finished_at, a.id`, []);
  }

  /** The order's calls in doubt, oldest first (normally one: the order is then blocked). */
  ofOrder(sql: Sql, orderId: string): Promise<InDoubtRow[]> {
    return queryRows(
      sql,
      inDoubtRow,
      `${IN_DOUBT} AND a.order_id = $1 ORDER BY a.finished_at, a.id`,
      [orderId],
    );
  }

  /** The order's latest attempt that ended `resolved` (settled from outside), if any. */
  async lastResolved(sql: Sql, orderId: string): Promise<ResolvedAttemptRow | null> {
    const [row] = await sql.query(
      `SELECT a.id::text AS "attemptId", a.event_id::text AS "eventId", a.command,
              a.payment_id::text AS "paymentId", p.payflow_id AS "payflowId",
              p.state AS "paymentState", a.finished_at AS "finishedAt"
         FROM command_attempts a LEFT JOIN payments p ON p.id = a.payment_id
        WHERE a.order_id = $1 AND a.state = 'resolved'
        ORDER BY a.finished_at DESC NULLS LAST, a.id DESC LIMIT 1`,
      [orderId],
    );
    return row === undefined ? null : resolvedRow.parse(row);
  }

  /** Whether the order is blocked, and how many of its dead letters wait for a replay. */
  async parked(sql: Sql, orderId: string): Promise<{ blocked: boolean; parked: number }> {
    const [row] = await sql.query(
      `SELECT COALESCE((SELECT blocked_at IS NOT NULL FROM orders WHERE order_id = $1), false)
                AS blocked,
              (SELECT count(*)::int FROM dead_letters
                WHERE order_id = $1 AND replayed_at IS NULL) AS parked`,
      [orderId],
    );
    return row === undefined ? { blocked: false, parked: 0 } : parkedRow.parse(row);
  }
}
