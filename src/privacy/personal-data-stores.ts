/**
 * The repositories that hold personal data (docs/privacy.md lists each column), each the
 * owner of its table's SQL: what an export reads and an erasure rewrites in each store.
 */
import type { DeadLetterRepository } from '../dead-letters/dead-letter.repository.js';
import type { OrderRepository } from '../orders/order.repository.js';
import type { OutboxRepository } from '../outbox/outbox.repository.js';
import type { DocumentRepository } from '../payments/document.repository.js';
import type { PaymentRepository } from '../payments/payment.repository.js';
import type { UnexplainedEffectRepository } from '../payments/unexplained-effects/unexplained-effect.repository.js';
import type { WebhookInboxRepository } from '../webhooks/inbox/webhook-inbox.repository.js';

export interface PersonalDataStores {
  /** Customer numbers; which orders a selection covers; the orders the retention takes. */
  readonly orders: OrderRepository;
  /** Payment links. */
  readonly payments: PaymentRepository;
  /** Documents' file names. */
  readonly documents: DocumentRepository;
  /** Unexplained effects' file names. */
  readonly effects: UnexplainedEffectRepository;
  /** Dead letters: values, errors, headers, discard reasons. */
  readonly letters: DeadLetterRepository;
  /** Outbox rows keyed by the order: status events, `.dlq` copies, replayed events. */
  readonly outbox: OutboxRepository;
  /** Payflow's webhooks about the order's payments. */
  readonly webhooks: WebhookInboxRepository;
}
