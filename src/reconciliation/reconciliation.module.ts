/**
 * The reconciliation poller (issue 4 §3), started with the application.
 *
 *   ReconciliationModule.forRoot({ outbox, options: { intervalMs, ratePerSecond } })
 *
 * Needs (global): DataSource, APP_CONFIG, APP_LOGGER, PAYFLOW_API. From `outbox`:
 * OutboxCommitted (the application's OutboxModule, or OutboxCommittedModule.withoutRelay()
 * in the CLI), called after a pass wrote events.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { OutboxImport } from '../outbox/outbox-committed.js';
import { StatusSyncModule } from '../payments/status-sync/status-sync.module.js';
import { UnexplainedEffectsModule } from '../payments/unexplained-effects/unexplained-effects.module.js';
import {
  RECONCILIATION_OPTIONS,
  ReconciliationPoller,
  type ReconciliationOptions,
} from './reconciliation.poller.js';

export interface ReconciliationModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The module that provides OutboxCommitted: the status events' wake-up of the relay. */
  readonly outbox: OutboxImport;
  readonly options?: ReconciliationOptions;
}

@Module({})
export class ReconciliationModule {
  static forRoot(settings: ReconciliationModuleOptions): DynamicModule {
    return {
      module: ReconciliationModule,
      imports: [
        StatusSyncModule,
        UnexplainedEffectsModule,
        settings.outbox,
        ...(settings.imports ?? []),
      ],
      providers: [
        { provide: RECONCILIATION_OPTIONS, useValue: settings.options ?? {} },
        ReconciliationPoller,
      ],
      exports: [ReconciliationPoller],
    };
  }
}
