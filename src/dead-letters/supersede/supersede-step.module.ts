/**
 * SUPERSEDE_STEP for the orders consumer, to the whole application (global): the orders
 * folder declares the port and cannot import the dead letters (a floor above), so the
 * implementation is provided here and DeadLettersModule, which the application already
 * imports for the transport's DEAD_LETTER_SINK, imports this module. An application
 * without it refuses every superseding event (NO_SUPERSEDE_STEP).
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG, APP_LOGGER.
 */
import { Global, Module } from '@nestjs/common';
import { TransactionBatcherModule } from '../../database/transaction-batcher.js';
import { OrderPersistenceModule } from '../../orders/order-persistence.module.js';
import { SUPERSEDE_STEP } from '../../orders/supersede/supersede.port.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import { DeadLetterRepository } from '../dead-letter.repository.js';
import { DISCARD_WRITES_PROVIDER } from '../discard/dead-letter-discard.module.js';
import { PostgresSupersedeStep } from './supersede.step.js';

@Global()
@Module({
  imports: [TransactionBatcherModule, OutboxWriterModule, OrderPersistenceModule],
  providers: [
    DeadLetterRepository,
    OutboxRepository,
    DISCARD_WRITES_PROVIDER,
    PostgresSupersedeStep,
    { provide: SUPERSEDE_STEP, useExisting: PostgresSupersedeStep },
  ],
  exports: [SUPERSEDE_STEP],
})
export class SupersedeStepModule {}
