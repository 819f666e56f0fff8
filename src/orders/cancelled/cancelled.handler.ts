/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Injectable } from '@nestjs/common';
import { PayflowError } from '../../payflow/payflow.errors.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { executeTogether } from '../../payments/statement.js';
import { OrderRepository } from '../order.repository.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { cancelGoneVerdict, cancelVerdict, type CancelResult } from './cancelled.probe.js';

@Injectable()
export class CancelledHandler extends PaymentCommandHandler<
  'order.cancelled',
  object,
  CancelResult
> {
  constructor(
    kit: PaymentCommandKit,
    history: PaymentStatusHistoryRepository,
    orders: OrderRepository,
    installments: InstallmentRepository,
  ) {
    super(kit, {
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: () => ({}),
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
      complete: async (tx, { state: { target }, result, command }) => {
        const status = normalizePaymentStatus(result.status, { cancelledByBridge: true });
        const previous = target.payment.providerStatus;
        const paymentId = target.payment.id;
        await executeTogether(tx, [
          kit.payments.markCancelled(paymentId, result.status, status),
          history.record({
            paymentId,
            providerStatus: result.status,
            previousProviderStatus: previous,
            status,
            source: 'command',
            eventId: command.eventId,
          }),
          orders.markCancelled(command.orderId),
          installments.setStatusesByPayflowId(
            paymentId,
            result.installments.map((installment) => ({
              payflowId: installment.id,
              status: installment.status,
            })),
          ),
        ]);
        return [
          targetEvent('payment.cancelled', command, target, {
            reason: command.event.data.reason ?? null,
            providerStatus: result.status,
            previousProviderStatus: previous,
            status,
          }),
        ];
      },
    });
  }
}
