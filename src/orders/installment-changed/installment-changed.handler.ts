/**
 * order.installment_changed → PUT …/installments/{installment_id}; emits
 * installment.changed. A PUT is harmless to repeat, so an unclear failure is retried.
 */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type {
  Installment,
  PayflowApi,
  UpdateInstallmentInput,
} from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import { requireInstallment, type KnownInstallment } from '../common/installment-refs.js';
import type { CommandOutcome } from '../common/order-command.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { InstallmentChangedCommand } from './installment-changed.command.js';
import { mapInstallmentChanged } from './installment-changed.mapping.js';

interface ChangeState {
  readonly target: PaymentTarget;
  readonly installment: KnownInstallment;
  readonly input: UpdateInstallmentInput;
}

@Injectable()
export class InstallmentChangedHandler {
  private readonly spec: CommandSpec<'order.installment_changed', null, ChangeState, Installment>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.installment_changed',
      repeatable: true,
      map: () => null,
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const { data } = context.command.event;
        const input = mapInstallmentChanged(data, target.payment.currency);
        const installment = await requireInstallment(tx, target.payment.id, data.installmentRef);
        return { state: { target, installment, input }, paymentId: target.payment.id };
      },
      call: ({ target, installment, input }, signal) =>
        payflow.updateInstallment(target.payment.payflowId, installment.payflowId, input, {
          ...callOptions(target, signal),
          currency: target.payment.currency,
        }),
      complete: async (tx, { target, installment }, result, command) => {
        await tx.execute(
          `WITH i AS (
             UPDATE installments
                SET due_date = $2::date, gross_minor = $3, provider_status = $4, updated_at = now()
              WHERE id = $1::uuid
             RETURNING id)
           UPDATE payments SET total_gross_minor = total_gross_minor + ($3 - $5::bigint),
                  updated_at = now()
            WHERE id = $6::uuid`,
          [
            installment.id,
            result.date,
            result.grossAmountMinor,
            result.status,
            installment.grossMinor,
            target.payment.id,
          ],
        );
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
    };
  }

  execute(command: InstallmentChangedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
