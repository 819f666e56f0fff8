/**
 * The guard statements that begin an attempt (attempts/ alone holds `command_attempts`' SQL:
 * see command-attempt.repository.ts). They read what the decision (attempt-decision.ts)
 * needs and, for a fresh event, record its attempt in the same round trip, together with
 * the rows a command writes before its call (parts of other repositories, gated by
 * `fresh_rows`); `takeOver` begins a new call over an existing attempt.
 */
import { z } from 'zod';
import type { Sql } from '../../../database/database.js';
import { render, type Part, type Rendered } from '../../../database/statement.js';
import type { OrderRepository } from '../../order.repository.js';
import type { ProcessedEventRepository } from '../../processed-event.repository.js';
import type { GuardRow } from '../protocol/attempt-decision.js';
import { idRow, lease, windowEnd, type AttemptOwner } from './attempt-sql.js';

/** The other tables' parts the guard statements read: the order's block, the event processed. */
export interface GuardTables {
  readonly orders: OrderRepository;
  readonly processed: ProcessedEventRepository;
}

export interface GuardInput extends AttemptOwner {
  /** PAYFLOW_LATE_EFFECT_WINDOW, for the guard row's `windowPassed`. */
  readonly windowMs: number;
  readonly eventId: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  /** Record the attempt when the event is fresh (false: its mapping failed). */
  readonly record: boolean;
}

export interface ManyGuardInput extends AttemptOwner {
  /** One per event, each event and each order once. */
  readonly events: readonly {
    readonly eventId: string;
    readonly orderId: string;
    readonly paymentId: string | null;
  }[];
}

/**
 * The relation the guard statements give to the writes of a fresh event: one row per
 * event whose attempt they recorded, with its 1-based position `n` among the events.
 */
export const FRESH_ROWS = 'fresh_rows';

const guardRow = z
  .object({
    started_attempt_id: z.string().nullable(),
    processed: z.boolean(),
    blocked: z.boolean(),
    blocked_reason: z.string().nullable(),
    attempt_id: z.string().nullable(),
    attempt_state: z.string().nullable(),
    attempt_owner: z.string().nullable(),
    lease_expired: z.boolean().nullable(),
    attempt_sent: z.boolean().nullable(),
    attempt_payment_id: z.string().nullable(),
    attempt_held: z.boolean().nullable(),
    attempt_held_since: z.date().nullable(),
    window_passed: z.boolean().nullable(),
  })
  .transform((row): GuardRow => ({
    startedAttemptId: row.started_attempt_id,
    processed: row.processed,
    blocked: row.blocked,
    blockedReason: row.blocked_reason,
    attempt:
      row.attempt_id === null
        ? null
        : {
            id: row.attempt_id,
            state: row.attempt_state ?? '',
            owner: row.attempt_owner,
            leaseExpired: row.lease_expired === true,
            sent: row.attempt_sent === true,
            paymentId: row.attempt_payment_id,
            held: row.attempt_held === true,
            heldSince: row.attempt_held_since,
            windowPassed: row.window_passed === true,
          },
  }));

const startedRow = z.object({ n: z.number().int(), attempt_id: z.string() });

/** The attempt ids a guardMany statement recorded, by the events' 1-based positions. */
export function startedByPosition(rows: readonly unknown[]): Map<number, string> {
  return new Map(
    rows.map((row) => {
      const parsed = startedRow.parse(row);
      return [parsed.n, parsed.attempt_id];
    }),
  );
}

/**
 * The guard of one event and, when it is fresh (not processed, order not blocked, no
 * attempt yet) and `record`, the insert of its attempt and the `fresh` writes, in one
 * statement: the common case costs one round trip.
 */
