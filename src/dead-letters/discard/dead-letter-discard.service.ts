/**
 * `dlq discard EVENT_ID --reason TEXT [--by NAME]` and the console's discard (CONTRACT
 * §10): a person says an event's dead letter will never take effect. In one transaction
 * (the order locked, as a replay locks it), the letter is marked discarded with who, when
 * and why, `event.discarded` goes to the outbox, and the events parked behind it are
 * republished in order and the order unblocked (DiscardWrites). Then the order's outbox
 * bucket is published now, as `dlq replay` does.
 *
 * Refused, changing nothing (DiscardRefusedError): a letter `in_doubt` (a call that may have
 * taken effect takes a verdict: `in-doubt resolve`), and an event that is not dead-lettered
 * (unknown, taken effect, or replayed and on its way again). Idempotent: discarding again
 * says so and writes nothing (no second `event.discarded`).
 */
import type { Database } from '../../database/database.js';
import type { OrderRepository } from '../../orders/order.repository.js';
import { outboxBucket } from '../../outbox/outbox.repository.js';
import type { OutboxFlusher } from '../../outbox/relay.options.js';
import type { DeadLetterRepository, EventLetter } from '../dead-letter.repository.js';
import { decideDiscard, type DiscardRefusal } from './discard-decision.js';
import { DiscardNotPublishedError, DiscardRefusedError } from './discard.errors.js';
import type { DiscardEffect, DiscardWrites } from './discard-writes.js';

export interface DiscardCommand {
  readonly eventId: string;
  /** Why, one line (it is published in `event.discarded`: no personal data). */
  readonly reason: string;
  /** Who: `--by`, the OS user, or the console's signed-in operator. */
  readonly discardedBy: string;
}

export type DiscardOutcome =
  | { readonly kind: 'discarded'; readonly effect: DiscardEffect; readonly lines: string[] }
  | { readonly kind: 'already'; readonly letter: EventLetter; readonly lines: string[] };

export interface DeadLetterDiscardOptions {
  /** How long to wait for the order's messages to be published. Default 30 s. */
  readonly flushTimeoutMs?: number;
}

export class DeadLetterDiscardService {
  private readonly flushTimeoutMs: number;

  constructor(
    private readonly database: Database,
    private readonly writes: DiscardWrites,
    private readonly letters: DeadLetterRepository,
    private readonly orders: OrderRepository,
    private readonly flusher: OutboxFlusher,
    options: DeadLetterDiscardOptions = {},
  ) {
    this.flushTimeoutMs = options.flushTimeoutMs ?? 30_000;
  }

  async discard(command: DiscardCommand): Promise<DiscardOutcome> {
    const { eventId } = command;
    const done = await this.database.transaction(async (tx) => {
      // The order first, then its letters (the replay's order of locks: no deadlock).
      const orderId = (await this.writes.lettersOf(tx, eventId)).find(
        (letter) => letter.orderId !== null,
      )?.orderId;
      if (orderId !== undefined && orderId !== null) await this.orders.lock(tx, orderId);
      const letters = await this.writes.lettersOf(tx, eventId, { lock: true });
      const decision = decideDiscard(letters, await this.letters.tookEffect(tx, eventId));
      if (decision.kind !== 'discard') return decision;
      const effect = await this.writes.discard(tx, decision.letters, {
        eventId,
        by: command.discardedBy,
        reason: command.reason,
        supersededBy: null,
      });
      return { kind: 'discarded', effect } as const;
    });
    switch (done.kind) {
      case 'refuse':
        throw refusal(eventId, done.why, done.letter);
      case 'already':
        // A run cut short after its commit left rows in the outbox: publish them now.
        await this.publish(done.letter.orderId);
        return { kind: 'already', letter: done.letter, lines: [already(eventId, done.letter)] };
      case 'discarded':
        await this.publish(done.effect.letters[0]?.orderId ?? null);
        return { kind: 'discarded', effect: done.effect, lines: discarded(command, done.effect) };
    }
  }

