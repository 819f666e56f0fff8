/**
 * order.payment_resend_requested → POST /payment-methods/resend; emits payment.resent.
 * The method is checked against Payflow's list first. The spec says a re-send creates no
 * payment and can be repeated, so an unclear failure is retried.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { ResendResponse } from '../../payflow/payflow.types.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import type { OrderEventData } from '../../events/order-event.schema.js';
import { PaymentMethodCatalog } from '../mapping/payment-methods.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface ResendState {
  readonly data: OrderEventData<'order.payment_resend_requested'>;
}

@Injectable()
export class PaymentResendRequestedHandler implements OrderEventHandler<'order.payment_resend_requested'> {
  readonly spec: CommandSpec<
    'order.payment_resend_requested',
    OnTarget<ResendState>,
    ResendResponse
  >;

  constructor(
    targets: PaymentTargets,
    payments: PaymentRepository,
    @Inject(PayflowClient) payflow: PayflowApi,
    paymentMethods: PaymentMethodCatalog,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.payment_resend_requested',
      repeatable: true,
      before: ({ event }) =>
        paymentMethods.assertKnown(event.data.paymentMethodId, event.organizationId),
      map: (command) => ({ data: command.event.data }),
      call: ({ target, data }, options) =>
        payflow.resendPayment(
          {
            paymentId: target.payment.payflowId,
            paymentMethodId: data.paymentMethodId,
            ...(data.terminalId === undefined ? {} : { terminalId: data.terminalId }),
            ...(data.invoiceType === undefined ? {} : { invoiceType: data.invoiceType }),
          },
          options,
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
    });
  }
}
