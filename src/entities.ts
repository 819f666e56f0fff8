import { DeadLetterEntity } from './dead-letters/dead-letter.entity.js';
import { CommandAttemptEntity } from './orders/command-attempt.entity.js';
import { InDoubtVerdictEntity } from './orders/in-doubt/in-doubt-verdict.entity.js';
import { OrderEntity } from './orders/order.entity.js';
import { ProcessedEventEntity } from './orders/processed-event.entity.js';
import { OutboxEntity } from './outbox/outbox.entity.js';
import { DocumentEntity } from './payments/document.entity.js';
import { InstallmentEntity } from './payments/installment.entity.js';
import { PaymentStatusHistoryEntity } from './payments/payment-status-history.entity.js';
import { PaymentEntity } from './payments/payment.entity.js';
import { RefundEntity } from './payments/refund.entity.js';
import { SettlementFileChunkEntity } from './settlements/settlement-file-chunk.entity.js';
import { SettlementFileErrorEntity } from './settlements/settlement-file-error.entity.js';
import { SettlementFileEntity } from './settlements/settlement-file.entity.js';
import { SettlementNightEntity } from './settlements/settlement-night.entity.js';
import { WebhookInboxEntity } from './webhooks/webhook-inbox.entity.js';

/**
 * Every table's entity, listed explicitly (no globs: the same list works under tsc and jest).
 * Composed here, above the features that own the tables, so that src/database knows none of
 * them; it receives the list (DatabaseModule.forRoot, createDataSource's `entities`).
 */
export const ENTITIES = [
  OrderEntity,
  PaymentEntity,
  InstallmentEntity,
  DocumentEntity,
  RefundEntity,
  PaymentStatusHistoryEntity,
  ProcessedEventEntity,
  CommandAttemptEntity,
  InDoubtVerdictEntity,
  OutboxEntity,
  DeadLetterEntity,
  WebhookInboxEntity,
  SettlementFileEntity,
  SettlementFileChunkEntity,
  SettlementFileErrorEntity,
  SettlementNightEntity,
];
