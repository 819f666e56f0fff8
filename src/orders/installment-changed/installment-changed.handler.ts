/**
 * order.installment_changed → PUT …/installments/{installment_id}; emits
 * installment.changed. A PUT is harmless to repeat, so an unclear failure is retried.
 */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { Installment, UpdateInstallmentInput } from '../../payflow/payflow.types.js';
import type { LiveInstallment, PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { mapInstallmentChanged } from './installment-changed.mapping.js';

interface ChangeState {
  readonly payment: PaymentAggregate;
  readonly installment: LiveInstallment;
  readonly input: UpdateInstallmentInput;
}

@Injectable()
export class InstallmentChangedHandler extends PaymentCommandHandler<
  'order.installment_changed',
  ChangeState,
  Installment
> {
  constructor(kit: PaymentCommandKit) {
    super(kit, {
      type: 'order.installment_changed',
      repeatable: true,
      map: async (command, target) => {
        const { data } = command.event;
        const input = mapInstallmentChanged(data, target.payment.currency);
        const payment = await kit.aggregates.load(kit.database.sql, target.payment);
        return { payment, installment: payment.requireLiveInstallment(data.installmentRef), input };
      },
      call: ({ target, installment, input }, options) =>
        kit.payflow.installment(
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
        await executeTogether(tx, kit.aggregates.installmentParts(change));
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
