/** order.refund_requested → POST /api/refund; emits payment.refunded. Never repeated blindly. */
import { Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { RefundResult } from '../../payflow/payflow.types.js';
import { RefundRepository } from '../../payments/refund.repository.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { mapRefundRequested, type MappedRefund } from './refund-requested.mapping.js';

interface RefundState {
  readonly refund: MappedRefund;
}

@Injectable()
export class RefundRequestedHandler extends PaymentCommandHandler<
  'order.refund_requested',
  RefundState,
  RefundResult,
  MappedRefund
> {
  constructor(kit: PaymentCommandKit, refunds: RefundRepository) {
    super(kit, {
      type: 'order.refund_requested',
      repeatable: false,
      before: (command) => mapRefundRequested(command.event.data),
      map: async (_command, target, refund) => {
        const payment = await kit.aggregates.load(kit.database.sql, target.payment);
        payment.requestRefund(refund);
        return { refund };
      },
      call: ({ target, refund }, options) =>
        kit.payflow.refund(
          {
            paymentId: target.payment.payflowId,
            currency: refund.currency,
            totalGrossAmountMinor: refund.totalGrossAmountMinor,
            totalNetAmountMinor: refund.totalNetAmountMinor,
            invoiceLines: refund.invoiceLines,
          },
          options,
        ),
      complete: async (tx, { state: { target, refund }, result, command }) => {
        await refunds.insert(tx, {
          paymentId: target.payment.id,
          refundRef: refund.refundRef,
          payflowRefundId: result.refundId,
          currency: refund.currency,
          grossMinor: result.grossRefundedAmountMinor,
          netMinor: result.netRefundedAmountMinor,
          refundType: result.refundType,
          remainingMinor: result.remainingAmountMinor,
        });
        const currency = result.currency;
        return [
          targetEvent('payment.refunded', command, target, {
            refundId: refund.refundRef,
            payflowRefundId: result.refundId,
            refundType: result.refundType,
            currency,
            amountGross: formatMinorUnits(result.grossRefundedAmountMinor, currency),
            amountNet: formatMinorUnits(result.netRefundedAmountMinor, currency),
            remainingAmount:
              result.remainingAmountMinor === null
                ? null
                : formatMinorUnits(result.remainingAmountMinor, currency),
          }),
        ];
      },
    });
  }
}
