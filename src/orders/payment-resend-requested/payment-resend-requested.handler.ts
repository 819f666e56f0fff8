/**
 * order.payment_resend_requested → POST /payment-methods/resend; emits payment.resent.
 * The method is checked against Payflow's list first. The spec says a re-send creates no
 * payment and can be repeated, so an unclear failure is retried.
 */
import { Injectable } from '@nestjs/common';
import type { ResendResponse } from '../../payflow/payflow.types.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import type { OrderEventData } from '../../events/order-event.schema.js';
import { PaymentMethodCatalog } from '../shared/payment-methods.js';
import { targetEvent } from '../shared/payment-target.js';

interface ResendState {
  readonly data: OrderEventData<'order.payment_resend_requested'>;
}

@Injectable()
export class PaymentResendRequestedHandler extends PaymentCommandHandler<
  'order.payment_resend_requested',
  ResendState,
  ResendResponse,
  void
> {
  constructor(kit: PaymentCommandKit, paymentMethods: PaymentMethodCatalog) {
    super(kit, {
      type: 'order.payment_resend_requested',
      repeatable: true,
      before: ({ event }) =>
        paymentMethods.assertKnown(event.data.paymentMethodId, event.organizationId),
      map: (command) => ({ data: command.event.data }),
      call: ({ target, data }, options) =>
        kit.payflow.resendPayment(
          {
            paymentId: target.payment.payflowId,
            paymentMethodId: data.paymentMethodId,
            ...(data.terminalId === undefined ? {} : { terminalId: data.terminalId }),
            ...(data.invoiceType === undefined ? {} : { invoiceType: data.invoiceType }),
          },
          options,
        ),
      complete: async (tx, { state: { target, data }, result, command }) => {
        await kit.payments.setPaymentMethod(tx, target.payment.id, data.paymentMethodId);
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
