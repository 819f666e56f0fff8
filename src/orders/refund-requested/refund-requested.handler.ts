/** order.refund_requested → POST /api/refund; emits payment.refunded. Never repeated blindly. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../money/money.js';
import type { RefundResult } from '../../payflow/payflow.types.js';
import { RefundRepository } from '../../payments/refund.repository.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { mapRefundRequested, type MappedRefund } from './refund-requested.mapping.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PaymentAggregateStore } from '../../payments/payment-aggregate.store.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface RefundState {
  readonly refund: MappedRefund;
}

@Injectable()
export class RefundRequestedHandler implements OrderEventHandler<'order.refund_requested'> {
  readonly spec: CommandSpec<'order.refund_requested', OnTarget<RefundState>, RefundResult>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    aggregates: PaymentAggregateStore,
    @Inject(PayflowClient) payflow: PayflowApi,
    refunds: RefundRepository,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.refund_requested',
      repeatable: false,
      before: (command) => mapRefundRequested(command.event.data),
      map: async (_command, target, refund) => {
        const payment = await aggregates.load(database.sql, target.payment);
        payment.requestRefund(refund);
        return { refund };
      },
      call: ({ target, refund }, options) =>
        payflow.refund(
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
