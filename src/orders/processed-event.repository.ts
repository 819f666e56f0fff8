/**
 * The only owner of the `processed_events` table's SQL: the ids of the events that took
 * effect (a redelivery of one does nothing). Its parts join the command engine's guard and
 * finish statements.
 */
import { Injectable } from '@nestjs/common';
import type { Part } from '../payments/statement.js';

/** An event that took effect, and where it was read. */
export interface ProcessedEventRow {
  readonly eventId: string;
  readonly orderId: string;
  readonly type: string;
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as decimal text. */
  readonly offset: string;
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
    INSERT INTO processed_events (event_id, order_id, type, topic, partition, "offset")
    SELECT * FROM unnest(${bind(rows.map((row) => row.eventId))}::uuid[],
                         ${bind(rows.map((row) => row.orderId))}::text[],
                         ${bind(rows.map((row) => row.type))}::text[],
                         ${bind(rows.map((row) => row.topic))}::text[],
                         ${bind(rows.map((row) => row.partition))}::int[],
                         ${bind(rows.map((row) => row.offset))}::bigint[])
    ON CONFLICT (event_id) DO NOTHING`;
  }
}