export async function guard(
  tables: GuardTables,
  tx: Sql,
  input: GuardInput,
  fresh?: Part,
): Promise<GuardRow> {
  const { text, params } = render((bind) => {
    const eventId = bind(input.eventId);
    const orderId = bind(input.orderId);
    return `
  WITH g AS (
    SELECT ${tables.processed.processed(eventId)} AS processed,
           COALESCE(o.blocked, false) AS blocked, o.blocked_reason,
           a.id::text AS attempt_id, a.state AS attempt_state, a.owner AS attempt_owner,
           a.lease_until <= clock_timestamp() AS lease_expired,
           a.sent_at IS NOT NULL AS attempt_sent,
           a.payment_id::text AS attempt_payment_id,
           a.held_until IS NOT NULL AS attempt_held, a.held_since AS attempt_held_since,
           ${windowEnd(`${bind(input.windowMs)}`, 'a')} <= clock_timestamp() AS window_passed
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN LATERAL (${tables.orders.blockOf(orderId)}) o ON true
      LEFT JOIN command_attempts a ON a.event_id = ${eventId}::uuid),
  started AS (
    INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                  payment_id)
    SELECT ${eventId}::uuid, ${orderId}, ${bind(input.command)}, 'started', ${bind(input.owner)},
           ${lease(bind, input.leaseMs)}, ${bind(input.paymentId)}::uuid
      FROM g
     WHERE ${bind(input.record)}::boolean AND NOT g.processed AND NOT g.blocked
       AND g.attempt_id IS NULL
    ON CONFLICT (event_id) DO NOTHING
    RETURNING id),
  ${FRESH_ROWS} AS (SELECT 1 AS n FROM started)${fresh === undefined ? '' : `,\n${fresh(bind)}`}
  SELECT g.*, (SELECT id::text FROM started) AS started_attempt_id FROM g`;
  });
  const [row] = await tx.query(text, params);
  if (row === undefined) throw new Error('the order guard query returned no row');
  return guardRow.parse(row);
}

/**
 * The statement of guardMany (`sent` false) and beginSent (`sent` true: the fresh ones'
 * attempts are recorded `started` and sent at once).
 */
export function guardManyStatement(
  tables: GuardTables,
  input: ManyGuardInput,
  fresh: Part,
  sent: boolean,
): Rendered {
  return render(
    (bind) => `
  WITH input AS (
    SELECT * FROM unnest(${bind(input.events.map((event) => event.eventId))}::uuid[],
                         ${bind(input.events.map((event) => event.orderId))}::text[],
                         ${bind(input.events.map((event) => event.paymentId))}::uuid[])
           WITH ORDINALITY AS x (event_id, order_id, payment_id, n)),
  fresh_input AS (
    SELECT x.* FROM input x
      LEFT JOIN LATERAL (${tables.orders.blockOf('x.order_id')}) o ON true
     WHERE o.blocked IS NOT TRUE
       AND NOT EXISTS (SELECT 1 FROM command_attempts a WHERE a.event_id = x.event_id)
       AND NOT ${tables.processed.processed('x.event_id')}),
  started AS (
    INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                  payment_id, sent_at, last_sent_at)
    SELECT event_id, order_id, ${bind(input.command)}, 'started', ${bind(input.owner)},
           ${lease(bind, input.leaseMs)}, payment_id,
           CASE WHEN ${bind(sent)}::boolean THEN clock_timestamp() END,
           CASE WHEN ${bind(sent)}::boolean THEN clock_timestamp() END
      FROM fresh_input ORDER BY n
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id, id),
  ${FRESH_ROWS} AS (
    SELECT x.n::int AS n, x.event_id, x.order_id, x.payment_id, s.id AS attempt_id
      FROM started s JOIN input x ON x.event_id = s.event_id),
${fresh(bind)}
  SELECT n, attempt_id::text AS attempt_id FROM ${FRESH_ROWS}`,
  );
}

/**
 * Takes the event's attempt over for a new call: only a failed one, this worker's own
 * started one that is not held (`held_until`: a read held it for the late-effect window,
 * and only a read after the window sends it again), or a started one that never left and
 * whose lease ran out. Null when another worker holds it, or when it is held.
 */
export async function takeOver(
  tx: Sql,
  input: Omit<GuardInput, 'record' | 'windowMs'>,
): Promise<string | null> {
  const { text, params } = render(
    (bind) => `
  INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until, payment_id)
  VALUES (${bind(input.eventId)}::uuid, ${bind(input.orderId)}, ${bind(input.command)}, 'started',
          ${bind(input.owner)}, ${lease(bind, input.leaseMs)}, ${bind(input.paymentId)}::uuid)
  ON CONFLICT (event_id) DO UPDATE
     SET state = 'started', owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
         payment_id = EXCLUDED.payment_id, error_code = NULL,
         started_at = clock_timestamp(), finished_at = NULL, sent_at = NULL,
         last_sent_at = NULL, held_since = NULL, held_until = NULL
   WHERE command_attempts.state = 'failed'
      OR (command_attempts.state = 'started' AND command_attempts.owner = EXCLUDED.owner
          AND command_attempts.held_until IS NULL)
      OR (command_attempts.state = 'started' AND command_attempts.sent_at IS NULL
          AND command_attempts.lease_until <= clock_timestamp())
  RETURNING id::text AS id`,
  );
  const [row] = await tx.query(text, params);
  return row === undefined ? null : idRow.parse(row).id;
}
