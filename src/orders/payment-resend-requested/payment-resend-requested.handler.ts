/**
 * order.payment_resend_requested → POST /payment-methods/resend; emits payment.resent.
 * The method is checked against Payflow's list first. The spec says a re-send creates no
 * payment and can be repeated, so an unclear failure is retried.
 */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, ResendResponse } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import { PaymentMethodCatalog } from '../common/payment-methods.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { OrderEventData } from '../order-event.schema.js';
import type { PaymentResendRequestedCommand } from './payment-resend-requested.command.js';

type ResendData = OrderEventData<'order.payment_resend_requested'>;

interface ResendState {
  readonly target: PaymentTarget;
  readonly data: ResendData;
}

@Injectable()
export class PaymentResendRequestedHandler {
  private readonly spec: CommandSpec<
    'order.payment_resend_requested',
    null,
    ResendState,
    ResendResponse
  >;

  constructor(
    private readonly engine: OrderCommandEngine,
    paymentMethods: PaymentMethodCatalog,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.payment_resend_requested',
      repeatable: true,
      map: async (command) => {
        await paymentMethods.assertKnown(
          command.event.data.paymentMethodId,
          command.event.organizationId,
        );
        return null;
      },
      prepare: (_tx, context) => {
        const target = requirePayment(context);
        return Promise.resolve({
          state: { target, data: context.command.event.data },
          paymentId: target.payment.id,
        });
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
      complete: async (tx, { target, data }, result, command) => {
        await tx.execute(
          `UPDATE payments SET payment_method_id = $2, updated_at = now() WHERE id = $1::uuid`,
          [target.payment.id, data.paymentMethodId],
        );
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
    return this.engine.run(command, this.spec);
  }
}
