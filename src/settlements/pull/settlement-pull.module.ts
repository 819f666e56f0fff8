/**
 * The pull of one night (PullSettlementHandler) without the nightly cron, for the doors
 * that pull by hand: the CLI's `settlements pull` now, the operator console later.
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (the topics of OutboxWriter),
 * PAYFLOW_API; APP_LOGGER and SETTLEMENT_NIGHT_COMMITTED are optional.
 */
import { Module } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { PaymentsPersistenceModule } from '../../payments/payments-persistence.module.js';
import { SettlementNightsModule } from '../settlement-nights.module.js';
import { PullSettlementHandler } from './pull-settlement.handler.js';

@Module({
  imports: [SettlementNightsModule, OutboxWriterModule, PaymentsPersistenceModule],
  providers: [Database, PullSettlementHandler],
  exports: [PullSettlementHandler, SettlementNightsModule],
})
export class SettlementPullModule {}
