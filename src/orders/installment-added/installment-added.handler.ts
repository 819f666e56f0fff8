/** order.installment_added → POST …/installments/create; emits installment.added. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { Database } from '../../database/database.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { Installment, PayflowApi } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { executeTogether } from '../../payments/statement.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import type { CommandOutcome } from '../engine/order-command.js';
import { mappingFailed } from '../shared/order-amounts.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { InstallmentAddedCommand } from './installment-added.command.js';
import { mapInstallmentAdded, type MappedInstallmentAdded } from './installment-added.mapping.js';

interface AddState {
  readonly target: PaymentTarget;
  readonly installment: MappedInstallmentAdded;
}

@Injectable()
export class InstallmentAddedHandler {
  private readonly spec: CommandSpec<'order.installment_added', AddState, Installment>;

  constructor(
    private readonly runner: CommandRunner,
    database: Database,
    targets: PaymentTargets,
    payments: PaymentRepository,
    installments: InstallmentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.installment_added',
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        const installment = mapInstallmentAdded(command.event.data, target.payment.currency);
        if (await installments.refTaken(database.sql, target.payment.id, installment.ref)) {
          throw mappingFailed(
            'ORDER.DUPLICATE_INSTALLMENT_REF',
            `installment reference "${installment.ref}" is already used by the order's payment`,
          );
        }
        return { state: { target, installment }, paymentId: target.payment.id };
      },
      call: ({ target, installment }, signal) =>
        payflow.installment(
          { action: 'create', paymentId: target.payment.payflowId, input: installment.input },
          { ...callOptions(target, signal), currency: target.payment.currency },
        ),
      complete: async (tx, { state: { target, installment }, result, command }) => {
        await executeTogether(tx, [
          payments.addToTotal(target.payment.id, result.grossAmountMinor),
          installments.add({
            paymentId: target.payment.id,
            ref: installment.ref,
            payflowId: result.id,
            date: result.date,
            grossMinor: result.grossAmountMinor,
            type: result.type,
            status: result.status,
          }),
        ]);
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
    return this.runner.run(command, this.spec);
  }
}
