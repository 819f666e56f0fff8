/** Writes of the dead-letter sink to dead_letters (the order's block is OrderRepository's). */
import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import type { DeadLetter } from './dead-letter.sink.js';

@Injectable()
export class DeadLetterRepository {
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
}
