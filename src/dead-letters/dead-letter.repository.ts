/** Writes of the dead-letter sink: the dead_letters row and the order's block. */
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

  /**
   * Blocks the order so that its later events follow this one to the dead-letter topic.
   * The first block's time and reason are kept; `orders.state` is left as it is (the
   * replay clears `blocked_at`).
   */
  async blockOrder(tx: Sql, orderId: string, reason: string): Promise<void> {
    await tx.execute(
      `INSERT INTO orders (order_id, blocked_at, blocked_reason) VALUES ($1, now(), $2)
       ON CONFLICT (order_id) DO UPDATE
          SET blocked_at = COALESCE(orders.blocked_at, EXCLUDED.blocked_at),
              blocked_reason = CASE WHEN orders.blocked_at IS NULL
                                    THEN EXCLUDED.blocked_reason ELSE orders.blocked_reason END,
              updated_at = now()`,
      [orderId, reason],
    );
  }
}
