/** order.installment_added → POST …/installments/create; emits installment.added. */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import type { Installment } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../payments/statement.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { mapInstallmentAdded, type MappedInstallmentAdded } from './installment-added.mapping.js';
import { installmentAddedVerdict } from './installment-added.probe.js';

interface AddState {
  readonly installment: MappedInstallmentAdded;
  readonly payment: PaymentAggregate;
}

@Injectable()
export class InstallmentAddedHandler extends PaymentCommandHandler<
  'order.installment_added',
  AddState,
  Installment
> {
  constructor(kit: PaymentCommandKit, installments: InstallmentRepository) {
    super(kit, {
      type: 'order.installment_added',
      repeatable: false,
      map: async (command, target) => {
        const installment = mapInstallmentAdded(command.event.data, target.payment.currency);
        const payment = await kit.aggregates.load(kit.database.sql, target.payment);
        payment.requireNewInstallmentRef(installment.ref);
        return { installment, payment };
      },
      call: ({ target, installment }, options) =>
        kit.payflow.installment(
          { action: 'create', paymentId: target.payment.payflowId, input: installment.input },
          { ...options, currency: target.payment.currency },
        ),
      probe: async ({ target, installment }, options) => {
        const status = await kit.payflow.getPaymentStatus(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        });
        const known = await installments.listForPayments(kit.database.sql, [target.payment.id]);
        return installmentAddedVerdict(
          status,
          installment.input,
          new Set(known.flatMap((row) => row.payflowInstallmentId ?? [])),
        );
      },
      complete: async (tx, { state: { target, installment, payment }, result, command }) => {
        const change = payment.addInstallment(installment.ref, {
          payflowId: result.id,
          date: result.date,
          grossMinor: result.grossAmountMinor,
          type: result.type,
          status: result.status,
        });
        await executeTogether(tx, kit.aggregates.installmentParts(change));
        return [
          targetEvent('installment.added', command, target, {
            installmentRef: installment.ref,
            installmentId: result.id,
            date: result.date,
            amount: formatMinorUnits(result.grossAmountMinor, result.currency),
            currency: result.currency,
            type: result.type,
            status: result.status,
          }),
        ];
      },
    });
  }
}
