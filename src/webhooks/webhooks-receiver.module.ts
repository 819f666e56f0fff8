/**
 * The webhook receiver: `POST /webhooks/payflow/:token/:kind` on the application's HTTP
 * listener (fastify). Stores authenticated webhooks in the inbox (group commit) before
 * answering 2xx and signals `InboxSignal` (from WebhookInboxModule) after the commit; the
 * processor drains the inbox. Also prunes processed inbox rows past the retention.
 *
 * Needs from the application: DatabaseModule (global), LoggerModule (global), the fastify
 * adapter. Uses the application's prom-client `Registry` when one is provided (MetricsModule
 * does).
 *
 *   WebhooksReceiverModule.forRoot({ rateLimitPerSecond: 20, rateLimitBurst: 40 })
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { Registry } from 'prom-client';
import { TransactionBatcherModule } from '../database/transaction-batcher.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { WebhookInboxModule } from './inbox/webhook-inbox.module.js';
import { WebhookInboxPruner } from './inbox/webhook-inbox.pruner.js';
import { ReceiveWebhookHandler } from './receiver/receive-webhook.handler.js';
import {
  NO_RECEIVER_METRICS,
  PromReceiverMetrics,
  WEBHOOK_RECEIVER_METRICS,
  type WebhookReceiverMetrics,
} from './receiver/receiver.metrics.js';
import {
  WEBHOOK_RECEIVER_OPTIONS,
  resolveReceiverOptions,
  type WebhookReceiverOptions,
} from './receiver/receiver.options.js';
import { WebhookTokenDirectory } from './receiver/token-directory.js';
import { WebhookExceptionFilter } from './receiver/webhook-exception.filter.js';
import { WebhookHttpIntegration } from './receiver/webhook-http.integration.js';
import { WebhookReceiverController } from './receiver/webhook-receiver.controller.js';

@Module({})
export class WebhooksReceiverModule {
  static forRoot(options: WebhookReceiverOptions = {}): DynamicModule {
    return {
      module: WebhooksReceiverModule,
      imports: [TransactionBatcherModule, WebhookInboxModule, PaymentsPersistenceModule],
      controllers: [WebhookReceiverController],
      providers: [
        { provide: WEBHOOK_RECEIVER_OPTIONS, useValue: resolveReceiverOptions(options) },
        {
          provide: WEBHOOK_RECEIVER_METRICS,
          inject: [{ token: Registry, optional: true }],
          useFactory: (registry: Registry | undefined): WebhookReceiverMetrics =>
            registry === undefined ? NO_RECEIVER_METRICS : new PromReceiverMetrics(registry),
        },
        WebhookTokenDirectory,
        ReceiveWebhookHandler,
        WebhookExceptionFilter,
        WebhookHttpIntegration,
        WebhookInboxPruner,
      ],
      exports: [WebhookInboxModule, WebhookInboxPruner, WebhookTokenDirectory],
    };
  }
}
