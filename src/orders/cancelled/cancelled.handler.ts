/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PaymentStatus } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import type { CommandOutcome } from '../engine/order-command.js';
import { OrderRepository } from '../order.repository.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { CancelledCommand } from './cancelled.command.js';

@Injectable()
export class CancelledHandler {
  private readonly spec: CommandSpec<'order.cancelled', PaymentTarget, PaymentStatus>;

  constructor(
    private readonly runner: CommandRunner,
    targets: PaymentTargets,
    payments: PaymentRepository,
    history: PaymentStatusHistoryRepository,
    orders: OrderRepository,
    installments: InstallmentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        return { state: target, paymentId: target.payment.id };
      },
      call: (target, signal) =>
        payflow.cancelPayment(target.payment.payflowId, {
          ...callOptions(target, signal),
          currency: target.payment.currency,
        }),
      complete: async (tx, { state: target, result, command }) => {
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
    };
  }

  execute(command: CancelledCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
