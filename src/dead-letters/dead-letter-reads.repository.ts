/**
 * The operator's reads of `dead_letters` (`order show`, `in-doubt list`): rows parsed (zod),
 * columns chosen one by one (no key, no headers; a letter's value only where the in-doubt
 * list counts what was sent). The writes are DeadLetterRepository's and the replay's.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';

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

@Injectable()
export class DeadLetterReadRepository {
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
}
