/** order.installment_added → POST …/installments/create; emits installment.added. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { Installment, PayflowApi } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import { mappingFailed } from '../common/order-amounts.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { InstallmentAddedCommand } from './installment-added.command.js';
import { mapInstallmentAdded, type MappedInstallmentAdded } from './installment-added.mapping.js';

interface AddState {
  readonly target: PaymentTarget;
  readonly installment: MappedInstallmentAdded;
}

@Injectable()
export class InstallmentAddedHandler {
  private readonly spec: CommandSpec<'order.installment_added', null, AddState, Installment>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.installment_added',
      repeatable: false,
      map: () => null,
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const installment = mapInstallmentAdded(
          context.command.event.data,
          target.payment.currency,
        );
        const existing = await tx.query(
          `SELECT 1 FROM installments WHERE payment_id = $1::uuid AND installment_ref = $2`,
          [target.payment.id, installment.ref],
        );
        if (existing.length > 0) {
          throw mappingFailed(
            'ORDER.DUPLICATE_INSTALLMENT_REF',
            `installment reference "${installment.ref}" is already used by the order's payment`,
          );
        }
        return { state: { target, installment }, paymentId: target.payment.id };
      },
      call: ({ target, installment }, signal) =>
        payflow.createInstallment(target.payment.payflowId, installment.input, {
          ...callOptions(target, signal),
          currency: target.payment.currency,
        }),
      complete: async (tx, { target, installment }, result, command) => {
        await tx.execute(
          `WITH p AS (
             UPDATE payments SET total_gross_minor = total_gross_minor + $5, updated_at = now()
              WHERE id = $1::uuid)
           INSERT INTO installments (payment_id, installment_ref, payflow_installment_id, position,
                                     due_date, gross_minor, type, provider_status)
           SELECT $1::uuid, $2, $3, COALESCE(MAX(position), 0) + 1, $4::date, $5, $6, $7
             FROM installments WHERE payment_id = $1::uuid`,
          [
            target.payment.id,
            installment.ref,
            result.id,
            result.date,
            result.grossAmountMinor,
            result.type,
            result.status,
          ],
        );
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
    };
  }

  execute(command: InstallmentAddedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
