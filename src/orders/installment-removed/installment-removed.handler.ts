/** order.installment_removed → DELETE …/installments/{installment_id}; emits installment.removed. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { Installment, PayflowApi } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import { requireInstallment, type KnownInstallment } from '../common/installment-refs.js';
import type { CommandOutcome } from '../common/order-command.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { InstallmentRemovedCommand } from './installment-removed.command.js';

interface RemoveState {
  readonly target: PaymentTarget;
  readonly installment: KnownInstallment;
}

@Injectable()
export class InstallmentRemovedHandler {
  private readonly spec: CommandSpec<'order.installment_removed', null, RemoveState, Installment>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.installment_removed',
      // A repeated DELETE is refused (business.installment_final): never repeated blindly.
      repeatable: false,
      map: () => null,
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const ref = context.command.event.data.installmentRef;
        const installment = await requireInstallment(tx, target.payment.id, ref);
        return { state: { target, installment }, paymentId: target.payment.id };
      },
      call: ({ target, installment }, signal) =>
        payflow.deleteInstallment(target.payment.payflowId, installment.payflowId, {
          ...callOptions(target, signal),
          currency: target.payment.currency,
        }),
      complete: async (tx, { target, installment }, result, command) => {
        await tx.execute(
          `WITH i AS (
             UPDATE installments SET removed_at = now(), provider_status = $2, updated_at = now()
              WHERE id = $1::uuid
             RETURNING id)
           UPDATE payments SET total_gross_minor = total_gross_minor - $3::bigint,
                  updated_at = now()
            WHERE id = $4::uuid`,
          [installment.id, result.status, installment.grossMinor, target.payment.id],
        );
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
    };
  }

  execute(command: InstallmentRemovedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
