/**
 * The DeadLetterSink on Postgres: in one (batched) transaction the dead_letters row, the
 * dead-letter message in the outbox (original key and value, CONTRACT §4 headers) and the
 * order's block. Idempotent per (topic, partition, offset): a second delivery of the same
 * dead letter finds the row and writes nothing.
 *
 * A message that could not be read as an event is stored with the event id its value still
 * names (letter-identity.ts), so that it can be discarded or superseded by that id.
 */
import { Injectable } from '@nestjs/common';
import { TransactionBatcher } from '../database/transaction-batcher.js';
import { DEAD_LETTER, OutboxWriter } from '../outbox/outbox-writer.js';
import { OrderRepository } from '../orders/order.repository.js';
import { buildDeadLetterHeaders } from '../messaging/dead-letter-headers.js';
import { DeadLetterRepository } from './dead-letter.repository.js';
import { identityOfValue } from './letter-identity.js';
import type {
  DeadLetter,
  DeadLetterOutcome,
  DeadLetterSink,
} from '../messaging/dead-letter.port.js';

@Injectable()
export class PostgresDeadLetterSink implements DeadLetterSink {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly outbox: OutboxWriter,
    private readonly repository: DeadLetterRepository,
    private readonly orders: OrderRepository,
  ) {}

  deadLetter(letter: DeadLetter): Promise<DeadLetterOutcome> {
    const headers = buildDeadLetterHeaders(letter);
    const stored = withIdentity(letter);
    return this.batcher.run(async (tx): Promise<DeadLetterOutcome> => {
      if (!(await this.repository.insert(tx, stored, headers))) return 'already_stored';
      // Written with the other outbox rows of the batch, before its COMMIT.
      this.outbox.defer(tx, [{ type: DEAD_LETTER, letter }]);
      if (letter.orderId !== null) {
        const { message: origin } = letter;
        await this.orders.block(
          tx,
          letter.orderId,
          `${letter.reason}: event ${stored.eventId ?? '(unknown id)'} at ${origin.topic}/${origin.partition}/${origin.offset}`,
        );
      }
      return 'stored';
    });
  }
}

/** The letter with the event id (and type) its value names, when it could not be decoded. */
function withIdentity(letter: DeadLetter): DeadLetter {
  if (letter.eventId !== null) return letter;
  const identity = identityOfValue(letter.message.value);
  return identity === null
    ? letter
    : { ...letter, eventId: identity.eventId, eventType: identity.eventType };
}
