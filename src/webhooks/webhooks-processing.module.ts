/**
 * The webhook inbox processor (issue 4 §2), started with the application.
 *
 *   const orders = OrdersModule.forRoot(…); const outbox = OutboxModule.forRoot(…);
 *   WebhooksProcessingModule.forRoot({ outbox, imports: [orders], options: { … } })
 *
 * Needs (global): DataSource, APP_CONFIG, APP_LOGGER, PAYFLOW_API; optionally the metrics
 * Registry (the processor's and UnexplainedEffectsModule's counters). From `imports`:
 * IN_DOUBT_RESOLVER (the port in src/payments; OrdersModule provides it). From `outbox`:
 * OutboxCommitted (the application's OutboxModule, or OutboxCommittedModule.withoutRelay()),
 * called after a pass's status events committed. The receiver's InboxSignal (WebhookInboxModule,
 * imported here) wakes the processor of this process, and a throttled NOTIFY on
 * WEBHOOK_INBOX_CHANNEL those of the other replicas; it also polls
 * (WEBHOOK_PROCESSING_POLL_INTERVAL) for rows whose retry came due.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { Registry } from 'prom-client';
import { APP_LOGGER } from '../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { Database } from '../database/database.js';
import { ThrottledNotify } from '../database/throttled-notify.js';
import type { OutboxImport } from '../outbox/outbox-committed.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { StatusSyncModule } from '../payments/status-sync/status-sync.module.js';
import { UnexplainedEffectsModule } from '../payments/unexplained-effects/unexplained-effects.module.js';
import { InboxSignal } from './inbox/inbox.signal.js';
import { WebhookInboxModule } from './inbox/webhook-inbox.module.js';
import { INBOX_WAKEUP, type InboxWakeup } from './processing/inbox-wakeup.js';
import {
  NO_PROCESSING_METRICS,
  PromProcessingMetrics,
  WEBHOOK_PROCESSING_METRICS,
  type WebhookProcessingMetrics,
} from './processing/processing.metrics.js';
import { WebhookInboxProcessor } from './processing/webhook-inbox.processor.js';
import {
  WEBHOOK_INBOX_CHANNEL,
  WEBHOOK_PROCESSING_OPTIONS,
  type WebhookProcessingOptions,
} from './processing/webhook-processing.options.js';

export interface WebhooksProcessingModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The module that provides OutboxCommitted: the status events' wake-up of the relay. */
  readonly outbox: OutboxImport;
  readonly options?: WebhookProcessingOptions;
}

@Module({})
export class WebhooksProcessingModule {
  static forRoot(settings: WebhooksProcessingModuleOptions): DynamicModule {
    return {
      module: WebhooksProcessingModule,
      imports: [
        StatusSyncModule,
        PaymentsPersistenceModule,
        WebhookInboxModule,
        UnexplainedEffectsModule,
        settings.outbox,
        ...(settings.imports ?? []),
      ],
      providers: [
        { provide: WEBHOOK_PROCESSING_OPTIONS, useValue: settings.options ?? {} },
        {
          provide: INBOX_WAKEUP,
          inject: [InboxSignal, Database, { token: APP_LOGGER, optional: true }],
          useFactory: (
            signal: InboxSignal,
            database: Database,
            logger: AppLogger | undefined,
          ): InboxWakeup => ({
            subscribe: (listener) => {
              // This process's processor at once; the other replicas' through a NOTIFY
              // (they LISTEN on WEBHOOK_INBOX_CHANNEL), throttled to 10 a second.
              const others = new ThrottledNotify(
                database.sql,
                WEBHOOK_INBOX_CHANNEL,
                100,
                logger ?? silentLogger(),
              );
              const unsubscribe = signal.onStored(() => {
                listener();
                others.notify();
              });
              return () => {
                unsubscribe();
                others.stop();
              };
            },
          }),
        },
        {
          provide: WEBHOOK_PROCESSING_METRICS,
          inject: [{ token: Registry, optional: true }],
          useFactory: (registry: Registry | undefined): WebhookProcessingMetrics =>
            registry === undefined ? NO_PROCESSING_METRICS : new PromProcessingMetrics(registry),
        },
        WebhookInboxProcessor,
      ],
      exports: [WebhookInboxProcessor],
    };
  }
}
