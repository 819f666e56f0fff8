/**
 * The reconciliation poller (issue 4 §3), started with the application.
 *
 *   ReconciliationModule.forRoot({ imports: [outbox], options: { intervalMs, ratePerSecond } })
 *
 * Needs (global): DataSource, APP_CONFIG, APP_LOGGER, PAYFLOW_API. From `imports`,
 * optionally OutboxRelay (woken after a pass wrote events).
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { relayWakeupProvider } from '../outbox/outbox.module.js';
import { StatusSyncModule } from '../payments/status-sync/status-sync.module.js';
import { UnexplainedEffectsModule } from '../payments/unexplained-effects/unexplained-effects.module.js';
import {
  RECONCILIATION_EVENTS_COMMITTED,
  RECONCILIATION_OPTIONS,
  ReconciliationPoller,
  type ReconciliationOptions,
} from './reconciliation.poller.js';

export interface ReconciliationModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly options?: ReconciliationOptions;
}

@Module({})
export class ReconciliationModule {
  static forRoot(settings: ReconciliationModuleOptions = {}): DynamicModule {
    return {
      module: ReconciliationModule,
      imports: [StatusSyncModule, UnexplainedEffectsModule, ...(settings.imports ?? [])],
      providers: [
        { provide: RECONCILIATION_OPTIONS, useValue: settings.options ?? {} },
        relayWakeupProvider(RECONCILIATION_EVENTS_COMMITTED),
        ReconciliationPoller,
      ],
      exports: [ReconciliationPoller],
    };
  }
}
