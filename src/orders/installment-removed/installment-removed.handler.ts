/** order.installment_removed → DELETE …/installments/{installment_id}; emits installment.removed. */
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
import { requireInstallment, type KnownInstallment } from '../shared/installment-refs.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { InstallmentRemovedCommand } from './installment-removed.command.js';

interface RemoveState {
  readonly target: PaymentTarget;
  readonly installment: KnownInstallment;
}

@Injectable()
export class InstallmentRemovedHandler {
  private readonly spec: CommandSpec<'order.installment_removed', RemoveState, Installment>;

  constructor(
    private readonly runner: CommandRunner,
    database: Database,
    targets: PaymentTargets,
    payments: PaymentRepository,
    installments: InstallmentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.installment_removed',
      // A repeated DELETE is refused (business.installment_final): never repeated blindly.
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        const ref = command.event.data.installmentRef;
        const installment = await requireInstallment(
          installments,
          database.sql,
          target.payment.id,
          ref,
        );
        return { state: { target, installment }, paymentId: target.payment.id };
      },
      call: ({ target, installment }, signal) =>
        payflow.installment(
          {
            action: 'delete',
            paymentId: target.payment.payflowId,
            installmentId: installment.payflowId,
          },
          { ...callOptions(target, signal), currency: target.payment.currency },
        ),
      complete: async (tx, { state: { target, installment }, result, command }) => {
        await executeTogether(tx, [
          installments.remove(installment.id, result.status),
          payments.addToTotal(target.payment.id, -installment.grossMinor),
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
    };
  }

  execute(command: InstallmentRemovedCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
