/**
 * The discard of dead letters (DeadLetterDiscardService) for every door that asks for one:
 * the CLI's `dlq discard` and the console's discard action.
 *
 *   DeadLetterDiscardModule.forRoot({ imports: [<a module exporting DEAD_LETTER_REPLAY_FLUSHER>] })
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (the topics: TOPIC_ORDERS, where
 * the parked events go back to, and the status topic of `event.discarded`). From `imports`:
 * DEAD_LETTER_REPLAY_FLUSHER, the outbox flusher a replay publishes with (the application's
 * OutboxRelay, or the CLI's): a discard republishes the parked events as a replay does.
 */
import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { Database } from '../../database/database.js';
import { OrderPersistenceModule } from '../../orders/order-persistence.module.js';
import { OrderRepository } from '../../orders/order.repository.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import type { OutboxFlusher } from '../../outbox/relay.options.js';
import { DeadLetterRepository } from '../dead-letter.repository.js';
import { OrderRequeue } from '../replay/order-requeue.js';
import {
  DEAD_LETTER_REPLAY_FLUSHER,
  type DeadLetterReplayModuleOptions,
} from '../replay/dead-letter-replay.module.js';
import { DeadLetterDiscardService } from './dead-letter-discard.service.js';
import { DiscardWrites } from './discard-writes.js';

/** DiscardWrites over the given repositories: what a discard and a supersede share. */
export const DISCARD_WRITES_PROVIDER = {
  provide: DiscardWrites,
  inject: [DeadLetterRepository, OutboxRepository, OutboxWriter, OrderRepository, APP_CONFIG],
  useFactory: (
    letters: DeadLetterRepository,
    outbox: OutboxRepository,
    writer: OutboxWriter,
    orders: OrderRepository,
    config: Pick<AppConfig, 'TOPIC_ORDERS'>,
  ): DiscardWrites =>
    new DiscardWrites(
      letters,
      writer,
      new OrderRequeue(letters, outbox, orders, config.TOPIC_ORDERS),
    ),
};

@Module({})
export class DeadLetterDiscardModule {
  static forRoot(options: DeadLetterReplayModuleOptions = {}): DynamicModule {
    return {
      module: DeadLetterDiscardModule,
      imports: [OrderPersistenceModule, OutboxWriterModule, ...(options.imports ?? [])],
      providers: [
        Database,
        DeadLetterRepository,
        OutboxRepository,
        DISCARD_WRITES_PROVIDER,
        {
          provide: DeadLetterDiscardService,
          inject: [
            Database,
            DiscardWrites,
            DeadLetterRepository,
            OrderRepository,
            DEAD_LETTER_REPLAY_FLUSHER,
          ],
          useFactory: (
            database: Database,
            writes: DiscardWrites,
            letters: DeadLetterRepository,
            orders: OrderRepository,
            flusher: OutboxFlusher,
          ) => new DeadLetterDiscardService(database, writes, letters, orders, flusher),
        },
      ],
      exports: [DeadLetterDiscardService],
    };
  }
}
