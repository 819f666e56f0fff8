/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Injectable } from '@nestjs/common';
import { PayflowError } from '../../payflow/payflow.errors.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { OrderRepository } from '../order.repository.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { cancelGoneVerdict, cancelVerdict, type CancelResult } from './cancelled.probe.js';

@Injectable()
export class CancelledHandler extends PaymentCommandHandler<
  'order.cancelled',
  { readonly payment: PaymentAggregate },
  CancelResult
> {
  constructor(
    kit: PaymentCommandKit,
    orders: OrderRepository,
    installments: InstallmentRepository,
  ) {
    super(kit, {
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: async (_command, target) => ({
        payment: await kit.aggregates.load(kit.database.sql, target.payment),
      }),
      call: ({ target }, options) =>
        kit.payflow.cancelPayment(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        }),
      probe: async ({ target }, options) => {
        try {
          const status = await kit.payflow.getPaymentStatus(target.payment.payflowId, {
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
          ...kit.aggregates.cancelParts(change, command),
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
