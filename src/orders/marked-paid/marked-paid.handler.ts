/** order.marked_paid → POST /payments/{payment_id}/manual-paid; emits payment.marked_paid. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { ManualPaidResponse, PayflowApi } from '../../payflow/payflow.types.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import {
  PaymentCommandHandler,
  onLatestPayment,
  type OnTarget,
} from '../shared/payment-command.js';
import { PaymentTargets, targetEvent } from '../shared/payment-target.js';

type MarkState = OnTarget<{ readonly note: string | undefined }>;

@Injectable()
export class MarkedPaidHandler extends PaymentCommandHandler<
  'order.marked_paid',
  MarkState,
  ManualPaidResponse
> {
  protected readonly spec: CommandSpec<'order.marked_paid', MarkState, ManualPaidResponse>;

  constructor(
    runner: CommandRunner,
    targets: PaymentTargets,
    payments: PaymentRepository,
    history: PaymentStatusHistoryRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    super(runner);
    this.spec = onLatestPayment(targets, {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: (command) => ({ note: command.event.data.note }),
      call: ({ target, note }, options) =>
        payflow.markPaid(target.payment.payflowId, note === undefined ? {} : { note }, options),
      complete: async (tx, { state: { target, note }, result, command }) => {
        const providerStatus = result.paymentStatus;
        const status = normalizePaymentStatus(providerStatus);
        const previous = target.payment.providerStatus;
        await executeTogether(tx, [
          payments.setStatus(target.payment.id, providerStatus, status),
          history.record({
            paymentId: target.payment.id,
            providerStatus,
            previousProviderStatus: previous,
            status,
            source: 'command',
            eventId: command.eventId,
          }),
        ]);
        return [
          targetEvent('payment.marked_paid', command, target, {
            note: note ?? null,
            providerStatus,
            previousProviderStatus: previous,
            status,
          }),
        ];
      },
    });
  }
}
