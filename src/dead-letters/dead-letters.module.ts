/**
 * DEAD_LETTER_SINK on Postgres, for the order-events transport:
 *
 *   OrderEventsTransportModule.forRoot({ imports: [DeadLettersModule] })
 *
 * Needs DataSource (DatabaseModule) and APP_CONFIG (ConfigModule), both global.
 */
import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { TransactionBatcherModule } from '../database/transaction-batcher.js';
import { deadLetterTopicFor } from '../messaging/dead-letter-headers.js';
import { OutboxRepository } from '../outbox/outbox.repository.js';
import { DeadLetterRepository } from './dead-letter.repository.js';
import { DEAD_LETTER_SINK } from './dead-letter.sink.js';
import { DEAD_LETTER_TOPIC, PostgresDeadLetterSink } from './postgres-dead-letter.sink.js';

@Module({
  imports: [TransactionBatcherModule],
  providers: [
    OutboxRepository,
    DeadLetterRepository,
    {
      provide: DEAD_LETTER_TOPIC,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => deadLetterTopicFor(config.TOPIC_ORDERS),
    },
    PostgresDeadLetterSink,
    { provide: DEAD_LETTER_SINK, useExisting: PostgresDeadLetterSink },
  ],
  exports: [DEAD_LETTER_SINK, PostgresDeadLetterSink],
})
export class DeadLettersModule {}
