/**
 * The one owner of `dead_letters`' SQL: the sink's insert, the operator's reads (`order
 * show`, `in-doubt list`: columns chosen one by one, no key or headers), the replay's and
 * the discard's reads and writes, and privacy's reads and erasure of the letters' personal
 * data. Rows are parsed (zod) with the schemas of dead-letter.rows.ts. The order's block and
 * lock are OrderRepository's. A letter "waits" until it is replayed or discarded (WAITING).
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { countsByHour, queryRows, type HourlyCount } from '../database/parsed-rows.js';
import type { DeadLetter } from '../messaging/dead-letter.port.js';
import { OrderRepository } from '../orders/order.repository.js';
import { ProcessedEventRepository } from '../orders/processed-event.repository.js';
import {
  letterRow,
  eventLettersRow,
  eventLetterRow,
  summaryRow,
  replayableRow,
  listedRow,
  storedRow,
  personalDataRow,
  type DeadLetterOverview,
  type EventLetters,
  type EventLetter,
  type LetterDiscard,
  type OrderEventKey,
  type DeadLetterSummary,
  type ReplayableDeadLetter,
  type ListedDeadLetter,
  type StoredDeadLetter,
  type DeadLetterFilter,
  type DeadLetterCursor,
  type LetterPersonalData,
  type MentioningLetter,
  type ErasedLetter,
} from './dead-letter.rows.js';
import type { ReplayFilter } from './replay/replay-filter.js';

export type * from './dead-letter.rows.js';

/** SQL: the letter `alias` still waits (neither replayed nor discarded). */
const WAITING = (alias: string): string =>
  `${alias}.replayed_at IS NULL AND ${alias}.discarded_at IS NULL`;

const DISCARD_COLUMNS = `d.discarded_at AS "discardedAt", d.discarded_by AS "discardedBy",
  d.discard_reason AS "discardReason", d.superseded_by AS "supersededBy"`;

const SUMMARY_COLUMNS = `id::text AS id, order_id AS "orderId", event_id AS "eventId",
  event_type AS "eventType", reason, error, attempts, failed_at AS "failedAt"`;

