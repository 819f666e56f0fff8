/** order.marked_paid → POST /payments/{payment_id}/manual-paid; emits payment.marked_paid. */
import { Inject, Injectable } from '@nestjs/common';
import type { ManualPaidResponse } from '../../payflow/payflow.types.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { markPaidVerdict } from './marked-paid.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface MarkState {
  readonly note: string | undefined;
  readonly payment: PaymentAggregate;
}

@Injectable()
export class MarkedPaidHandler implements OrderEventHandler<'order.marked_paid'> {
  readonly spec: CommandSpec<'order.marked_paid', OnTarget<MarkState>, ManualPaidResponse>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.marked_paid',
      // A repeat is refused once the payment is PAID (business.payment_final).
      repeatable: false,
      map: async (command, target) => ({
        note: command.event.data.note,
        payment: await aggregates.load(database.sql, target.payment),
      }),
      call: ({ target, note }, options) =>
        payflow.markPaid(target.payment.payflowId, note === undefined ? {} : { note }, options),
      probe: async ({ target }, options) =>
        markPaidVerdict(
          await payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
        ),
      complete: async (tx, { state: { target, note, payment }, result, command }) => {
        const change = payment.markPaid(result.paymentStatus);
        await executeTogether(tx, aggregates.statusParts(change, command));
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
