/**
 * The one owner of `dead_letters`' SQL: the sink's insert, the operator's reads (`order
 * show`, `in-doubt list`: columns chosen one by one, no key or headers) and the replay's
 * reads and writes. Rows are parsed (zod). The order's block and lock are OrderRepository's.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { countsByHour, queryRows, type HourlyCount } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { DeadLetter } from '../messaging/dead-letter.port.js';
import { OrderRepository } from '../orders/order.repository.js';
import type { ReplayFilter } from './replay/replay-filter.js';

const letterRow = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  attempts: z.number(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  failedAt: timestampField,
  replayedAt: timestampField.nullable(),
});

/** A dead letter as `order show` lists it. */
export type DeadLetterOverview = z.infer<typeof letterRow>;

const eventLettersRow = z.object({
  orderId: z.string(),
  eventId: z.string(),
  parked: z.number().int(),
  value: z.instanceof(Buffer).nullable(),
});

/** What the dead letters say about one event of an order. */
export type EventLetters = z.infer<typeof eventLettersRow>;

/** An order's event, by ids. */
export interface OrderEventKey {
  readonly orderId: string;
  readonly eventId: string;
}

const summaryRow = z.object({
  id: z.string(),
  orderId: z.string().nullable(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  attempts: z.number(),
  failedAt: timestampField,
});

/** A dead letter as the replay plans it (no key or value: they may be large). */
export type DeadLetterSummary = z.infer<typeof summaryRow>;

/** The message as it was received: what a replay publishes again and the console shows. */
const messageFields = {
  key: z.instanceof(Buffer).nullable(),
  value: z.instanceof(Buffer).nullable(),
  headers: z.record(z.string(), z.unknown()),
};

const replayableRow = summaryRow.extend(messageFields);

/** A dead letter with what is needed to publish it again. */
export type ReplayableDeadLetter = z.infer<typeof replayableRow>;

const listedRow = summaryRow.extend({
  organizationId: z.string().nullable(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  replayedAt: timestampField.nullable(),
  /** Where the next page starts: `failed_at` (UTC, to the microsecond) and id. */
  cursor: z.string(),
});

/** A dead letter as the console lists it (no key, value or headers). */
export type ListedDeadLetter = z.infer<typeof listedRow>;

const storedRow = listedRow.extend(messageFields);

/** A dead letter with the message as it was received (key, value, headers). */
export type StoredDeadLetter = z.infer<typeof storedRow>;

/** What the console's dead-letter list selects; every field narrows it. */
export interface DeadLetterFilter {
  readonly reason?: string;
  readonly organizationId?: string;
  /** Failed at or after. */
  readonly from?: Date;
  /** Failed before. */
  readonly to?: Date;
  /** `waiting`: not replayed yet (the default); `replayed`; `all`. */
  readonly state?: 'waiting' | 'replayed' | 'all';
}

/** A page position: the cursor of the last row of the page before. */
export interface DeadLetterCursor {
  readonly failedAt: string;
  readonly id: string;
}

const SUMMARY_COLUMNS = `id::text AS id, order_id AS "orderId", event_id AS "eventId",
  event_type AS "eventType", reason, error, attempts, failed_at AS "failedAt"`;

/** The console's filter as SQL over `d`, with its parameters from $1 (6 of them). */
function filterSql(organizationOf: (orderId: string) => string): string {
  return `($1::text IS NULL OR d.reason = $1::text)
      AND ($2::text IS NULL OR ${organizationOf('d.order_id')} = $2::text)
      AND ($3::timestamptz IS NULL OR d.failed_at >= $3::timestamptz)
      AND ($4::timestamptz IS NULL OR d.failed_at < $4::timestamptz)
      AND ($5::text = 'all' OR ($5::text = 'waiting') = (d.replayed_at IS NULL))`;
}

function filterParams(filter: DeadLetterFilter): unknown[] {
  return [
    filter.reason ?? null,
    filter.organizationId ?? null,
    filter.from ?? null,
    filter.to ?? null,
    filter.state ?? 'waiting',
  ];
}

const LISTED_COLUMNS = `d.id::text AS id, d.order_id AS "orderId", d.event_id AS "eventId",
  d.event_type AS "eventType", d.reason, d.error, d.attempts, d.failed_at AS "failedAt",
  d.topic, d.partition, d."offset"::text AS "offset", d.replayed_at AS "replayedAt",
  to_char(d.failed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || d.id AS cursor`;

@Injectable()
export class DeadLetterRepository {
  private readonly orders = new OrderRepository();

  /**
   * Inserts the dead letter; false when one with the same (topic, partition, offset) is
   * stored already (nothing is written then).
   */
  async insert(
    tx: Sql,
    letter: DeadLetter,
    headers: Readonly<Record<string, string>>,
  ): Promise<boolean> {
    const { message } = letter;
    const inserted = await tx.execute(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                                 "offset", key, value, headers, attempts, failed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9, $10, $11::jsonb, $12, $13)
       ON CONFLICT (topic, partition, "offset") DO NOTHING`,
      [
        letter.orderId,
        letter.eventId,
        letter.eventType,
        letter.reason,
        letter.error,
        message.topic,
        message.partition,
        message.offset,
        message.key,
        message.value,
        JSON.stringify(headers),
        letter.attempts,
        letter.failedAt,
      ],
    );
    return inserted > 0;
  }

  /** The order's dead letters, in the order they failed. */
  listForOrder(sql: Sql, orderId: string): Promise<DeadLetterOverview[]> {
    return queryRows(
      sql,
      letterRow,
      `SELECT id::text AS id, event_id AS "eventId", event_type AS "eventType", reason, error,
              attempts, topic, partition, "offset"::text AS "offset", failed_at AS "failedAt",
              replayed_at AS "replayedAt"
         FROM dead_letters d WHERE d.order_id = $1 ORDER BY d.id`,
      [orderId],
    );
  }

  /**
   * For each event, in the order given: how many of its order's other letters wait for a replay (`parked`),
   * and the value of the event's own latest letter (null when it has none).
   */
  ofEvents(sql: Sql, events: readonly OrderEventKey[]): Promise<EventLetters[]> {
    return queryRows(
      sql,
      eventLettersRow,
      `SELECT e.order_id AS "orderId", e.event_id AS "eventId",
              (SELECT count(*)::int FROM dead_letters l
                WHERE l.order_id = e.order_id AND l.replayed_at IS NULL
                  AND l.event_id IS DISTINCT FROM e.event_id) AS parked,
              (SELECT l.value FROM dead_letters l
                WHERE l.order_id = e.order_id AND l.event_id = e.event_id
                ORDER BY l.id DESC LIMIT 1) AS value
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e (order_id, event_id, n)
        ORDER BY e.n`,
      [events.map((event) => event.orderId), events.map((event) => event.eventId)],
    );
  }

  /**
   * Every unreplayed dead letter of the orders that qualify (one of their unreplayed
   * letters matches every filter), plus the matching key-less letters when no order is
   * named; in id order, which is the order they failed in.
   */
  selectForReplay(sql: Sql, filter: ReplayFilter): Promise<DeadLetterSummary[]> {
    return queryRows(
      sql,
      summaryRow,
      `SELECT ${SUMMARY_COLUMNS} FROM dead_letters d
        WHERE d.replayed_at IS NULL
          AND (
            (d.order_id IS NOT NULL AND d.order_id IN (
              SELECT m.order_id FROM dead_letters m
               WHERE m.replayed_at IS NULL AND m.order_id IS NOT NULL
                 AND ($1::text IS NULL OR m.order_id = $1::text)
                 AND ($2::text IS NULL OR m.reason = $2::text)
                 AND ($3::timestamptz IS NULL OR m.failed_at >= $3::timestamptz)))
            OR
            (d.order_id IS NULL AND $1::text IS NULL
              AND ($2::text IS NULL OR d.reason = $2::text)
              AND ($3::timestamptz IS NULL OR d.failed_at >= $3::timestamptz))
          )
        ORDER BY d.id`,
      [filter.orderId ?? null, filter.reason ?? null, filter.since ?? null],
    );
  }

  /**
   * The order's unreplayed letters, locked, in id order. The caller locks the order row
   * first (OrderRepository.lock): the sink updates it when it parks another event, so a
   * letter written meanwhile is either seen here or blocks the order again afterwards.
   */
  lockOrderLetters(tx: Sql, orderId: string): Promise<ReplayableDeadLetter[]> {
    return queryRows(
      tx,
      replayableRow,
      // d.id, not id: the output column "id" is text, and "10" sorts before "9".
      `SELECT ${SUMMARY_COLUMNS}, key, value, headers FROM dead_letters d
        WHERE d.order_id = $1 AND d.replayed_at IS NULL
        ORDER BY d.id FOR UPDATE`,
      [orderId],
    );
  }

  /** One key-less letter, if it is still unreplayed. */
  lockLetter(tx: Sql, id: string): Promise<ReplayableDeadLetter[]> {
    return queryRows(
      tx,
      replayableRow,
      `SELECT ${SUMMARY_COLUMNS}, key, value, headers FROM dead_letters
        WHERE id = $1::bigint AND order_id IS NULL AND replayed_at IS NULL
        FOR UPDATE`,
      [id],
    );
  }

  async markReplayed(tx: Sql, ids: readonly string[]): Promise<void> {
    await tx.execute(
      'UPDATE dead_letters SET replayed_at = now() WHERE id = ANY($1::bigint[]) AND replayed_at IS NULL',
      [ids],
    );
  }

  /**
   * One page of the console's list, newest first, after `cursor` (dead_letters_failed_at_idx
   * read backwards; the organization is the order's, by its primary key).
   */
  page(
    sql: Sql,
    filter: DeadLetterFilter,
    cursor: DeadLetterCursor | null,
    limit: number,
  ): Promise<ListedDeadLetter[]> {
    const organizationOf = (orderId: string): string => this.orders.organizationOf(orderId);
    return queryRows(
      sql,
      listedRow,
      `SELECT ${LISTED_COLUMNS}, ${organizationOf('d.order_id')} AS "organizationId"
         FROM dead_letters d
        WHERE ${filterSql(organizationOf)}
          AND ($6::timestamptz IS NULL OR (d.failed_at, d.id) < ($6::timestamptz, $7::bigint))
        ORDER BY d.failed_at DESC, d.id DESC
        LIMIT $8`,
      [...filterParams(filter), cursor?.failedAt ?? null, cursor?.id ?? null, limit],
    );
  }

  /**
   * The orders (up to `limit`, oldest failure first) with a dead letter the filter selects
   * that still waits: what a replay of the filtered set replays, order by order.
   */
  async waitingOrders(sql: Sql, filter: DeadLetterFilter, limit: number): Promise<string[]> {
    const organizationOf = (orderId: string): string => this.orders.organizationOf(orderId);
    const rows = await queryRows(
      sql,
      z.object({ orderId: z.string() }),
      `SELECT d.order_id AS "orderId" FROM dead_letters d
        WHERE ${filterSql(organizationOf)} AND d.order_id IS NOT NULL
        GROUP BY d.order_id ORDER BY min(d.id) LIMIT $6`,
      [...filterParams({ ...filter, state: 'waiting' }), limit],
    );
    return rows.map((row) => row.orderId);
  }

  /** One dead letter with its message as received, or null. */
  async stored(sql: Sql, id: string): Promise<StoredDeadLetter | null> {
    if (!/^\d{1,19}$/.test(id)) return null;
    const [row] = await queryRows(
      sql,
      storedRow,
      `SELECT ${LISTED_COLUMNS}, ${this.orders.organizationOf('d.order_id')} AS "organizationId",
              d.key, d.value, d.headers
         FROM dead_letters d WHERE d.id = $1::bigint`,
      [id],
    );
    return row ?? null;
  }

  /** Dead letters per hour since `since` (hours without any are left out). */
  countsByHour(sql: Sql, since: Date): Promise<HourlyCount[]> {
    return countsByHour(sql, 'dead_letters', 'failed_at', since);
  }
}
