/**
 * order.installment_changed → PUT …/installments/{installment_id}; emits
 * installment.changed. A PUT is harmless to repeat, so an unclear failure is retried.
 */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { Installment, UpdateInstallmentInput } from '../../payflow/payflow.types.js';
import type { LiveInstallment, PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { mapInstallmentChanged } from './installment-changed.mapping.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface ChangeState {
  readonly payment: PaymentAggregate;
  readonly installment: LiveInstallment;
  readonly input: UpdateInstallmentInput;
}

@Injectable()
export class InstallmentChangedHandler implements OrderEventHandler<'order.installment_changed'> {
  readonly spec: CommandSpec<'order.installment_changed', OnTarget<ChangeState>, Installment>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.installment_changed',
      repeatable: true,
      map: async (command, target) => {
        const { data } = command.event;
        const input = mapInstallmentChanged(data, target.payment.currency);
        const payment = await aggregates.load(database.sql, target.payment);
        return { payment, installment: payment.requireLiveInstallment(data.installmentRef), input };
      },
      call: ({ target, installment, input }, options) =>
        payflow.installment(
          {
            action: 'update',
            paymentId: target.payment.payflowId,
            installmentId: installment.payflowId,
            input,
          },
          { ...options, currency: target.payment.currency },
        ),
      complete: async (tx, { state: { target, payment, installment }, result, command }) => {
        const change = payment.changeInstallment(installment.ref, {
          date: result.date,
          grossMinor: result.grossAmountMinor,
          status: result.status,
        });
        await executeTogether(tx, aggregates.installmentParts(change));
        return [
          targetEvent('installment.changed', command, target, {
            installmentRef: installment.ref,
            installmentId: result.id,
            date: result.date,
            previousDate: installment.date,
            amount: formatMinorUnits(result.grossAmountMinor, result.currency),
            previousAmount: formatMinorUnits(installment.grossMinor, result.currency),
            currency: result.currency,
            status: result.status,
          }),
        ];
      },
    });
  }
}
