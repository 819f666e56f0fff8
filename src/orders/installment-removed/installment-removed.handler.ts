/** order.installment_removed → DELETE …/installments/{installment_id}; emits installment.removed. */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { LiveInstallment, PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { installmentRemovedVerdict, type RemovedInstallment } from './installment-removed.probe.js';

interface RemoveState {
  readonly payment: PaymentAggregate;
  readonly installment: LiveInstallment;
}

@Injectable()
export class InstallmentRemovedHandler extends PaymentCommandHandler<
  'order.installment_removed',
  RemoveState,
  RemovedInstallment
> {
  constructor(kit: PaymentCommandKit) {
    super(kit, {
      type: 'order.installment_removed',
      // A repeated DELETE is refused (business.installment_final): never repeated blindly.
      repeatable: false,
      map: async (command, target) => {
        const payment = await kit.aggregates.load(kit.database.sql, target.payment);
        return {
          payment,
          installment: payment.requireLiveInstallment(command.event.data.installmentRef),
        };
      },
      call: ({ target, installment }, options) =>
        kit.payflow.installment(
          {
            action: 'delete',
            paymentId: target.payment.payflowId,
            installmentId: installment.payflowId,
          },
          { ...options, currency: target.payment.currency },
        ),
      probe: async ({ target, installment }, options) =>
        installmentRemovedVerdict(
          await kit.payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
          installment.payflowId,
        ),
      complete: async (tx, { state: { target, payment, installment }, result, command }) => {
        const change = payment.removeInstallment(installment.ref, result.status);
        await executeTogether(tx, kit.aggregates.installmentParts(change));
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
