/** order.marked_paid → POST /payments/{payment_id}/manual-paid; emits payment.marked_paid. */
import { Injectable } from '@nestjs/common';
import type { ManualPaidResponse } from '../../payflow/payflow.types.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { markPaidVerdict } from './marked-paid.probe.js';

interface MarkState {
  readonly note: string | undefined;
  readonly payment: PaymentAggregate;
}

@Injectable()
export class MarkedPaidHandler extends PaymentCommandHandler<
  'order.marked_paid',
  MarkState,
  ManualPaidResponse
> {
  constructor(kit: PaymentCommandKit) {
    super(kit, {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: async (command, target) => ({
        note: command.event.data.note,
        payment: await kit.aggregates.load(kit.database.sql, target.payment),
      }),
      call: ({ target, note }, options) =>
        kit.payflow.markPaid(target.payment.payflowId, note === undefined ? {} : { note }, options),
      probe: async ({ target }, options) =>
        markPaidVerdict(
          await kit.payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
        ),
      complete: async (tx, { state: { target, note, payment }, result, command }) => {
        const change = payment.markPaid(result.paymentStatus);
        await executeTogether(tx, kit.aggregates.statusParts(change, command));
        return [
          targetEvent('payment.marked_paid', command, target, {
            note: note ?? null,
            providerStatus: change.providerStatus,
            previousProviderStatus: change.previousProviderStatus,
            status: change.status,
          }),
        ];
      },
    });
  }
}
