/**
 * The complete step of the exactly-once protocol (protocol/attempt-protocol.ts), as a
 * TransactionBatcher unit: the command's state changes (`spec.complete`, which may defer
 * its writes to the batch), the attempt `succeeded` with its event processed, and the
 * status events into the outbox. The attempts and the outbox rows of every unit of a batch
 * are written by one statement each, just before the batch's COMMIT: N orders, one commit.
 */
import type { AppLogger } from '../../logging/logger.js';
import type { Sql } from '../../database/database.js';
import type { BatchSql } from '../../database/transaction-batcher.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { OutboxWriter } from '../../outbox/outbox-writer.js';
import { AttemptSettledMeanwhileError } from './attempt.errors.js';
import type {
  CommandAttemptRepository,
  FinishedAttempt,
} from './attempts/command-attempt.repository.js';
import type { CommandSpec } from './command-spec.js';
import type { OrderCommand } from './order-command.js';

/** A command whose attempt is started: what its call, and the record of its outcome, need. */
export interface StartedAttempt<T extends OrderEventType, S, R> {
  readonly command: OrderCommand<T>;
  readonly spec: CommandSpec<T, S, R>;
  readonly state: S;
  readonly attemptId: string;
  readonly paymentId: string | null;
}

export class AttemptComplete {
  /** Key of the batch-wide write of finished attempts. */
  private readonly finishKey = {};

  constructor(
    private readonly attempts: CommandAttemptRepository,
    private readonly outbox: OutboxWriter,
    private readonly logger: AppLogger,
  ) {}

  /** The unit that records `result` of the attempt's call (a unit may run twice). */
  unit<T extends OrderEventType, S, R>(
    { command, spec, state, attemptId, paymentId }: StartedAttempt<T, S, R>,
    result: R,
  ): (tx: BatchSql) => Promise<void> {
    return async (tx) => {
      const events = await spec.complete(tx, { command, state, result, paymentId });
      this.deferFinish(tx, command, spec.type, attemptId);
      this.outbox.defer(tx, events, undefined, command.trace.headers());
    };
  }

  /** The attempt succeeded and the event is processed: written with the batch's others. */
  private deferFinish(tx: BatchSql, command: OrderCommand, type: string, attemptId: string): void {
    const { event, source } = command;
    const row: FinishedAttempt = {
      attemptId,
      eventId: event.eventId,
      orderId: event.orderId,
      type,
      topic: source.topic,
      partition: source.partition,
      offset: source.offset,
      readAt: source.readAt,
    };
    tx.defer(this.finishKey, [row], (sql, rows) => this.finishAll(sql, rows));
  }

  private async finishAll(tx: Sql, rows: readonly FinishedAttempt[]): Promise<void> {
    const finished = await this.attempts.finish(tx, rows);
    if (finished !== rows.length) {
      // Rare: resolveInDoubt settled one of them. The whole batch is retried; that event
      // then finds its attempt resolved and does nothing.
      this.logger.warn({ expected: rows.length, finished }, 'attempts settled meanwhile');
      throw new AttemptSettledMeanwhileError(rows.length - finished);
    }
  }
}
