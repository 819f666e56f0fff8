/**
 * The attempt ledger: the only owner of the `command_attempts` table's SQL. Every Payflow
 * call of a command is recorded here before it is made (`started`, with this worker's
 * lease), marked `sent_at` just before its request leaves, and ends `succeeded`, `failed`,
 * `in_doubt` or `resolved`. The guard statements read what the decision (attempt-decision.ts)
 * needs and, for a fresh event, record its attempt in the same round trip, together with
 * the rows a command writes before its call (parts of other repositories, gated by
 * `fresh_rows`). Every write is guarded by state, owner and lease in SQL: each is a
 * transition of the exactly-once protocol (protocol/attempt-protocol.ts, TRANSITIONS names
 * the statement), and its WHERE is that transition's condition.
 */
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { timestampField } from '../../database/row-schemas.js';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { render, type Bind, type Part, type Rendered } from '../../payments/statement.js';
import { OrderRepository } from '../order.repository.js';
import type { ProbeEvidence, ProbeOutcome } from './command-spec.js';
import { ProcessedEventRepository, type ProcessedEventRow } from '../processed-event.repository.js';
import type { GuardRow } from './protocol/attempt-decision.js';

/** Who records an attempt, for how long, and about which payment. */
export interface AttemptOwner {
  readonly command: string;
  readonly owner: string;
  readonly leaseMs: number;
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

/** A finished attempt and its event, processed. */
export interface FinishedAttempt extends ProcessedEventRow {
  readonly attemptId: string;
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
const idRow = z.object({ id: z.string() });
const paymentIdRow = z.object({ payment_id: z.string().nullable() });
const finishedRow = z.object({ finished: z.number().int() });
const existsRow = z.object({ found: z.boolean() });
const heldRow = z.object({
  held_until: z.date(),
  /** Milliseconds until held_until, by the ledger's clock. */
  remaining_ms: z.number(),
  /** Milliseconds since the latest request left, by the ledger's clock. */
  since_sent_ms: z.number(),
  first_hold: z.boolean(),
});
const notTakenRow = z.object({
  state: z.string().nullable(),
  window_end: z.date().nullable(),
  window_runs: z.boolean().nullable(),
});
const decidedRow = z.object({ id: z.string(), held_since: z.date().nullable() });

/** What a probe read at Payflow and what it showed (`command_attempts.probe_evidence`). */
export const probeEvidence = z.object({ read: z.string(), shown: z.string() });
export type { ProbeEvidence };

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

function lease(bind: Bind, leaseMs: number): string {
  return `clock_timestamp() + make_interval(secs => ${bind(leaseMs)}::float8 / 1000)`;
}

/**
 * When the attempt's latest request can no longer land: `window` a bound parameter (ms).
 * NULL for an attempt whose request never left (no send mark): it has no window.
 */
function windowEnd(window: string, alias = ''): string {
  const a = alias === '' ? '' : `${alias}.`;
  return `(CASE WHEN ${a}sent_at IS NOT NULL
           THEN COALESCE(${a}last_sent_at, ${a}sent_at) + make_interval(secs => ${window}::float8 / 1000)
           END)`;
}

/** The attempt ids a guardMany statement recorded, by the events' 1-based positions. */
function startedByPosition(rows: readonly unknown[]): Map<number, string> {
  return new Map(
    rows.map((row) => {
      const parsed = startedRow.parse(row);
      return [parsed.n, parsed.attempt_id];
    }),
  );
}

/**
 * How the attempt was held when it was probed, and what the probe found: `expired`, a
 * stopped worker's sent attempt (lease run out); `own`, this worker's attempt whose call
 * failed unclearly. The writes that follow a probe hold to the same condition, so that an
 * attempt another worker took meanwhile is left alone.
 */
export interface ProbedHold {
  readonly hold: 'expired' | 'own';
  readonly owner: string;
  readonly outcome: ProbeOutcome;
  readonly evidence: ProbeEvidence;
}

/** The hold condition, for statements given probeParams from $first on (outcome, evidence, owner, hold). */
function held(first: number, alias = ''): string {
  const owner = `$${first + 2}`;
  const hold = `$${first + 3}`;
  const a = alias === '' ? '' : `${alias}.`;
  return `((${hold}::text IS NULL)
    OR (${hold} = 'own' AND ${a}owner = ${owner})
    OR (${hold} = 'expired' AND ${a}sent_at IS NOT NULL AND ${a}lease_until <= clock_timestamp()))`;
}

/** The probe's parameters: outcome, evidence, owner, hold. */
function probeParams(probed: ProbedHold | undefined): (string | null)[] {
  if (probed === undefined) return [null, null, null, null];
  return [probed.outcome, JSON.stringify(probed.evidence), probed.owner, probed.hold];
}

@Injectable()
export class CommandAttemptRepository {
  constructor(
    private readonly orders: OrderRepository,
    private readonly processed: ProcessedEventRepository,
    @Inject(TransactionBatcher) private readonly batcher: TransactionBatcher,
  ) {}

