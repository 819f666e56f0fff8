/**
 * The repositories of the payment tables (payments, installments, documents, refunds,
 * payment_status_history), for the features that read or write them.
 */
import { Module } from '@nestjs/common';
import { DocumentRepository } from './document.repository.js';
import { InstallmentRepository } from './installment.repository.js';
import { PaymentStatusHistoryRepository } from './payment-status-history.repository.js';
import { PaymentRepository } from './payment.repository.js';
import { RefundRepository } from './refund.repository.js';

const REPOSITORIES = [
  PaymentRepository,
  InstallmentRepository,
  DocumentRepository,
  RefundRepository,
  PaymentStatusHistoryRepository,
];

@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class PaymentsPersistenceModule {}
