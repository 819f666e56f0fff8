/**
 * What a replay does inside its transaction, shared by `dlq replay` (and the replays of
 * `in-doubt resolve`) and by a discard, which republishes the events parked behind the
 * discarded one exactly as a replay of the order would:
 *
 *   the order's waiting letters, oldest first → the outbox (for TOPIC_ORDERS, with their
 *   original key, value and headers) → marked replayed → the order unblocked
 *
 * The caller locks the order row first (OrderRepository.lock): the sink updates it when it
 * parks another event, so a letter written meanwhile is either seen here or blocks the
 * order again afterwards. Unblocking in the same transaction matters: a republished event
 * must find its order unblocked, or it would be dead-lettered again.
 */
import type { Sql } from '../../database/database.js';
import { DLQ_HEADER_PREFIX } from '../../messaging/dead-letter-headers.js';
import type { OutboundMessage } from '../../messaging/messaging.ports.js';
import type { OrderRepository } from '../../orders/order.repository.js';
import type { OutboxRepository } from '../../outbox/outbox.repository.js';
import type { DeadLetterRepository, ReplayableDeadLetter } from '../dead-letter.repository.js';
import { ErasedLetterReplayError } from './erased-letter.error.js';

export class OrderRequeue {
  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly outbox: OutboxRepository,
    private readonly orders: OrderRepository,
    /** Where the events go again: TOPIC_ORDERS. */
    private readonly topic: string,
  ) {}

  /** The order's waiting letters republished in order, and the order unblocked. */
  async order(tx: Sql, orderId: string): Promise<ReplayableDeadLetter[]> {
    const locked = await this.letters.lockOrderLetters(tx, orderId);
    await this.republish(tx, locked);
    await this.orders.unblock(tx, orderId);
    return locked;
  }

  /** One key-less letter (it holds no order back), if it still waits. */
  async keyless(tx: Sql, id: string): Promise<ReplayableDeadLetter[]> {
    const locked = await this.letters.lockLetter(tx, id);
    await this.republish(tx, locked);
    return locked;
  }

  private async republish(tx: Sql, letters: readonly ReplayableDeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    // An erased letter no longer holds the ERP's event: refused, and the transaction with it.
    const erased = letters.find((letter) => letter.erasedAt !== null);
    if (erased !== undefined) throw new ErasedLetterReplayError(erased.orderId, erased.id);
    await this.outbox.add(
      tx,
      letters.map((letter) => this.message(letter)),
    );
    await this.letters.markReplayed(
      tx,
      letters.map((letter) => letter.id),
    );
  }

  private message(letter: ReplayableDeadLetter): OutboundMessage {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(letter.headers)) {
      // The stored headers are the dead-letter message's: the original ones plus x-dlq-*.
      if (name.toLowerCase().startsWith(DLQ_HEADER_PREFIX) || value === null || value === undefined)
        continue;
      headers[name] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return {
      topic: this.topic,
      key: letter.key,
      // A dead letter without a value (a tombstone) goes back as an empty value.
      value: letter.value ?? Buffer.alloc(0),
      headers,
    };
  }
}
