/**
 * The status sync (fetch, compare, apply, emit), shared by the webhook processor and the
 * reconciliation poller. Needs (global): DataSource (DatabaseModule), APP_CONFIG (the
 * topics of OutboxWriter), PAYFLOW_API (PayflowModule with isGlobal).
 */
import { Module } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { PaymentsPersistenceModule } from '../payments-persistence.module.js';
import { PaymentStatusSync } from './payment-status-sync.js';

@Module({
  imports: [OutboxWriterModule, PaymentsPersistenceModule],
  providers: [Database, PaymentStatusSync],
  exports: [PaymentStatusSync, Database],
})
export class StatusSyncModule {}
