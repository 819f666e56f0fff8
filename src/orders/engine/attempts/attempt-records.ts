/**
 * The attempts recorded without a call (attempts/ alone holds `command_attempts`' SQL: see
 * command-attempt.repository.ts): an event discarded, and an event whose mapping failed.
 */
import type { Sql } from '../../../database/database.js';

/**
 * `discard`: the event will never take effect (its dead letter was discarded by a person
 * or superseded by a later ERP event). Recorded in the ledger, so that a delivery of the
 * event that Kafka still makes (its offset was not committed) is a no-op for the guard.
 * Only an event with no attempt, or a failed one (it had no effect); an event discarded
 * before is discarded again (idempotent: `discard` discarded → discarded, true), which
 * its callers count on (a second letter of the same event, a repeated discard). Static,
 * like the operator's reads: the discard writes it in its own transaction. False when
 * refused.
 */
export async function discard(
  sql: Sql,
  event: { readonly eventId: string; readonly orderId: string; readonly command: string },
): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                   finished_at, error_code)
     VALUES ($1::uuid, $2, $3, 'discarded', 'operator', clock_timestamp(), clock_timestamp(),
             'DEAD_LETTER.DISCARDED')
     ON CONFLICT (event_id) DO UPDATE
        SET state = 'discarded', finished_at = EXCLUDED.finished_at,
            error_code = EXCLUDED.error_code
      WHERE command_attempts.state IN ('failed', 'discarded')
     RETURNING id::text AS id`,
    [event.eventId, event.orderId, event.command],
  );
  return rows.length > 0;
}

/**
 * The event's mapping failed (no call is made): recorded once as a `failed` attempt with
 * the mapping's error code, so that its status event (payment.creation_failed, …) is
 * written once whatever the redeliveries (a rebalance may deliver it again before its
 * dead letter blocks the order). True when this statement recorded it: the caller then
 * writes the status event; false when it was recorded before.
 */
export async function recordMappingFailure(
  tx: Sql,
  input: {
    readonly eventId: string;
    readonly orderId: string;
    readonly command: string;
    readonly owner: string;
  },
  errorCode: string,
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                   error_code, finished_at)
     VALUES ($1::uuid, $2, $3, 'failed', $4, clock_timestamp(), $5, clock_timestamp())
     ON CONFLICT (event_id) DO UPDATE
        SET error_code = EXCLUDED.error_code, finished_at = EXCLUDED.finished_at
      WHERE command_attempts.state = 'failed'
        AND command_attempts.error_code IS DISTINCT FROM EXCLUDED.error_code
     RETURNING id::text AS id`,
    [input.eventId, input.orderId, input.command, input.owner, errorCode],
  );
  return rows.length > 0;
}
