/** order.refund_requested → POST /api/refund; emits payment.refunded. Never repeated blindly. */
import { Inject, Injectable } from '@nestjs/common';
import { formatMinorUnits } from '../../common/money.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, RefundResult } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import { mappingFailed } from '../common/order-amounts.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { RefundRequestedCommand } from './refund-requested.command.js';
import {
  assertRefundCurrency,
  mapRefundRequested,
  type MappedRefund,
} from './refund-requested.mapping.js';

interface RefundState {
  readonly target: PaymentTarget;
  readonly refund: MappedRefund;
}

@Injectable()
export class RefundRequestedHandler {
  private readonly spec: CommandSpec<
    'order.refund_requested',
    MappedRefund,
    RefundState,
    RefundResult
  >;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.refund_requested',
      repeatable: false,
      map: (command) => mapRefundRequested(command.event.data),
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const refund = context.mapped;
        assertRefundCurrency(refund, target.payment.currency);
        const existing = await tx.query(
          `SELECT 1 FROM refunds WHERE payment_id = $1::uuid AND refund_ref = $2`,
          [target.payment.id, refund.refundRef],
        );
        if (existing.length > 0) {
          throw mappingFailed(
            'ORDER.DUPLICATE_REFUND',
            `refund ${refund.refundRef} of order ${context.command.orderId} was made already`,
          );
        }
        return { state: { target, refund }, paymentId: target.payment.id };
      },
      call: ({ target, refund }, signal) =>
        payflow.refund(
          {
            paymentId: target.payment.payflowId,
            currency: refund.currency,
            totalGrossAmountMinor: refund.totalGrossAmountMinor,
            totalNetAmountMinor: refund.totalNetAmountMinor,
            invoiceLines: refund.invoiceLines,
          },
          callOptions(target, signal),
        ),
      complete: async (tx, { target, refund }, result, command) => {
        await tx.execute(
          `INSERT INTO refunds (payment_id, refund_ref, payflow_refund_id, currency, gross_minor,
                                net_minor, refund_type, remaining_minor)
           VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (payment_id, refund_ref) DO NOTHING`,
          [
            target.payment.id,
            refund.refundRef,
            result.refundId,
            refund.currency,
            result.grossRefundedAmountMinor,
            result.netRefundedAmountMinor,
            result.refundType,
            result.remainingAmountMinor,
          ],
        );
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
    };
  }

  execute(command: RefundRequestedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
