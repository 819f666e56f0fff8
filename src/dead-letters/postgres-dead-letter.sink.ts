/**
 * The DeadLetterSink on Postgres: in one (batched) transaction the dead_letters row, the
 * dead-letter message in the outbox (original key and value, CONTRACT §4 headers) and the
 * order's block. Idempotent per (topic, partition, offset): a second delivery of the same
 * dead letter finds the row and writes nothing.
 */
import { Inject, Injectable } from '@nestjs/common';
import { TransactionBatcher } from '../database/transaction-batcher.js';
import { buildDeadLetterMessage } from '../messaging/dead-letter-headers.js';
import { OutboxRepository } from '../outbox/outbox.repository.js';
import { DeadLetterRepository } from './dead-letter.repository.js';
import type { DeadLetter, DeadLetterOutcome, DeadLetterSink } from './dead-letter.sink.js';

export const DEAD_LETTER_TOPIC = Symbol('DEAD_LETTER_TOPIC');

@Injectable()
export class PostgresDeadLetterSink implements DeadLetterSink {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly outbox: OutboxRepository,
    private readonly repository: DeadLetterRepository,
    @Inject(DEAD_LETTER_TOPIC) private readonly topic: string,
  ) {}

  deadLetter(letter: DeadLetter): Promise<DeadLetterOutcome> {
    const message = buildDeadLetterMessage(letter, this.topic);
    const headers = message.headers ?? {};
    return this.batcher.run(async (tx): Promise<DeadLetterOutcome> => {
      if (!(await this.repository.insert(tx, letter, headers))) return 'already_stored';
      // Written with the other outbox rows of the batch, before its COMMIT.
      tx.defer(this.outbox, [message], (sql, messages) => this.outbox.add(sql, messages));
      if (letter.orderId !== null) {
        const { message: origin } = letter;
        await this.repository.blockOrder(
          tx,
          letter.orderId,
          `${letter.reason}: event ${letter.eventId ?? '(unknown id)'} at ${origin.topic}/${origin.partition}/${origin.offset}`,
        );
      }
      return 'stored';
    });
  }
}
