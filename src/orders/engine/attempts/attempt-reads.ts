/**
 * The operator's reads of `command_attempts` (attempts/ alone holds that table's SQL: see
 * command-attempt.repository.ts): the calls in doubt, held or probed, an order's attempts.
 * They need only the `Sql` they are given, so the CLI uses them without the worker's
 * batcher.
 */
import { z } from 'zod';
import type { Sql } from '../../../database/database.js';
import { queryRows } from '../../../database/parsed-rows.js';
import { timestampField } from '../../../database/row-schemas.js';
import { probeEvidence } from './attempt-sql.js';

const closedRow = z.object({
  attemptId: z.string(),
  eventId: z.string(),
  orderId: z.string(),
  command: z.string(),
  /** in_doubt, resolved, succeeded… */
  state: z.string(),
  errorCode: z.string().nullable(),
  paymentId: z.string().nullable(),
  startedAt: timestampField,
  sentAt: timestampField.nullable(),
  finishedAt: timestampField.nullable(),
  /** What reading Payflow decided (took_effect, not_applied, unreadable), null if never probed. */
  probeOutcome: z.string().nullable(),
  /** What was read and what it showed. */
  probeEvidence: probeEvidence.nullable(),
  probedAt: timestampField.nullable(),
  /** When its latest request left (null on rows from before the column: `sentAt`). */
  lastSentAt: timestampField.nullable(),
  /** Held for a late effect: from the first read that found it not applied, until. */
  heldSince: timestampField.nullable(),
  heldUntil: timestampField.nullable(),
});

/** An attempt that ended (in doubt, resolved…), as the operator's reads show it. */
export type ClosedAttempt = z.infer<typeof closedRow>;

const CLOSED = `
  SELECT id::text AS "attemptId", event_id::text AS "eventId", order_id AS "orderId", command, state,
         error_code AS "errorCode", payment_id::text AS "paymentId", started_at AS "startedAt",
         sent_at AS "sentAt", finished_at AS "finishedAt", probe_outcome AS "probeOutcome",
         probe_evidence AS "probeEvidence", probed_at AS "probedAt",
         last_sent_at AS "lastSentAt", held_since AS "heldSince", held_until AS "heldUntil"
    FROM command_attempts`;

/**
 * Every attempt in doubt (of the order `orderId` only, when given), the longest-waiting
 * first.
 */
export function listInDoubt(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
  return queryRows(
    sql,
    closedRow,
    `${CLOSED} WHERE state = 'in_doubt' AND ($1::text IS NULL OR order_id = $1)
      ORDER BY finished_at, id`,
    [orderId ?? null],
  );
}

/** The latest `limit` attempts in doubt, the latest first (command_attempts_in_doubt_idx). */
export function recentInDoubt(sql: Sql, limit: number): Promise<ClosedAttempt[]> {
  return queryRows(
    sql,
    closedRow,
    `${CLOSED} WHERE state = 'in_doubt' ORDER BY finished_at DESC, id DESC LIMIT $1`,
    [limit],
  );
}

/**
 * Every attempt held for a late effect (of the order `orderId` only, when given): its
 * call was found not applied while its request may still land. The soonest to end first.
 */
export function listHeld(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
  return queryRows(
    sql,
    closedRow,
    `${CLOSED} WHERE state = 'started' AND held_until IS NOT NULL
        AND ($1::text IS NULL OR order_id = $1)
      ORDER BY held_until, id`,
    [orderId ?? null],
  );
}

/** The order's attempts that a probe decided (or found unreadable), oldest first. */
export function listProbed(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
  return queryRows(
    sql,
    closedRow,
    `${CLOSED} WHERE order_id = $1 AND probe_outcome IS NOT NULL ORDER BY probed_at, id`,
    [orderId],
  );
}

/** Every attempt of the order (each Payflow call made for one of its events), oldest first. */
export function listForOrder(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
  return queryRows(sql, closedRow, `${CLOSED} WHERE order_id = $1 ORDER BY started_at, id`, [
    orderId,
  ]);
}

/** The order's latest attempt that ended `resolved` (settled from outside), if any. */
export async function lastResolved(sql: Sql, orderId: string): Promise<ClosedAttempt | null> {
  const [row] = await queryRows(
    sql,
    closedRow,
    `${CLOSED} WHERE order_id = $1 AND state = 'resolved'
      ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT 1`,
    [orderId],
  );
  return row ?? null;
}
