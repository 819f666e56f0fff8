/**
 * The worker as one Nest application: HTTP (the webhook receiver on the public listener;
 * health and metrics, ManagementModule, on the management listener) plus the inbound-events
 * transport, over one database, one Payflow client and one producer.
 */
import {
  Inject,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import type { ConsoleOverrides } from './console/console.options.js';
import { LoggerModule } from './logging/logger.module.js';
import type { AppLogger } from './logging/logger.js';
import { DatabaseModule } from './database/database.module.js';
import { TransactionBatcher } from './database/transaction-batcher.js';
import { DeadLettersModule } from './dead-letters/dead-letters.module.js';
import { ManagementModule } from './management/management.module.js';
import type { KafkaConsumerOptions } from './messaging/kafka/kafka.consumer.js';
import type { KafkaProducerOptions } from './messaging/kafka/kafka.producer.js';
import { MessagingModule, InboundEventsTransportModule } from './messaging/messaging.module.js';
import type { InboundEventsOverrides } from './messaging/kafka/inbound-events.wiring.js';
import { MetricsModule } from './management/metrics/metrics.module.js';
import { MetricsService } from './management/metrics/metrics.service.js';
import { OrdersModule, type OrdersOptionOverrides } from './orders/orders.module.js';
import { OutboxCommitted } from './outbox/outbox-committed.js';
import { OutboxModule } from './outbox/outbox.module.js';
import type { OutboxRelayOptions } from './outbox/outbox.relay.js';
import { PayflowModule, payflowClientOptionsFromConfig } from './payflow/payflow.module.js';
import { PrivacyModule } from './privacy/privacy.module.js';
import { ReconciliationModule } from './reconciliation/reconciliation.module.js';
import type { ReconciliationOptions } from './reconciliation/reconciliation.poller.js';
import { SETTLEMENT_FORMATS } from './payflow/wire/payflow.schemas.js';
import { SettlementsModule } from './settlements/settlements.module.js';
import type { SettlementsOptions } from './settlements/settlements.options.js';
import type { WebhookProcessingOptions } from './webhooks/processing/webhook-processing.options.js';
import { WebhooksProcessingModule } from './webhooks/webhooks-processing.module.js';
import { WebhooksReceiverModule } from './webhooks/webhooks-receiver.module.js';
import type { PayflowClientOptions } from './payflow/payflow.types.js';
import { TracingModule } from './tracing/tracing.module.js';
import type { StartedTracing } from './tracing/tracing.setup.js';

/** Settings that are not environment variables: tests and benchmarks tune these. */
export interface WorkerOverrides {
  readonly kafkaConsumer?: Partial<KafkaConsumerOptions>;
  /** E.g. `{ idempotent: false }` for librdkafka's mock cluster (the demo); real Kafka keeps the default. */
  readonly kafkaProducer?: KafkaProducerOptions;
  readonly transport?: InboundEventsOverrides['transport'];
  readonly orders?: OrdersOptionOverrides;
  readonly relay?: OutboxRelayOptions;
  readonly payflow?: Partial<PayflowClientOptions>;
  readonly webhookProcessing?: WebhookProcessingOptions;
  readonly reconciliation?: ReconciliationOptions;
  readonly settlements?: Partial<SettlementsOptions>;
  /** Tracing of the test's own (e.g. an SDK exporting to memory) instead of the config's. */
  readonly tracing?: StartedTracing;
  /** The console's session and sign-in limits (tests shorten them). */
  readonly console?: ConsoleOverrides;
}

/**
 * Wakes the outbox relay (OutboxCommitted) whenever a batch of the TransactionBatcher (the
 * order pipeline, dead letters, supersede steps: their outbox rows) commits, and counts the
 * batch's size (group commit at work).
 */
@Module({})
class PipelineWiringModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(TransactionBatcher) private readonly batcher: TransactionBatcher,
    @Inject(OutboxCommitted) private readonly outboxCommitted: OutboxCommitted,
    @Inject(MetricsService) private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.outboxCommitted.afterEachCommitOf(this.batcher, (units) =>
      this.metrics.batchCommitted(units),
    );
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
  }
}

@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: AppLogger,
    overrides: WorkerOverrides = {},
  ): DynamicModule {
    const orders = OrdersModule.forRoot(overrides.orders ?? {});
    // Settlement events have a lane of their own: a big night never delays a status event.
    const outbox = OutboxModule.forRoot({
      relay: { bulkTopics: [config.TOPIC_SETTLEMENTS], ...overrides.relay },
    });
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logger),
        TracingModule.forRoot(config, overrides.tracing),
        DatabaseModule,
        MetricsModule,
        ManagementModule,
        ConsoleModule.forRoot(config, outbox, overrides.console),
        PayflowModule.forRootAsync({
          isGlobal: true,
          inject: [MetricsService],
          useFactory: (metrics: MetricsService) => ({
            options: payflowClientOptionsFromConfig(config, {
              onCall: (call) =>
                metrics.payflowCalls.observe(
                  { endpoint: call.endpoint, status: String(call.status ?? 0) },
                  call.durationMs / 1000,
                ),
              ...overrides.payflow,
            }),
            logger,
          }),
        }),
        MessagingModule.forRoot(overrides.kafkaProducer ?? {}),
        orders,
        InboundEventsTransportModule.forRoot({
          imports: [DeadLettersModule],
          overrides: {
            ...(overrides.kafkaConsumer ? { consumer: overrides.kafkaConsumer } : {}),
            ...(overrides.transport ? { transport: overrides.transport } : {}),
          },
        }),
        outbox,
        { module: PipelineWiringModule, imports: [orders, outbox] },
        WebhooksReceiverModule.forRoot({
          rateLimitPerSecond: config.WEBHOOK_RATE_LIMIT_PER_SECOND,
          rateLimitBurst: config.WEBHOOK_RATE_LIMIT_BURST,
          authCacheSize: config.WEBHOOK_AUTH_CACHE_SIZE,
          inboxRetentionMs: config.WEBHOOK_INBOX_RETENTION,
        }),
        WebhooksProcessingModule.forRoot({
          outbox,
          imports: [orders],
          options: {
            pollIntervalMs: config.WEBHOOK_PROCESSING_POLL_INTERVAL,
            ...overrides.webhookProcessing,
          },
        }),
        ReconciliationModule.forRoot({
          outbox,
          options: {
            autoStart: config.RECONCILE_ENABLED,
            intervalMs: config.RECONCILE_INTERVAL,
            ratePerSecond: config.RECONCILE_RATE_PER_SECOND,
            concurrency: config.RECONCILE_CONCURRENCY,
            ...overrides.reconciliation,
          },
        }),
        SettlementsModule.forRoot({
          outbox,
          options: {
            topic: config.TOPIC_SETTLEMENTS,
            cron: config.SETTLEMENT_CRON,
            timeZone: config.SETTLEMENT_TIMEZONE,
            formats: SETTLEMENT_FORMATS,
            autoStart: config.SETTLEMENT_ENABLED,
            recheckNights: config.SETTLEMENT_RECHECK_NIGHTS,
            ...overrides.settlements,
          },
        }),
        // RETENTION_PERSONAL_DATA: the daily erasure of orders untouched for longer.
        PrivacyModule.forRoot({
          retention: {
            retentionMs: config.RETENTION_PERSONAL_DATA,
            timeZone: config.SETTLEMENT_TIMEZONE,
          },
        }),
      ],
    };
  }
}
