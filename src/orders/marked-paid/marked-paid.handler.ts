/** order.marked_paid → POST /payments/{payment_id}/manual-paid; emits payment.marked_paid. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { ManualPaidResponse, PayflowApi } from '../../payflow/payflow.types.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { MarkedPaidCommand } from './marked-paid.command.js';

interface MarkState {
  readonly target: PaymentTarget;
  readonly note: string | undefined;
}

@Injectable()
export class MarkedPaidHandler {
  private readonly spec: CommandSpec<'order.marked_paid', null, MarkState, ManualPaidResponse>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: () => null,
      prepare: (_tx, context) => {
        const target = requirePayment(context);
        const note = context.command.event.data.note;
        return Promise.resolve({ state: { target, note }, paymentId: target.payment.id });
      },
      call: ({ target, note }, signal) =>
        payflow.markPaid(
          target.payment.payflowId,
          note === undefined ? {} : { note },
          callOptions(target, signal),
        ),
      complete: async (tx, { target, note }, result, command) => {
        const providerStatus = result.paymentStatus;
        const status = normalizePaymentStatus(providerStatus);
        const previous = target.payment.providerStatus;
        await tx.execute(
          `WITH p AS (
             UPDATE payments SET provider_status = $2, status = $3, updated_at = now()
              WHERE id = $1::uuid)
           INSERT INTO payment_status_history
                  (payment_id, provider_status, previous_provider_status, status, source, event_id)
           VALUES ($1::uuid, $2, $4, $3, 'command', $5::uuid)`,
          [target.payment.id, providerStatus, status, previous, command.eventId],
        );
        return [
          targetEvent('payment.marked_paid', command, target, {
            note: note ?? null,
            providerStatus,
            previousProviderStatus: previous,
            status,
          }),
        ];
      },
    };
  }

  execute(command: MarkedPaidCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
