/** order.cancelled → DELETE /api/payments/{payflow_id}; emits payment.cancelled. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PaymentStatus } from '../../payflow/payflow.types.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { CancelledCommand } from './cancelled.command.js';

@Injectable()
export class CancelledHandler {
  private readonly spec: CommandSpec<'order.cancelled', null, PaymentTarget, PaymentStatus>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.cancelled',
      // A repeated cancel is refused (business.payment_final): never repeated blindly.
      repeatable: false,
      map: () => null,
      prepare: (_tx, context) => {
        const target = requirePayment(context);
        return Promise.resolve({ state: target, paymentId: target.payment.id });
      },
      call: (target, signal) =>
        payflow.cancelPayment(target.payment.payflowId, {
          ...callOptions(target, signal),
          currency: target.payment.currency,
        }),
      complete: async (tx, target, result, command) => {
        const status = normalizePaymentStatus(result.status, { cancelledByBridge: true });
        const previous = target.payment.providerStatus;
        await tx.execute(
          `WITH p AS (
             UPDATE payments SET state = 'cancelled', provider_status = $2, status = $3,
                    updated_at = now()
              WHERE id = $1::uuid),
           h AS (
             INSERT INTO payment_status_history
                    (payment_id, provider_status, previous_provider_status, status, source, event_id)
             VALUES ($1::uuid, $2, $4, $3, 'command', $5::uuid)),
           o AS (
             UPDATE orders SET state = 'cancelled', updated_at = now() WHERE order_id = $6)
           UPDATE installments i SET provider_status = x.status, updated_at = now()
             FROM unnest($7::text[], $8::text[]) AS x (payflow_id, status)
            WHERE i.payment_id = $1::uuid AND i.payflow_installment_id = x.payflow_id`,
          [
            target.payment.id,
            result.status,
            status,
            previous,
            command.eventId,
            command.orderId,
            result.installments.map((installment) => installment.id),
            result.installments.map((installment) => installment.status),
          ],
        );
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
    return this.engine.run(command, this.spec);
  }
}
