/**
 * order.installment_changed → PUT …/installments/{installment_id}; emits
 * installment.changed. A PUT is harmless to repeat, so an unclear failure is retried.
 */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import type { Installment, UpdateInstallmentInput } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { requireInstallment, type KnownInstallment } from '../shared/installment-refs.js';
import { targetEvent } from '../shared/payment-target.js';
import { mapInstallmentChanged } from './installment-changed.mapping.js';

interface ChangeState {
  readonly installment: KnownInstallment;
  readonly input: UpdateInstallmentInput;
}

@Injectable()
export class InstallmentChangedHandler extends PaymentCommandHandler<
  'order.installment_changed',
  ChangeState,
  Installment
> {
  constructor(kit: PaymentCommandKit, installments: InstallmentRepository) {
    super(kit, {
      type: 'order.installment_changed',
      repeatable: true,
      map: async (command, target) => {
        const { data } = command.event;
        const input = mapInstallmentChanged(data, target.payment.currency);
        const installment = await requireInstallment(
          installments,
          kit.database.sql,
          target.payment.id,
          data.installmentRef,
        );
        return { installment, input };
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
      complete: async (tx, { state: { target, installment }, result, command }) => {
        await executeTogether(tx, [
          installments.change(installment.id, result.date, result.grossAmountMinor, result.status),
          kit.payments.addToTotal(
            target.payment.id,
            result.grossAmountMinor - installment.grossMinor,
          ),
        ]);
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
