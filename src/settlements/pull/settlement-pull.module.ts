/**
 * The pull of one night (PullSettlementHandler), for every door that pulls: the nightly
 * run (SettlementsModule), the CLI's `settlements pull` and the operator console.
 *
 *   SettlementPullModule.forRoot({ imports: [outbox] })
 *
 * `imports` may hold the application's OutboxModule: a night whose events were stored then
 * wakes its relay at once; without one (the CLI) the rows wait for a relay's poll.
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (the topics of OutboxWriter),
 * PAYFLOW_API; APP_LOGGER is optional.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { relayWakeupProvider } from '../../outbox/outbox.module.js';
import { PaymentsPersistenceModule } from '../../payments/payments-persistence.module.js';
import { SettlementNightsModule } from '../settlement-nights.module.js';
import { PullSettlementHandler, SETTLEMENT_NIGHT_COMMITTED } from './pull-settlement.handler.js';

@Module({})
export class SettlementPullModule {
  static forRoot(settings: Pick<ModuleMetadata, 'imports'> = {}): DynamicModule {
    return {
      module: SettlementPullModule,
      imports: [
        SettlementNightsModule,
        OutboxWriterModule,
        PaymentsPersistenceModule,
        ...(settings.imports ?? []),
      ],
      providers: [Database, PullSettlementHandler, relayWakeupProvider(SETTLEMENT_NIGHT_COMMITTED)],
      exports: [PullSettlementHandler, SettlementNightsModule],
    };
  }
}
