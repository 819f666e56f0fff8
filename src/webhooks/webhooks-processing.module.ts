/**
 * The webhook inbox processor (issue 4 §2), started with the application.
 *
 *   const orders = OrdersModule.forRoot(…); const outbox = OutboxModule.forRoot(…);
 *   WebhooksProcessingModule.forRoot({ imports: [orders, outbox], options: { … } })
 *
 * Needs (global): DataSource, APP_CONFIG, APP_LOGGER, PAYFLOW_API. From `imports`:
 * IN_DOUBT_RESOLVER (the port in src/payments; OrdersModule provides it), and optionally OutboxRelay
 * (OutboxModule: woken after events commit). The receiver's InboxSignal (WebhookInboxModule,
 * imported here) wakes the processor; it also polls every second.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { OutboxRelay } from '../outbox/outbox.relay.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { StatusSyncModule } from '../payments/status-sync/status-sync.module.js';
import { InboxSignal } from './inbox/inbox.signal.js';
import { WebhookInboxModule } from './inbox/webhook-inbox.module.js';
import { INBOX_WAKEUP, type InboxWakeup } from './processing/inbox-wakeup.js';
import {
  STATUS_EVENTS_COMMITTED,
  WEBHOOK_PROCESSING_OPTIONS,
  WebhookInboxProcessor,
  type WebhookProcessingOptions,
} from './processing/webhook-inbox.processor.js';

export interface WebhooksProcessingModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly options?: WebhookProcessingOptions;
}

@Module({})
export class WebhooksProcessingModule {
  static forRoot(settings: WebhooksProcessingModuleOptions = {}): DynamicModule {
    return {
      module: WebhooksProcessingModule,
      imports: [
        StatusSyncModule,
        PaymentsPersistenceModule,
        WebhookInboxModule,
        ...(settings.imports ?? []),
      ],
      providers: [
        { provide: WEBHOOK_PROCESSING_OPTIONS, useValue: settings.options ?? {} },
        {
          provide: STATUS_EVENTS_COMMITTED,
          inject: [{ token: OutboxRelay, optional: true }],
          useFactory: (relay: OutboxRelay | undefined) => () => relay?.notify(),
        },
        {
          provide: INBOX_WAKEUP,
          inject: [InboxSignal],
          useFactory: (signal: InboxSignal): InboxWakeup => ({
            subscribe: (listener) => signal.onStored(() => listener()),
          }),
        },
        WebhookInboxProcessor,
      ],
      exports: [WebhookInboxProcessor],
    };
  }
}
