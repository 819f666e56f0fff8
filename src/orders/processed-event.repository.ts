/**
 * The only owner of the `processed_events` table's SQL: the ids of the events that took
 * effect (a redelivery of one does nothing). Its parts join the command engine's guard and
 * finish statements.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { Part } from '../database/statement.js';

const lastRow = z.object({ orderId: z.string(), processedAt: timestampField });

const receivedRow = z.object({
  eventId: z.string(),
  type: z.string(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  readAt: timestampField.nullable(),
  processedAt: timestampField,
});

/** An event of the order that took effect, as the order's timeline shows it. */
export type ReceivedEvent = z.infer<typeof receivedRow>;

/** An event that took effect, and where it was read. */
export interface ProcessedEventRow {
  readonly eventId: string;
  readonly orderId: string;
  readonly type: string;
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as decimal text. */
  readonly offset: string;
  /** When the worker took the event up; absent, the row's read_at stays null. */
  readonly readAt?: Date | undefined;
}

@Injectable()
export class ProcessedEventRepository {
  /** Boolean SQL expression: the event whose id is the expression `eventId` was processed. */
  processed(eventId: string): string {
    return `EXISTS (SELECT 1 FROM processed_events WHERE event_id = ${eventId}::uuid)`;
  }

  /** The events of a batch processed (a repeat is ignored). */
  recordMany(rows: readonly ProcessedEventRow[]): Part {
    return (bind) => `
    INSERT INTO processed_events (event_id, order_id, type, topic, partition, "offset", read_at)
    SELECT * FROM unnest(${bind(rows.map((row) => row.eventId))}::uuid[],
                         ${bind(rows.map((row) => row.orderId))}::text[],
                         ${bind(rows.map((row) => row.type))}::text[],
                         ${bind(rows.map((row) => row.topic))}::text[],
                         ${bind(rows.map((row) => row.partition))}::int[],
                         ${bind(rows.map((row) => row.offset))}::bigint[],
                         ${bind(rows.map((row) => row.readAt?.toISOString() ?? null))}::timestamptz[])
    ON CONFLICT (event_id) DO NOTHING`;
  }

  /**
   * When each of these orders' latest event took effect (orders with none are left out):
   * one backward step of processed_events_order_idx per order.
   */
  async lastProcessedAt(sql: Sql, orderIds: readonly string[]): Promise<Map<string, Date>> {
    if (orderIds.length === 0) return new Map();
    const rows = await queryRows(
      sql,
      lastRow,
      `SELECT o.order_id AS "orderId", last.processed_at AS "processedAt"
         FROM unnest($1::text[]) AS o (order_id)
         CROSS JOIN LATERAL (SELECT processed_at FROM processed_events p
                              WHERE p.order_id = o.order_id
                              ORDER BY p.processed_at DESC LIMIT 1) AS last`,
      [orderIds],
    );
    return new Map(rows.map((row) => [row.orderId, row.processedAt]));
  }

  /** The order's events that took effect, oldest first (processed_events_order_idx). */
  listForOrder(sql: Sql, orderId: string): Promise<ReceivedEvent[]> {
    return queryRows(
      sql,
      receivedRow,
      `SELECT event_id::text AS "eventId", type, topic, partition, "offset"::text AS "offset",
              read_at AS "readAt", processed_at AS "processedAt"
         FROM processed_events WHERE order_id = $1 ORDER BY processed_at, event_id`,
      [orderId],
    );
  }
}