  /**
   * Every attempt in doubt (of the order `orderId` only, when given), the longest-waiting
   * first. The operator's reads are static: they need only the `Sql` they are given, so
   * the CLI uses them without the worker's batcher.
   */
  static listInDoubt(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
    return queryRows(
      sql,
      closedRow,
      `${CLOSED} WHERE state = 'in_doubt' AND ($1::text IS NULL OR order_id = $1)
        ORDER BY finished_at, id`,
      [orderId ?? null],
    );
  }

  /** The latest `limit` attempts in doubt, the latest first (command_attempts_in_doubt_idx). */
  static recentInDoubt(sql: Sql, limit: number): Promise<ClosedAttempt[]> {
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
  static listHeld(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
    return queryRows(
      sql,
      closedRow,
      `${CLOSED} WHERE state = 'started' AND held_until IS NOT NULL
          AND ($1::text IS NULL OR order_id = $1)
        ORDER BY held_until, id`,
      [orderId ?? null],
    );
  }

  /**
   * `discard`: the event will never take effect (its dead letter was discarded by a person
   * or superseded by a later ERP event). Recorded in the ledger, so that a delivery of the
   * event that Kafka still makes (its offset was not committed) is a no-op for the guard.
   * Only an event with no attempt, or a failed one (it had no effect). Static, like the
   * operator's reads: the discard writes it in its own transaction. False when refused.
   */
  static async discard(
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

  /** The order's attempts that a probe decided (or found unreadable), oldest first. */
  static listProbed(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
    return queryRows(
      sql,
      closedRow,
      `${CLOSED} WHERE order_id = $1 AND probe_outcome IS NOT NULL ORDER BY probed_at, id`,
      [orderId],
    );
  }

  /** Every attempt of the order (each Payflow call made for one of its events), oldest first. */
  static listForOrder(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
    return queryRows(sql, closedRow, `${CLOSED} WHERE order_id = $1 ORDER BY started_at, id`, [
      orderId,
    ]);
  }

  /** The order's latest attempt that ended `resolved` (settled from outside), if any. */
  static async lastResolved(sql: Sql, orderId: string): Promise<ClosedAttempt | null> {
    const [row] = await queryRows(
      sql,
      closedRow,
      `${CLOSED} WHERE order_id = $1 AND state = 'resolved'
        ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT 1`,
      [orderId],
    );
    return row ?? null;
  }

  /**
   * The guard of one event and, when it is fresh (not processed, order not blocked, no
   * attempt yet) and `record`, the insert of its attempt and the `fresh` writes, in one
   * statement: the common case costs one round trip.
   */
  async guard(tx: Sql, input: GuardInput, fresh?: Part): Promise<GuardRow> {
    const { text, params } = render((bind) => {
      const eventId = bind(input.eventId);
      const orderId = bind(input.orderId);
      return `
  WITH g AS (
    SELECT ${this.processed.processed(eventId)} AS processed,
           COALESCE(o.blocked, false) AS blocked, o.blocked_reason,
           a.id::text AS attempt_id, a.state AS attempt_state, a.owner AS attempt_owner,
           a.lease_until <= clock_timestamp() AS lease_expired,
           a.sent_at IS NOT NULL AS attempt_sent,
           a.payment_id::text AS attempt_payment_id,
           a.held_until IS NOT NULL AS attempt_held, a.held_since AS attempt_held_since,
           ${windowEnd(`${bind(input.windowMs)}`, 'a')} <= clock_timestamp() AS window_passed
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN LATERAL (${this.orders.blockOf(orderId)}) o ON true
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
   * The guard of several events that need nothing from it but "fresh or not": the
   * attempts of the fresh ones are recorded in one statement, with their `fresh` writes.
   * Returns the recorded attempt ids by the events' 1-based positions.
   */
  async guardMany(tx: Sql, input: ManyGuardInput, fresh: Part): Promise<Map<number, string>> {
    const { text, params } = this.guardManyStatement(input, fresh, false);
    return startedByPosition(await tx.query(text, params));
  }

  /**
   * guardMany for events whose requests are about to leave (called from their send hooks,
   * with the rate gate passed and a connection held): the fresh ones' attempts are recorded
   * `started` and sent at once (begin and mark_sent in one step), with their `fresh`
   * writes, in one autocommit statement outside any batch (like markSent).
   */
  async beginSent(input: ManyGuardInput, fresh: Part): Promise<Map<number, string>> {
    const { text, params } = this.guardManyStatement(input, fresh, true);
    return startedByPosition(await this.batcher.runAlone(text, params));
  }

  private guardManyStatement(input: ManyGuardInput, fresh: Part, sent: boolean): Rendered {
    return render(
      (bind) => `
  WITH input AS (
    SELECT * FROM unnest(${bind(input.events.map((event) => event.eventId))}::uuid[],
                         ${bind(input.events.map((event) => event.orderId))}::text[],
                         ${bind(input.events.map((event) => event.paymentId))}::uuid[])
           WITH ORDINALITY AS x (event_id, order_id, payment_id, n)),
  fresh_input AS (
    SELECT x.* FROM input x
      LEFT JOIN LATERAL (${this.orders.blockOf('x.order_id')}) o ON true
     WHERE o.blocked IS NOT TRUE
       AND NOT EXISTS (SELECT 1 FROM command_attempts a WHERE a.event_id = x.event_id)
       AND NOT ${this.processed.processed('x.event_id')}),
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
   * The event's mapping failed (no call is made): recorded once as a `failed` attempt with
   * the mapping's error code, so that its status event (payment.creation_failed, …) is
   * written once whatever the redeliveries (a rebalance may deliver it again before its
   * dead letter blocks the order). True when this statement recorded it: the caller then
   * writes the status event; false when it was recorded before.
   */
  async recordMappingFailure(
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

  /**
   * Takes the event's attempt over for a new call: only a failed one, this worker's own
   * started one, or a started one that never left and whose lease ran out. Null when
   * another worker holds it.
   */
  async takeOver(tx: Sql, input: Omit<GuardInput, 'record' | 'windowMs'>): Promise<string | null> {
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
      OR (command_attempts.state = 'started' AND command_attempts.owner = EXCLUDED.owner)
      OR (command_attempts.state = 'started' AND command_attempts.sent_at IS NULL
          AND command_attempts.lease_until <= clock_timestamp())
  RETURNING id::text AS id`,
    );
    const [row] = await tx.query(text, params);
    return row === undefined ? null : idRow.parse(row).id;
  }

  /**
   * The attempts' requests are about to leave: marked only while `owner` still owns them
   * (lease not run out, not taken over), in one autocommit statement outside any batch (see
   * StatementGroup). `sent_at` keeps the first request, `last_sent_at` the latest, from
   * which the late-effect window counts (a call that sends again, e.g. after a 401
   * refresh, may be applied from its latest request). Returns the ids marked.
   */
  async markSent(attemptIds: readonly string[], owner: string): Promise<Set<string>> {
    const rows = await this.batcher.runAlone(
      `UPDATE command_attempts c SET sent_at = COALESCE(c.sent_at, clock_timestamp()),
              last_sent_at = clock_timestamp()
         FROM unnest($1::bigint[]) AS x (id)
        WHERE c.id = x.id AND c.state = 'started' AND c.owner = $2
          AND c.lease_until > clock_timestamp()
       RETURNING c.id::text AS id`,
      [attemptIds, owner],
    );
    return new Set(rows.map((row) => idRow.parse(row).id));
  }

  /**
   * The attempts of a batch `succeeded` (or `resolved` when they were in doubt) and their
   * events processed, in one statement. Returns how many attempts it finished.
   */
  async finish(tx: Sql, rows: readonly FinishedAttempt[]): Promise<number> {
    const { text, params } = render(
      (bind) => `
  WITH a AS (
    UPDATE command_attempts c
       SET state = CASE WHEN c.state = 'in_doubt' THEN 'resolved' ELSE 'succeeded' END,
           finished_at = clock_timestamp()
      FROM unnest(${bind(rows.map((row) => row.attemptId))}::bigint[]) AS x (id)
     WHERE c.id = x.id AND c.state IN ('started', 'in_doubt')
    RETURNING c.id),
  e AS (${this.processed.recordMany(rows)(bind)})
  SELECT count(*)::int AS finished FROM a`,
    );
    const [row] = await tx.query(text, params);
    return row === undefined ? 0 : finishedRow.parse(row).finished;
  }

  /** The call had no effect: failed, only while `owner` owns it (a taker-over is calling). */
  async markFailed(tx: Sql, attemptId: string, errorCode: string, owner: string): Promise<void> {
    await tx.execute(
      `UPDATE command_attempts SET state = 'failed', error_code = $2,
              finished_at = clock_timestamp()
        WHERE id = $1 AND state = 'started' AND owner = $3`,
      [attemptId, errorCode, owner],
    );
  }

  /**
   * `fail_probed`: the owner's probe after its own unclear call found it not applied, and
   * its latest request left at least `windowMs` ago (it can no longer land): failed, with
   * the probe recorded, so that the event's retry sends it again. False while the window
   * runs (the attempt is then held instead) or when it is not this worker's any more.
   */
  async failProbed(
    tx: Sql,
    attemptId: string,
    errorCode: string,
    probed: ProbedHold,
    windowMs: number,
  ): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE command_attempts SET state = 'failed', error_code = $2,
              finished_at = clock_timestamp(),
              probe_outcome = $3, probe_evidence = $4::jsonb, probed_at = clock_timestamp()
        WHERE id = $1 AND state = 'started' AND sent_at IS NOT NULL AND owner = $5
          AND ${windowEnd('$6')} <= clock_timestamp()
       RETURNING id::text AS id`,
      [
        attemptId,
        errorCode,
        probed.outcome,
        JSON.stringify(probed.evidence),
        probed.owner,
        windowMs,
      ],
    );
    return rows.length > 0;
  }

  /**
   * `hold`: a probe found the call not applied while its latest request may still land
   * (less than `windowMs` ago). Nobody sends it again: it stays started, its lease is
   * released so that any worker's next read decides (its own retry, or a replacement's
   * after a crash), and `held_until` records when the window ends. Same hold condition as
   * the probe. Null when the window has passed or another worker holds it meanwhile.
   */
  async holdForLateEffect(
    tx: Sql,
    attemptId: string,
    probed: ProbedHold,
    windowMs: number,
  ): Promise<z.infer<typeof heldRow> | null> {
    const [row] = await tx.query(
      `WITH before AS (SELECT held_since FROM command_attempts WHERE id = $1)
       UPDATE command_attempts c
          SET lease_until = LEAST(c.lease_until, clock_timestamp()),
              held_since = COALESCE(c.held_since, clock_timestamp()),
              held_until = ${windowEnd('$6', 'c')},
              probe_outcome = $2, probe_evidence = $3::jsonb, probed_at = clock_timestamp()
         FROM before
        WHERE c.id = $1 AND c.state = 'started' AND c.sent_at IS NOT NULL
          AND ${windowEnd('$6', 'c')} > clock_timestamp() AND ${held(2, 'c')}
       RETURNING c.held_until,
                 (EXTRACT(EPOCH FROM c.held_until - clock_timestamp()) * 1000)::float8
                   AS remaining_ms,
                 (EXTRACT(EPOCH FROM clock_timestamp() - COALESCE(c.last_sent_at, c.sent_at))
                   * 1000)::float8 AS since_sent_ms,
                 before.held_since IS NULL AS first_hold`,
      [attemptId, ...probeParams(probed), windowMs],
    );
    return row === undefined ? null : heldRow.parse(row);
  }

  /**
   * The started attempt is in doubt (once). Returns its payment id when this statement
   * marked it, undefined when it was not started any more.
   */
  async markInDoubt(
    tx: Sql,
    attemptId: string,
    errorCode: string,
    probed?: ProbedHold,
  ): Promise<{ readonly paymentId: string | null } | undefined> {
    const [row] = await tx.query(
      `UPDATE command_attempts SET state = 'in_doubt', error_code = $2,
              finished_at = clock_timestamp(),
              probe_outcome = COALESCE($3, probe_outcome),
              probe_evidence = COALESCE($4::jsonb, probe_evidence),
              probed_at = CASE WHEN $3::text IS NULL THEN probed_at ELSE clock_timestamp() END
        WHERE id = $1 AND state = 'started' AND ${held(3)}
       RETURNING payment_id::text AS payment_id`,
      [attemptId, errorCode, ...probeParams(probed)],
    );
    return row === undefined ? undefined : { paymentId: paymentIdRow.parse(row).payment_id };
  }

  /**
   * A probe found that the attempt's call took effect: the attempt becomes this worker's
   * (same hold as when it was probed), with the probe recorded, for the complete step of the
   * same transaction. False when another worker holds or took it meanwhile (busy).
   */
  async claimProbed(tx: Sql, attemptId: string, probed: ProbedHold): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE command_attempts SET owner = $4, probe_outcome = $2, probe_evidence = $3::jsonb,
              probed_at = clock_timestamp()
        WHERE id = $1 AND state = 'started' AND ${held(2)}
       RETURNING id::text AS id`,
      [attemptId, ...probeParams(probed)],
    );
    return rows.length > 0;
  }

  /**
   * Takes a stopped worker's sent attempt over for a new call (sent again), like an attempt
   * that never left: `take_over_sent` for a repeatable call (`probe` null), or
   * `take_over_probed` when a probe found it not applied, with the probe recorded and only
   * once its latest request left at least `windowMs` ago (it can no longer land). Only a
   * started attempt sent by a worker whose lease ran out (or released for a late-effect
   * hold). Null when another worker holds it, or the window still runs.
   */
  async takeOverProbed(
    tx: Sql,
    attemptId: string,
    owner: AttemptOwner,
    probe: {
      readonly outcome: ProbeOutcome;
      readonly evidence: ProbeEvidence;
      readonly windowMs: number;
    } | null,
  ): Promise<{ readonly attemptId: string; readonly heldSince: Date | null } | null> {
    const { text, params } = render(
      (bind) => `
  WITH before AS (SELECT held_since FROM command_attempts WHERE id = ${bind(attemptId)})
  UPDATE command_attempts
     SET owner = ${bind(owner.owner)}, lease_until = ${lease(bind, owner.leaseMs)},
         started_at = clock_timestamp(), sent_at = NULL, last_sent_at = NULL,
         held_since = NULL, held_until = NULL, error_code = NULL,
         probe_outcome = COALESCE(${bind(probe?.outcome ?? null)}, probe_outcome),
         probe_evidence = COALESCE(${bind(probe === null ? null : JSON.stringify(probe.evidence))}::jsonb,
                                   probe_evidence),
         probed_at = CASE WHEN ${bind(probe === null)}::boolean THEN probed_at
                          ELSE clock_timestamp() END
    FROM before
   WHERE id = ${bind(attemptId)} AND state = 'started' AND sent_at IS NOT NULL
     AND lease_until <= clock_timestamp()
     AND (${bind(probe === null)}::boolean
          OR ${windowEnd(bind(probe?.windowMs ?? 0))} <= clock_timestamp())
  RETURNING id::text AS id, before.held_since`,
    );
    const [row] = await tx.query(text, params);
    if (row === undefined) return null;
    const taken = decidedRow.parse(row);
    return { attemptId: taken.id, heldSince: taken.held_since };
  }

  /** Whether a started attempt about the payment outlived its lease (its worker stopped). */
  async hasAbandoned(tx: Sql, paymentId: string): Promise<boolean> {
    const [row] = await tx.query(
      `SELECT EXISTS (SELECT 1 FROM command_attempts
                       WHERE payment_id = $1::uuid AND state = 'started'
                         AND lease_until <= clock_timestamp()) AS found`,
      [paymentId],
    );
    return row !== undefined && existsRow.parse(row).found;
  }

  /** The payment's open attempts are settled from outside (resolveInDoubt). */
  async resolveForPayment(tx: Sql, paymentId: string): Promise<void> {
    await tx.execute(
      `UPDATE command_attempts SET state = 'resolved', finished_at = clock_timestamp()
        WHERE payment_id = $1::uuid AND state IN ('in_doubt', 'started')`,
      [paymentId],
    );
  }

  /**
   * A person found that the in-doubt call never took effect (`in-doubt resolve
   * --not-created`): the attempt becomes `failed`, like a call that never left, so the
   * next delivery of its event takes it over and sends it. Only once its latest request
   * left at least `windowMs` ago: before that Payflow may still apply it (`window`, with
   * when it ends). `not_in_doubt` when it was not in doubt.
   */
  async markNotTaken(
    tx: Sql,
    attemptId: string,
    errorCode: string,
    windowMs: number,
  ): Promise<
    | { readonly kind: 'marked' }
    | { readonly kind: 'not_in_doubt' }
    | { readonly kind: 'window'; readonly until: Date }
  > {
    const [row] = await tx.query(
      `SELECT state, ${windowEnd('$2')} AS window_end,
              ${windowEnd('$2')} > clock_timestamp() AS window_runs
         FROM command_attempts WHERE id = $1 FOR UPDATE`,
      [attemptId, windowMs],
    );
    const found = notTakenRow.parse(row ?? { state: null, window_end: null, window_runs: null });
    if (found.state !== 'in_doubt') return { kind: 'not_in_doubt' };
    if (found.window_runs === true && found.window_end !== null) {
      return { kind: 'window', until: found.window_end };
    }
    await tx.execute(
      `UPDATE command_attempts SET state = 'failed', error_code = $2,
              finished_at = clock_timestamp()
        WHERE id = $1 AND state = 'in_doubt'`,
      [attemptId, errorCode],
    );
    return { kind: 'marked' };
  }
}
