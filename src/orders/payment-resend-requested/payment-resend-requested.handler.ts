/**
 * order.payment_resend_requested → POST /payment-methods/resend; emits payment.resent.
 * The method is checked against Payflow's list first. The spec says a re-send creates no
 * payment and can be repeated, so an unclear failure is retried.
 */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, ResendResponse } from '../../payflow/payflow.types.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import type { CommandOutcome } from '../engine/order-command.js';
import type { OrderEventData } from '../order-event.schema.js';
import { PaymentMethodCatalog } from '../shared/payment-methods.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { PaymentResendRequestedCommand } from './payment-resend-requested.command.js';

type ResendData = OrderEventData<'order.payment_resend_requested'>;

interface ResendState {
  readonly target: PaymentTarget;
  readonly data: ResendData;
}

@Injectable()
export class PaymentResendRequestedHandler {
  private readonly spec: CommandSpec<'order.payment_resend_requested', ResendState, ResendResponse>;

  constructor(
    private readonly runner: CommandRunner,
    paymentMethods: PaymentMethodCatalog,
    targets: PaymentTargets,
    payments: PaymentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.payment_resend_requested',
      repeatable: true,
      map: async (command) => {
        const { data, organizationId } = command.event;
        await paymentMethods.assertKnown(data.paymentMethodId, organizationId);
        const target = await targets.require(command);
        return { state: { target, data }, paymentId: target.payment.id };
      },
      call: ({ target, data }, signal) =>
        payflow.resendPayment(
          {
            paymentId: target.payment.payflowId,
            paymentMethodId: data.paymentMethodId,
            ...(data.terminalId === undefined ? {} : { terminalId: data.terminalId }),
            ...(data.invoiceType === undefined ? {} : { invoiceType: data.invoiceType }),
          },
          callOptions(target, signal),
        ),
      complete: async (tx, { state: { target, data }, result, command }) => {
        await payments.setPaymentMethod(tx, target.payment.id, data.paymentMethodId);
        return [
          targetEvent('payment.resent', command, target, {
            paymentMethodId: data.paymentMethodId,
            terminalId: data.terminalId ?? null,
            invoiceType: data.invoiceType ?? null,
            status: result.status,
          }),
        ];
      },
    };
  }

  execute(command: PaymentResendRequestedCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
