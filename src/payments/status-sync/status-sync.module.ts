/**
 * The status sync (fetch, compare, apply, emit), shared by the webhook processor and the
 * reconciliation poller. Needs (global): DataSource (DatabaseModule), APP_CONFIG
 * (TOPIC_PAYMENT_STATUS), PAYFLOW_API (PayflowModule with isGlobal).
 */
import { Module } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { Database } from '../../database/database.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import {
  PaymentStatusSync,
  STATUS_SYNC_OPTIONS,
  type StatusSyncOptions,
} from './payment-status-sync.js';

@Module({
  providers: [
    Database,
    OutboxRepository,
    {
      provide: STATUS_SYNC_OPTIONS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): StatusSyncOptions => ({
        statusTopic: config.TOPIC_PAYMENT_STATUS,
      }),
    },
    PaymentStatusSync,
  ],
  exports: [PaymentStatusSync, Database],
})
export class StatusSyncModule {}
