/**
 * The pull of one night (PullSettlementHandler), for every door that pulls: the nightly
 * run (SettlementsModule), the CLI's `settlements pull` and the operator console.
 *
 *   SettlementPullModule.forRoot({ outbox })
 *
 * `outbox` provides OutboxCommitted: the application's OutboxModule (a night whose events
 * were stored wakes its relay at once) or, in the CLI, OutboxCommittedModule.withoutRelay()
 * (its transaction NOTIFYs the workers' relays). Needs (global): DataSource (DatabaseModule), APP_CONFIG (the topics of OutboxWriter),
 * PAYFLOW_API; APP_LOGGER is optional.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import type { OutboxImport } from '../../outbox/outbox-committed.js';
import { PaymentsPersistenceModule } from '../../payments/payments-persistence.module.js';
import { SettlementReconcileModule } from '../reconcile/settlement-reconcile.module.js';
import { SettlementNightsModule } from '../settlement-nights.module.js';
import { PullSettlementHandler } from './pull-settlement.handler.js';

export interface SettlementPullModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The module that provides OutboxCommitted: the settlement events' wake-up of the relay. */
  readonly outbox: OutboxImport;
}

@Module({})
export class SettlementPullModule {
  static forRoot(settings: SettlementPullModuleOptions): DynamicModule {
    return {
      module: SettlementPullModule,
      imports: [
        SettlementNightsModule,
        SettlementReconcileModule,
        OutboxWriterModule,
        PaymentsPersistenceModule,
        settings.outbox,
        ...(settings.imports ?? []),
      ],
      providers: [Database, PullSettlementHandler],
      exports: [PullSettlementHandler, SettlementNightsModule, SettlementReconcileModule],
    };
  }
}
