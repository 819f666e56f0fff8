/**
 * The repositories of the payment tables (payments, installments, documents, refunds,
 * payment_status_history), for the features that read or write them, and the tables'
 * entities; and the payment aggregate's store, through which commands change a payment.
 */
import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { DocumentEntity } from './document.entity.js';
import { DocumentRepository } from './document.repository.js';
import { InstallmentEntity } from './installment.entity.js';
import { InstallmentRepository } from './installment.repository.js';
import { PaymentStatusHistoryEntity } from './payment-status-history.entity.js';
import { PaymentStatusHistoryRepository } from './payment-status-history.repository.js';
import { PaymentAggregateStore } from './payment-aggregate.store.js';
import { PaymentEntity } from './payment.entity.js';
import { PaymentRepository } from './payment.repository.js';
import { RefundEntity } from './refund.entity.js';
import { RefundRepository } from './refund.repository.js';

export const PAYMENT_ENTITIES = [
  PaymentEntity,
  InstallmentEntity,
  DocumentEntity,
  RefundEntity,
  PaymentStatusHistoryEntity,
];

const REPOSITORIES = [
  PaymentRepository,
  InstallmentRepository,
  DocumentRepository,
  RefundRepository,
  PaymentStatusHistoryRepository,
  // Not a table's: the payment aggregate's loader and writer over the repositories above.
  PaymentAggregateStore,
];

@Module({
  imports: [DatabaseModule.forFeature(PAYMENT_ENTITIES)],
  providers: REPOSITORIES,
  exports: REPOSITORIES,
})
export class PaymentsPersistenceModule {}