/** The console's filter as SQL over `d`, with its parameters from $1 (6 of them). */
function filterSql(organizationOf: (orderId: string) => string): string {
  return `($1::text IS NULL OR d.reason = $1::text)
      AND ($2::text IS NULL OR ${organizationOf('d.order_id')} = $2::text)
      AND ($3::timestamptz IS NULL OR d.failed_at >= $3::timestamptz)
      AND ($4::timestamptz IS NULL OR d.failed_at < $4::timestamptz)
      AND CASE $5::text WHEN 'all' THEN true WHEN 'replayed' THEN d.replayed_at IS NOT NULL
               WHEN 'discarded' THEN d.discarded_at IS NOT NULL ELSE ${WAITING('d')} END`;
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
  ${DISCARD_COLUMNS},
  to_char(d.failed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || d.id AS cursor`;

const PERSONAL_DATA_COLUMNS = `d.id::text AS id, d.event_id AS "eventId", d.event_type AS "eventType",
  d.reason, d.error, d.failed_at AS "failedAt", d.erased_at AS "erasedAt",
  d.discard_reason AS "discardReason", d.value, d.headers`;

@Injectable()
export class DeadLetterRepository {
  private readonly orders = new OrderRepository();
  private readonly processedEvents = new ProcessedEventRepository();

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
              replayed_at AS "replayedAt", ${DISCARD_COLUMNS}
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
                WHERE l.order_id = e.order_id AND ${WAITING('l')}
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
        WHERE ${WAITING('d')}
          AND (
            (d.order_id IS NOT NULL AND d.order_id IN (
              SELECT m.order_id FROM dead_letters m
               WHERE ${WAITING('m')} AND m.order_id IS NOT NULL
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
      `SELECT ${SUMMARY_COLUMNS}, key, value, headers, erased_at AS "erasedAt" FROM dead_letters d
        WHERE d.order_id = $1 AND ${WAITING('d')}
        ORDER BY d.id FOR UPDATE`,
      [orderId],
    );
  }

  /** One key-less letter, if it is still unreplayed. */
  lockLetter(tx: Sql, id: string): Promise<ReplayableDeadLetter[]> {
    return queryRows(
      tx,
      replayableRow,
      `SELECT ${SUMMARY_COLUMNS}, key, value, headers, erased_at AS "erasedAt" FROM dead_letters d
        WHERE d.id = $1::bigint AND d.order_id IS NULL AND ${WAITING('d')}
        FOR UPDATE`,
      [id],
    );
  }

  /** Which of these letters had their personal data erased (a replay refuses them). */
  async erasedAmong(sql: Sql, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT d.id::text AS id FROM dead_letters d
        WHERE d.id = ANY($1::bigint[]) AND d.erased_at IS NOT NULL`,
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  async markReplayed(tx: Sql, ids: readonly string[]): Promise<void> {
    await tx.execute(
      `UPDATE dead_letters d SET replayed_at = now() WHERE d.id = ANY($1::bigint[]) AND ${WAITING('d')}`,
      [ids],
    );
  }

  /**
   * Every letter of the event, oldest first (dead_letters_event_idx), with its order's
   * organization; `lock`: FOR UPDATE (the caller locked the order first, as the replay does).
   * A letter stored without an event id (before the sink read ids out of unreadable
   * envelopes) is found by the id in its value: only waiting ones, of `orderId` when given.
   */
  async lettersOfEvent(
    sql: Sql,
    eventId: string,
    options: { readonly orderId?: string; readonly lock?: boolean } = {},
  ): Promise<(EventLetter & { readonly value: Buffer | null })[]> {
    return queryRows(
      sql,
      eventLetterRow,
      `SELECT d.id::text AS id, d.order_id AS "orderId", d.event_id AS "eventId",
              ${this.orders.organizationOf('d.order_id')} AS "organizationId",
              d.event_type AS "eventType", d.reason, d.replayed_at AS "replayedAt",
              ${DISCARD_COLUMNS}, CASE WHEN d.event_id IS NULL THEN d.value END AS value
         FROM dead_letters d
        WHERE d.event_id = $1
           OR (d.event_id IS NULL AND ${WAITING('d')} AND ($2::text IS NULL OR d.order_id = $2)
               AND position(convert_to($1, 'UTF8') IN d.value) > 0)
        ORDER BY d.id${options.lock === true ? ' FOR UPDATE OF d' : ''}`,
      [eventId, options.orderId ?? null],
    );
  }

  /** Whether the event took effect (processed_events). */
  async tookEffect(sql: Sql, eventId: string): Promise<boolean> {
    const [row] = await queryRows(
      sql,
      z.object({ processed: z.boolean() }),
      `SELECT ${this.processedEvents.processed('$1')} AS processed`,
      [eventId],
    );
    return row?.processed === true;
  }

  /** Marks waiting letters discarded (and gives a letter stored without one its event id). */
  async markDiscarded(tx: Sql, ids: readonly string[], discard: LetterDiscard): Promise<number> {
    return tx.execute(
      `UPDATE dead_letters d
          SET discarded_at = now(), discarded_by = $2, discard_reason = $3, superseded_by = $4,
              event_id = COALESCE(d.event_id, $5)
        WHERE d.id = ANY($1::bigint[]) AND ${WAITING('d')}`,
      [ids, discard.by, discard.reason, discard.supersededBy, discard.eventId],
    );
  }

  /** The order's oldest letter that still waits and failed before letter `id`, if any. */
  async waitingBefore(tx: Sql, orderId: string, id: string): Promise<DeadLetterSummary | null> {
    const [row] = await queryRows(
      tx,
      summaryRow,
      `SELECT ${SUMMARY_COLUMNS} FROM dead_letters d
        WHERE d.order_id = $1 AND d.id < $2::bigint AND ${WAITING('d')}
        ORDER BY d.id LIMIT 1`,
      [orderId, id],
    );
    return row ?? null;
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

  // --- personal data (privacy export, erasure and retention) ------------------------------

  /**
   * Letters with an order id whose value holds `text` (a customer number: an order whose
   * payment request never took effect has none in `orders`), in id order: candidates only,
   * the caller reads each value to be sure.
   */
  mentioning(sql: Sql, text: string): Promise<MentioningLetter[]> {
    return queryRows(
      sql,
      z.object({ orderId: z.string(), value: z.instanceof(Buffer).nullable() }),
      `SELECT d.order_id AS "orderId", d.value FROM dead_letters d
        WHERE d.order_id IS NOT NULL AND position(convert_to($1, 'UTF8') IN d.value) > 0
        ORDER BY d.id`,
      [text],
    );
  }

  /** The order's dead letters with their personal data, oldest first; `lock`: FOR UPDATE. */
  personalDataOf(sql: Sql, orderId: string, lock = false): Promise<LetterPersonalData[]> {
    return queryRows(
      sql,
      personalDataRow,
      `SELECT ${PERSONAL_DATA_COLUMNS} FROM dead_letters d WHERE d.order_id = $1
        ORDER BY d.id${lock ? ' FOR UPDATE' : ''}`,
      [orderId],
    );
  }

  /** Key-less letters (no order id) that failed before `cutoff` and were not erased; up to `limit`. */
  async keylessFailedBefore(sql: Sql, cutoff: Date, limit: number): Promise<string[]> {
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT d.id::text AS id FROM dead_letters d
        WHERE d.order_id IS NULL AND d.erased_at IS NULL AND d.failed_at < $1
        ORDER BY d.id LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Letters by id with their personal data, in id order, locked (FOR UPDATE). */
  lockPersonalData(tx: Sql, ids: readonly string[]): Promise<LetterPersonalData[]> {
    return queryRows(
      tx,
      personalDataRow,
      `SELECT ${PERSONAL_DATA_COLUMNS} FROM dead_letters d WHERE d.id = ANY($1::bigint[])
        ORDER BY d.id FOR UPDATE`,
      [ids],
    );
  }

  /**
   * Writes an erased letter; when its event lost data, marks it erased (a replay refuses it
   * from now on).
   */
  async writeErased(tx: Sql, letter: ErasedLetter): Promise<void> {
    await tx.execute(
      `UPDATE dead_letters
          SET value = $2, error = $3, headers = $4::jsonb, discard_reason = $5,
              erased_at = CASE WHEN $6::boolean THEN COALESCE(erased_at, now()) ELSE erased_at END
        WHERE id = $1::bigint`,
      [
        letter.id,
        letter.value,
        letter.error,
        JSON.stringify(letter.headers),
        letter.discardReason,
        letter.eventErased,
      ],
    );
  }
}
