/** order.installment_removed → DELETE …/installments/{installment_id}; emits installment.removed. */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { requireInstallment, type KnownInstallment } from '../shared/installment-refs.js';
import { targetEvent } from '../shared/payment-target.js';
import { installmentRemovedVerdict, type RemovedInstallment } from './installment-removed.probe.js';

interface RemoveState {
  readonly installment: KnownInstallment;
}

@Injectable()
export class InstallmentRemovedHandler extends PaymentCommandHandler<
  'order.installment_removed',
  RemoveState,
  RemovedInstallment
> {
  constructor(kit: PaymentCommandKit, installments: InstallmentRepository) {
    super(kit, {
      type: 'order.installment_removed',
      // A repeated DELETE is refused (business.installment_final): never repeated blindly.
      repeatable: false,
      map: async (command, target) => ({
        installment: await requireInstallment(
          installments,
          kit.database.sql,
          target.payment.id,
          command.event.data.installmentRef,
        ),
      }),
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
      complete: async (tx, { state: { target, installment }, result, command }) => {
        await executeTogether(tx, [
          installments.remove(installment.id, result.status),
          kit.payments.addToTotal(target.payment.id, -installment.grossMinor),
        ]);
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
