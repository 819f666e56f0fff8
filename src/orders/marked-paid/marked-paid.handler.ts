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
import type { CommandOutcome } from '../engine/order-command.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { MarkedPaidCommand } from './marked-paid.command.js';

interface MarkState {
  readonly target: PaymentTarget;
  readonly note: string | undefined;
}

@Injectable()
export class MarkedPaidHandler {
  private readonly spec: CommandSpec<'order.marked_paid', MarkState, ManualPaidResponse>;

  constructor(
    private readonly runner: CommandRunner,
    targets: PaymentTargets,
    payments: PaymentRepository,
    history: PaymentStatusHistoryRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        const note = command.event.data.note;
        return { state: { target, note }, paymentId: target.payment.id };
      },
      call: ({ target, note }, signal) =>
        payflow.markPaid(
          target.payment.payflowId,
          note === undefined ? {} : { note },
          callOptions(target, signal),
        ),
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
    };
  }

  execute(command: MarkedPaidCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
