/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Injectable } from '@nestjs/common';
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import type { CommandSpec } from '../engine/command-spec.js';
import { OrderRepository } from '../order.repository.js';
import {
  PaymentCommandHandler,
  PaymentCommandKit,
  type OnTarget,
} from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';

type CancelState = OnTarget<object>;

@Injectable()
export class CancelledHandler extends PaymentCommandHandler<
  'order.cancelled',
  CancelState,
  PaymentStatus
> {
  protected readonly spec: CommandSpec<'order.cancelled', CancelState, PaymentStatus>;

  constructor(
    kit: PaymentCommandKit,
    payments: PaymentRepository,
    history: PaymentStatusHistoryRepository,
    orders: OrderRepository,
    installments: InstallmentRepository,
  ) {
    super(kit);
    this.spec = kit.onLatestPayment({
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: () => ({}),
      call: ({ target }, options) =>
        kit.payflow.cancelPayment(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        }),
      complete: async (tx, { state: { target }, result, command }) => {
        const status = normalizePaymentStatus(result.status, { cancelledByBridge: true });
        const previous = target.payment.providerStatus;
        const paymentId = target.payment.id;
        await executeTogether(tx, [
          payments.markCancelled(paymentId, result.status, status),
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
