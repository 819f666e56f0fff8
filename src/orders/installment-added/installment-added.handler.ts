/** order.installment_added → POST …/installments/create; emits installment.added. */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Registry } from 'prom-client';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { formatMinorUnits } from '../../money/money.js';
import type { Installment } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import type { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { executeTogether } from '../../database/statement.js';
import { UnexplainedEffects } from '../../payments/unexplained-effects/unexplained-effects.service.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { mapInstallmentAdded, type MappedInstallmentAdded } from './installment-added.mapping.js';
import { installmentAddedVerdict } from './installment-added.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface AddState {
  readonly installment: MappedInstallmentAdded;
  readonly payment: PaymentAggregate;
}

@Injectable()
export class InstallmentAddedHandler implements OrderEventHandler<'order.installment_added'> {
  readonly spec: CommandSpec<'order.installment_added', OnTarget<AddState>, Installment>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
    installments: InstallmentRepository,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
    @Optional() @Inject(Registry) registry?: Registry,
  ) {
    // Built here over the kit's database: OrdersModule provides no UnexplainedEffects.
    const effects = UnexplainedEffects.create(database.sql, logger, registry);
    this.spec = onLatestPayment(targets, {
      type: 'order.installment_added',
      repeatable: false,
      map: async (command, target) => {
        const installment = mapInstallmentAdded(command.event.data, target.payment.currency);
        const payment = await aggregates.load(database.sql, target.payment);
        payment.requireNewInstallmentRef(installment.ref);
        return { installment, payment };
      },
      call: ({ target, installment }, options) =>
        payflow.installment(
          { action: 'create', paymentId: target.payment.payflowId, input: installment.input },
          { ...options, currency: target.payment.currency },
        ),
      probe: async ({ target, installment }, options) => {
        const status = await payflow.getPaymentStatus(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        });
        // This attempt is live, so the read is checked only for the other kind of effect.
        await effects.check(target.payment, status, 'probe');
        const known = await installments.listForPayments(database.sql, [target.payment.id]);
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
        await executeTogether(tx, aggregates.installmentParts(change));
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
