/** order.installment_removed → DELETE …/installments/{installment_id}; emits installment.removed. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { LiveInstallment, PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { installmentRemovedVerdict, type RemovedInstallment } from './installment-removed.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface RemoveState {
  readonly payment: PaymentAggregate;
  readonly installment: LiveInstallment;
}

@Injectable()
export class InstallmentRemovedHandler implements OrderEventHandler<'order.installment_removed'> {
  readonly spec: CommandSpec<
    'order.installment_removed',
    OnTarget<RemoveState>,
    RemovedInstallment
  >;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.installment_removed',
      // A repeated DELETE is refused (business.installment_final): never repeated blindly.
      repeatable: false,
      map: async (command, target) => {
        const payment = await aggregates.load(database.sql, target.payment);
        return {
          payment,
          installment: payment.requireLiveInstallment(command.event.data.installmentRef),
        };
      },
      call: ({ target, installment }, options) =>
        payflow.installment(
          {
            action: 'delete',
            paymentId: target.payment.payflowId,
            installmentId: installment.payflowId,
          },
          { ...options, currency: target.payment.currency },
        ),
      probe: async ({ target, installment }, options) =>
        installmentRemovedVerdict(
          await payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
          installment.payflowId,
        ),
      complete: async (tx, { state: { target, payment, installment }, result, command }) => {
        const change = payment.removeInstallment(installment.ref, result.status);
        await executeTogether(tx, aggregates.installmentParts(change));
        return [
          targetEvent('installment.removed', command, target, {
            installmentRef: installment.ref,
            installmentId: installment.payflowId,
            date: installment.date,
            amount: formatMinorUnits(installment.grossMinor, target.payment.currency),
            currency: target.payment.currency,
            status: result.status,
          }),
        ];
      },
    });
  }
}
