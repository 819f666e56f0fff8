import { Global, Module } from '@nestjs/common';
import { ORDER_EVENTS_METRICS } from '../messaging/messaging.module.js';
import { OUTBOX_RELAY_METRICS } from '../outbox/outbox.relay.js';
import { SETTLEMENT_METRICS } from '../settlements/nightly/nightly-settlements.cron.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    MetricsService,
    { provide: ORDER_EVENTS_METRICS, useExisting: MetricsService },
    { provide: OUTBOX_RELAY_METRICS, useExisting: MetricsService },
    { provide: SETTLEMENT_METRICS, useExisting: MetricsService },
  ],
  exports: [MetricsService, ORDER_EVENTS_METRICS, OUTBOX_RELAY_METRICS, SETTLEMENT_METRICS],
})
export class MetricsModule {}
