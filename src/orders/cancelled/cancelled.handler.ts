/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Inject, Injectable } from '@nestjs/common';
import { PayflowError } from '../../payflow/payflow.errors.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { OrderRepository } from '../order.repository.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { cancelGoneVerdict, cancelVerdict, type CancelResult } from './cancelled.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

@Injectable()
export class CancelledHandler implements OrderEventHandler<'order.cancelled'> {
  readonly spec: CommandSpec<
    'order.cancelled',
    OnTarget<{ readonly payment: PaymentAggregate }>,
    CancelResult
  >;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
    orders: OrderRepository,
    installments: InstallmentRepository,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: async (_command, target) => ({
        payment: await aggregates.load(database.sql, target.payment),
      }),
      call: ({ target }, options) =>
        payflow.cancelPayment(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        }),
      probe: async ({ target }, options) => {
        try {
          const status = await payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          });
          return cancelVerdict(status);
        } catch (error) {
          if (error instanceof PayflowError && error.code === 'PAYFLOW.NOT_FOUND') {
            return cancelGoneVerdict();
          }
          throw error;
        }
      },
      complete: async (tx, { state: { target, payment }, result, command }) => {
        const change = payment.cancel(result.status);
        await executeTogether(tx, [
          ...aggregates.cancelParts(change, command),
          orders.markCancelled(command.orderId),
          installments.setStatusesByPayflowId(
            change.paymentId,
            result.installments.map((installment) => ({
              payflowId: installment.id,
              status: installment.status,
            })),
          ),
        ]);
        return [
          targetEvent('payment.cancelled', command, target, {
            reason: command.event.data.reason ?? null,
            providerStatus: change.providerStatus,
            previousProviderStatus: change.previousProviderStatus,
            status: change.status,
          }),
        ];
      },
    });
  }
}
