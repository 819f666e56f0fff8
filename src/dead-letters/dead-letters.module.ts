/**
 * DEAD_LETTER_SINK on Postgres, for the inbound-events transport:
 *
 *   InboundEventsTransportModule.forRoot({ imports: [DeadLettersModule] })
 *
 * and, with it, SUPERSEDE_STEP for the orders consumer (SupersedeStepModule, global): where
 * the dead letters are, an event may supersede one of them (CONTRACT §10).
 *
 * Needs DataSource (DatabaseModule) and APP_CONFIG (ConfigModule), both global.
 */
import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { TransactionBatcherModule } from '../database/transaction-batcher.js';
import { OutboxWriterModule } from '../outbox/outbox-writer.module.js';
import { OrderPersistenceModule } from '../orders/order-persistence.module.js';
import { DeadLetterEntity } from './dead-letter.entity.js';
import { DeadLetterRepository } from './dead-letter.repository.js';
import { DEAD_LETTER_SINK } from '../messaging/dead-letter.port.js';
import { PostgresDeadLetterSink } from './postgres-dead-letter.sink.js';
import { SupersedeStepModule } from './supersede/supersede-step.module.js';

export const DEAD_LETTER_ENTITIES = [DeadLetterEntity];

@Module({
  imports: [
    DatabaseModule.forFeature(DEAD_LETTER_ENTITIES),
    TransactionBatcherModule,
    OutboxWriterModule,
    // Stateless: the sink blocks the order through the owner of the orders table's SQL.
    OrderPersistenceModule,
    SupersedeStepModule,
  ],
  providers: [
    DeadLetterRepository,
    PostgresDeadLetterSink,
    { provide: DEAD_LETTER_SINK, useExisting: PostgresDeadLetterSink },
  ],
  exports: [DEAD_LETTER_SINK, PostgresDeadLetterSink],
})
export class DeadLettersModule {}
