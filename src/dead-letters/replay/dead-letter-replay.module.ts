/**
 * The replay of dead letters (DeadLetterReplayService), for every door that asks for one:
 * the CLI's `dlq replay` and `in-doubt resolve` now, the operator console inside the
 * worker later.
 *
 *   DeadLetterReplayModule.forRoot({ imports: [<a module exporting DEAD_LETTER_REPLAY_FLUSHER>] })
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (TOPIC_ORDERS, where the letters
 * go back to). From `imports`: DEAD_LETTER_REPLAY_FLUSHER, the outbox flusher that publishes
 * what a replay wrote (the application's OutboxRelay, or the CLI's).
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { DatabaseModule } from '../../database/database.module.js';
import { Database } from '../../database/database.js';
import { OrderPersistenceModule } from '../../orders/order-persistence.module.js';
import { OrderRepository } from '../../orders/order.repository.js';
import type { OutboxFlusher } from '../../outbox/relay.options.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import { DeadLetterEntity } from '../dead-letter.entity.js';
import { DeadLetterRepository } from '../dead-letter.repository.js';
import { DeadLetterReplayService } from './dead-letter-replay.service.js';

/** Injection token of the OutboxFlusher a replay publishes its rows with. */
export const DEAD_LETTER_REPLAY_FLUSHER = Symbol('DEAD_LETTER_REPLAY_FLUSHER');

export type DeadLetterReplayModuleOptions = Pick<ModuleMetadata, 'imports'>;

@Module({})
export class DeadLetterReplayModule {
  static forRoot(options: DeadLetterReplayModuleOptions = {}): DynamicModule {
    return {
      module: DeadLetterReplayModule,
      imports: [
        DatabaseModule.forFeature([DeadLetterEntity]),
        OrderPersistenceModule,
        ...(options.imports ?? []),
      ],
      providers: [
        Database,
        DeadLetterRepository,
        OutboxRepository,
        {
          provide: DeadLetterReplayService,
          inject: [
            Database,
            DeadLetterRepository,
            OutboxRepository,
            DEAD_LETTER_REPLAY_FLUSHER,
            APP_CONFIG,
            OrderRepository,
          ],
          useFactory: (
            database: Database,
            letters: DeadLetterRepository,
            outbox: OutboxRepository,
            flusher: OutboxFlusher,
            config: Pick<AppConfig, 'TOPIC_ORDERS'>,
            orders: OrderRepository,
          ) =>
            new DeadLetterReplayService(
              database,
              letters,
              outbox,
              flusher,
              { topic: config.TOPIC_ORDERS },
              orders,
            ),
        },
      ],
      exports: [DeadLetterReplayService],
    };
  }
}
