/**
 * What discarding an event's dead letter writes, in the caller's transaction, shared by the
 * two ways a letter is discarded: a person (`dlq discard`, the console) and an ERP event
 * that `supersedes` it (the supersede step, before that event's handler runs).
 *
 *   the event's waiting letters marked discarded (who, when, why, superseded by)
 *   → one `event.discarded` status event through the outbox (when the letter has an order)
 *   → unless an older letter of the order still waits (it keeps the order blocked), the
 *     letters parked behind it republished in order and the order unblocked (OrderRequeue,
 *     exactly what `dlq replay --order` does)
 *
 * One transaction, so a crash leaves either none of it or all of it: never a discarded
 * letter whose parked events stay parked, nor an order unblocked without them queued. The
 * caller locks the order row first (OrderRepository.lock), as the replay does.
 */
import type { Sql } from '../../database/database.js';
import type { EventTrace } from '../../events/event-message.js';
import type { TypedOutboundEvent } from '../../events/outbound-events.js';
import type { OutboxWriter } from '../../outbox/outbox-writer.js';
import type {
  DeadLetterRepository,
  DeadLetterSummary,
  EventLetter,
  LetterDiscard,
  ReplayableDeadLetter,
} from '../dead-letter.repository.js';
import { CommandAttemptRepository } from '../../orders/engine/attempts/command-attempt.repository.js';
import { identityOfValue } from '../letter-identity.js';
import type { OrderRequeue } from '../replay/order-requeue.js';

/** Who discards, why, and where the status event goes. */
export interface DiscardRequest extends LetterDiscard {
  /** The organization for `event.discarded`; the order's when not given (or null). */
  readonly organizationId?: string | null;
  readonly trace?: EventTrace;
}

/** What a discard did. */
export interface DiscardEffect {
  /** The letters marked discarded. */
  readonly letters: readonly EventLetter[];
  /** Whether `event.discarded` was written (a letter without an order has no key for it). */
  readonly statusEvent: boolean;
  /** The order's parked letters republished, in order (none when it stays blocked). */
  readonly republished: readonly ReplayableDeadLetter[];
  /** An older letter of the order that still waits: the order stays blocked by it. */
  readonly stillBlockedBy: DeadLetterSummary | null;
}

export class DiscardWrites {
  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly outbox: OutboxWriter,
    private readonly requeue: OrderRequeue,
  ) {}

  /**
   * The event's letters, oldest first (locked with `lock`). A letter stored without an
   * event id counts only when its value names this one.
   */
  async lettersOf(
    sql: Sql,
    eventId: string,
    options: { readonly orderId?: string; readonly lock?: boolean } = {},
  ): Promise<EventLetter[]> {
    const rows = await this.letters.lettersOfEvent(sql, eventId, options);
    return rows.flatMap(({ value, ...letter }) => {
      if (letter.eventId !== null) return [letter];
      const named = identityOfValue(value);
      if (named?.eventId !== eventId) return [];
      return [{ ...letter, eventId, eventType: letter.eventType ?? named.eventType }];
    });
  }

  /** Discards `waiting` (letters of one event that wait, oldest first), as described above. */
  async discard(
    tx: Sql,
    waiting: readonly EventLetter[],
    request: DiscardRequest,
  ): Promise<DiscardEffect> {
    const [first] = waiting;
    if (first === undefined) throw new Error('a discard without a letter');
    await this.letters.markDiscarded(
      tx,
      waiting.map((letter) => letter.id),
      request,
    );
    const { orderId } = first;
    if (orderId === null) {
      return { letters: waiting, statusEvent: false, republished: [], stillBlockedBy: null };
    }
    // In the ledger too: a delivery of the event Kafka still makes is then a no-op.
    await CommandAttemptRepository.discard(tx, {
      eventId: request.eventId,
      orderId,
      command: first.eventType ?? 'unknown',
    });
    await this.outbox.append(tx, [discardedEvent(first, orderId, request)]);
    const stillBlockedBy = await this.letters.waitingBefore(tx, orderId, first.id);
    const republished = stillBlockedBy === null ? await this.requeue.order(tx, orderId) : [];
    return { letters: waiting, statusEvent: true, republished, stillBlockedBy };
  }
}

function discardedEvent(
  letter: EventLetter,
  orderId: string,
  request: DiscardRequest,
): TypedOutboundEvent<'event.discarded'> {
  return {
    type: 'event.discarded',
    organizationId: request.organizationId ?? letter.organizationId,
    orderId,
    paymentId: null,
    data: {
      eventId: request.eventId,
      eventType: letter.eventType,
      reason: request.reason,
      discardedBy: request.by,
      supersededBy: request.supersededBy,
    },
    ...(request.trace === undefined ? {} : { trace: request.trace }),
  };
}
