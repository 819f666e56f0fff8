/** order.refund_requested → POST /api/refund; emits payment.refunded. Never repeated blindly. */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { formatMinorUnits } from '../../common/money.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, RefundResult } from '../../payflow/payflow.types.js';
import { RefundRepository } from '../../payments/refund.repository.js';
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
  private readonly spec: CommandSpec<'order.refund_requested', RefundState, RefundResult>;

  constructor(
    private readonly runner: CommandRunner,
    database: Database,
    targets: PaymentTargets,
    refunds: RefundRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.refund_requested',
      repeatable: false,
      map: async (command) => {
        const refund = mapRefundRequested(command.event.data);
        const target = await targets.require(command);
        assertRefundCurrency(refund, target.payment.currency);
        if (await refunds.exists(database.sql, target.payment.id, refund.refundRef)) {
          throw mappingFailed(
            'ORDER.DUPLICATE_REFUND',
            `refund ${refund.refundRef} of order ${command.orderId} was made already`,
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
    };
  }

  execute(command: RefundRequestedCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
