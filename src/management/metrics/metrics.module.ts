import { Global, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { KAFKA_AUTHORIZATION_METRICS } from '../../messaging/security/kafka-authorization.js';
import { ORDER_EVENTS_METRICS } from '../../messaging/messaging.module.js';
import { PROBE_METRICS } from '../../orders/engine/probe-metrics.js';
import { OUTBOX_RELAY_METRICS } from '../../outbox/relay.options.js';
import { RECONCILIATION_METRICS } from '../../reconciliation/reconciliation.poller.js';
import { SETTLEMENT_METRICS } from '../../settlements/nightly/nightly-settlements.cron.js';
import { MetricsService } from './metrics.service.js';

/**
 * The worker's prom-client registry and the metric interfaces of every feature. The scrape
 * endpoint (MetricsController) is served by ManagementModule, on the management port.
 */
@Global()
@Module({
  providers: [
    MetricsService,
    { provide: ORDER_EVENTS_METRICS, useExisting: MetricsService },
    { provide: OUTBOX_RELAY_METRICS, useExisting: MetricsService },
    { provide: SETTLEMENT_METRICS, useExisting: MetricsService },
    { provide: RECONCILIATION_METRICS, useExisting: MetricsService },
    { provide: KAFKA_AUTHORIZATION_METRICS, useExisting: MetricsService },
    { provide: PROBE_METRICS, useExisting: MetricsService },
    // Features that register their own metrics (the webhook receiver) take the registry.
    {
      provide: Registry,
      inject: [MetricsService],
      useFactory: (metrics: MetricsService): Registry => metrics.registry,
    },
  ],
  exports: [
    MetricsService,
    ORDER_EVENTS_METRICS,
    OUTBOX_RELAY_METRICS,
    SETTLEMENT_METRICS,
    RECONCILIATION_METRICS,
    KAFKA_AUTHORIZATION_METRICS,
    PROBE_METRICS,
    Registry,
  ],
})
export class MetricsModule {}
