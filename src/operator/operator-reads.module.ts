/**
 * The read side (order show, in-doubt list) as providers, for every door that shows them:
 * the CLI now, the operator console inside the worker later. InDoubtListQuery is also
 * IN_DOUBT_CALLS, what InDoubtModule reads the order's call in doubt with.
 *
 * Needs (global): DataSource (DatabaseModule). The queries take the `Sql` to read with.
 */
import { Module } from '@nestjs/common';
import { DeadLetterRepository } from '../dead-letters/dead-letter.repository.js';
import { IN_DOUBT_CALLS } from '../orders/in-doubt/in-doubt.module.js';
import { InDoubtVerdictRepository } from '../orders/in-doubt/in-doubt-verdict.repository.js';
import { OrderPersistenceModule } from '../orders/order-persistence.module.js';
import { OrderRepository } from '../orders/order.repository.js';
import { DocumentRepository } from '../payments/document.repository.js';
import { InstallmentRepository } from '../payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../payments/payment-status-history.repository.js';
import { PaymentRepository } from '../payments/payment.repository.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { RefundRepository } from '../payments/refund.repository.js';
import { InDoubtListQuery } from './in-doubt/in-doubt-list.query.js';
import { OrderShowQuery } from './order-show/order-show.query.js';

@Module({
  imports: [PaymentsPersistenceModule, OrderPersistenceModule],
  providers: [
    DeadLetterRepository,
    InDoubtVerdictRepository,
    {
      provide: InDoubtListQuery,
      inject: [PaymentRepository, InstallmentRepository, OrderRepository, DeadLetterRepository],
      useFactory: (
        payments: PaymentRepository,
        installments: InstallmentRepository,
        orders: OrderRepository,
        letters: DeadLetterRepository,
      ) => new InDoubtListQuery(payments, installments, orders, letters),
    },
    { provide: IN_DOUBT_CALLS, useExisting: InDoubtListQuery },
    {
      provide: OrderShowQuery,
      inject: [
        OrderRepository,
        PaymentRepository,
        InstallmentRepository,
        DocumentRepository,
        RefundRepository,
        PaymentStatusHistoryRepository,
        DeadLetterRepository,
        InDoubtVerdictRepository,
      ],
      useFactory: (
        orders: OrderRepository,
        payments: PaymentRepository,
        installments: InstallmentRepository,
        documents: DocumentRepository,
        refunds: RefundRepository,
        history: PaymentStatusHistoryRepository,
        letters: DeadLetterRepository,
        verdicts: InDoubtVerdictRepository,
      ) =>
        new OrderShowQuery(
          orders,
          payments,
          installments,
          documents,
          refunds,
          history,
          letters,
          verdicts,
        ),
    },
  ],
  exports: [InDoubtListQuery, OrderShowQuery, IN_DOUBT_CALLS],
})
export class OperatorReadsModule {}