  private async publish(orderId: string | null): Promise<void> {
    if (orderId === null) return;
    const flushed = await this.flusher.flush(this.flushTimeoutMs, {
      buckets: [outboxBucket(orderId)],
    });
    if (!flushed.drained) {
      throw new DiscardNotPublishedError(
        `the discard is recorded, but ${flushed.remaining} message(s) of order ${orderId} were ` +
          `not published within ${this.flushTimeoutMs} ms (is Kafka reachable?); they wait in ` +
          "the outbox and the worker's outbox relay publishes them, in order, when it can",
        { metadata: { orderId } },
      );
    }
  }
}

/** `event <id> (<type>) of order <order>`, with what is known. */
function named(eventId: string, letter: EventLetter | null): string {
  const type = letter?.eventType ?? null;
  const order = letter?.orderId ?? null;
  return `event ${eventId}${type === null ? '' : ` (${type})`}${order === null ? '' : ` of order ${order}`}`;
}

function refusal(
  eventId: string,
  why: DiscardRefusal,
  letter: EventLetter | null,
): DiscardRefusedError {
  const metadata = { eventId, orderId: letter?.orderId ?? null };
  const about = named(eventId, letter);
  switch (why) {
    case 'in_doubt':
      return new DiscardRefusedError(
        'DISCARD.IN_DOUBT',
        `refused: ${about} is in doubt: those take a verdict: in-doubt resolve ` +
          `${letter?.orderId ?? 'ORDER'}; nothing changed`,
        metadata,
      );
    case 'took_effect':
      return notDeadLettered(about, 'it took effect', metadata);
    case 'replayed':
      return notDeadLettered(
        about,
        'its dead letter was replayed and it may still take effect',
        metadata,
      );
    case 'unknown':
      return notDeadLettered(about, 'no dead letter has this event id', metadata);
  }
}

function notDeadLettered(
  about: string,
  why: string,
  metadata: { readonly eventId: string; readonly orderId: string | null },
): DiscardRefusedError {
  return new DiscardRefusedError(
    'DISCARD.NOT_DEAD_LETTERED',
    `refused: ${about} is not dead-lettered: ${why}; nothing changed`,
    metadata,
  );
}

function already(eventId: string, letter: EventLetter): string {
  const how =
    letter.supersededBy === null
      ? `by ${letter.discardedBy ?? '?'}`
      : `in favour of event ${letter.supersededBy} (by ${letter.discardedBy ?? '?'})`;
  return (
    `${capitalized(named(eventId, letter))}: already discarded ${how} at ` +
    `${letter.discardedAt?.toISOString() ?? '?'} (${letter.discardReason ?? ''}); nothing changed.`
  );
}

function discarded(command: DiscardCommand, effect: DiscardEffect): string[] {
  const [first] = effect.letters;
  const lines = [
    `${capitalized(named(command.eventId, first ?? null))} discarded by ${command.discardedBy}: ${command.reason}`,
    `  dead letter(s) ${effect.letters.map((letter) => `#${letter.id} (${letter.reason})`).join(', ')} will never be replayed` +
      (effect.statusEvent ? '; event.discarded queued.' : '; no order: no status event.'),
  ];
  if (effect.stillBlockedBy !== null) {
    const blocker = effect.stillBlockedBy;
    lines.push(
      `  order still blocked by event ${blocker.eventId ?? '(unknown id)'} (${blocker.reason}, ` +
        `dead letter #${blocker.id}); the events parked behind it wait for that one.`,
    );
  } else if ((first?.orderId ?? null) !== null) {
    const byReason = new Map<string, number>();
    for (const letter of effect.republished) {
      byReason.set(letter.reason, (byReason.get(letter.reason) ?? 0) + 1);
    }
    const reasons = [...byReason].map(([reason, n]) => `${reason} ${n}`).join(', ');
    lines.push(
      `  order unblocked; republished ${effect.republished.length} dead letter(s)` +
        (reasons === '' ? '.' : ` (${reasons}).`),
    );
  }
  return lines;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
