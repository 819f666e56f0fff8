import { Injectable } from '@nestjs/common';
import type { Sql } from '../../database/database.js';
import { OrderRepository } from '../../orders/order.repository.js';
import type { ReplayFilter } from './replay-filter.js';

/** A dead letter as the replay plans it (no key or value: they may be large). */
export interface DeadLetterSummary {
  readonly id: string;
  readonly orderId: string | null;
  readonly eventId: string | null;
  readonly eventType: string | null;
  readonly reason: string;
  readonly error: string;
  readonly attempts: number;
  readonly failedAt: Date;
}

/** A dead letter with what is needed to publish it again. */
export interface ReplayableDeadLetter extends DeadLetterSummary {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, unknown>>;
}

const SUMMARY_COLUMNS = `id::text AS id, order_id AS "orderId", event_id AS "eventId",
  event_type AS "eventType", reason, error, attempts, failed_at AS "failedAt"`;

/**
 * The replay's reads and writes of `dead_letters`; the order's lock and unblock go to
 * OrderRepository, the only owner of the `orders` table's SQL.
 */
@Injectable()
export class DeadLetterReplayRepository {
  constructor(private readonly orders: OrderRepository = new OrderRepository()) {}

  /**
   * Every unreplayed dead letter of the orders that qualify (one of their unreplayed
   * letters matches every filter), plus the matching key-less letters when no order is
   * named; in id order, which is the order they failed in.
   */
  async selectForReplay(sql: Sql, filter: ReplayFilter): Promise<DeadLetterSummary[]> {
    return sql.query<DeadLetterSummary>(
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
   * Locks the order row (the dead-letter sink updates it when it parks another event, so
   * a letter written meanwhile is either seen here or blocks the order again after us),
   * then the order's unreplayed letters, in id order.
   */
  async lockOrderLetters(tx: Sql, orderId: string): Promise<ReplayableDeadLetter[]> {
    await this.orders.lock(tx, orderId);
    return tx.query<ReplayableDeadLetter>(
      // d.id, not id: the output column "id" is text, and "10" sorts before "9".
      `SELECT ${SUMMARY_COLUMNS}, key, value, headers FROM dead_letters d
        WHERE d.order_id = $1 AND d.replayed_at IS NULL
        ORDER BY d.id FOR UPDATE`,
      [orderId],
    );
  }

  /** One key-less letter, if it is still unreplayed. */
  async lockLetter(tx: Sql, id: string): Promise<ReplayableDeadLetter[]> {
    return tx.query<ReplayableDeadLetter>(
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

  /** Lets the order's next events take effect again. */
  unblockOrder(tx: Sql, orderId: string): Promise<void> {
    return this.orders.unblock(tx, orderId);
  }
}
