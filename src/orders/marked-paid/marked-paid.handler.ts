/** order.marked_paid → POST /payments/{payment_id}/manual-paid; emits payment.marked_paid. */
import { Injectable } from '@nestjs/common';
import type { ManualPaidResponse } from '../../payflow/payflow.types.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { normalizePaymentStatus } from '../../payments/payment-status.js';
import { executeTogether } from '../../payments/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { markPaidVerdict } from './marked-paid.probe.js';

interface MarkState {
  readonly note: string | undefined;
}

@Injectable()
export class MarkedPaidHandler extends PaymentCommandHandler<
  'order.marked_paid',
  MarkState,
  ManualPaidResponse
> {
  constructor(kit: PaymentCommandKit, history: PaymentStatusHistoryRepository) {
    super(kit, {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: (command) => ({ note: command.event.data.note }),
      call: ({ target, note }, options) =>
        kit.payflow.markPaid(target.payment.payflowId, note === undefined ? {} : { note }, options),
      probe: async ({ target }, options) =>
        markPaidVerdict(
          await kit.payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
        ),
      complete: async (tx, { state: { target, note }, result, command }) => {
        const providerStatus = result.paymentStatus;
        const status = normalizePaymentStatus(providerStatus);
        const previous = target.payment.providerStatus;
        await executeTogether(tx, [
          kit.payments.setStatus(target.payment.id, providerStatus, status),
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
