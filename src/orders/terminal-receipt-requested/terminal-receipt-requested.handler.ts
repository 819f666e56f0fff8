/** order.terminal_receipt_requested → POST /payments/{payment_id}/receipts/terminal/print. */
import { Inject, Injectable } from '@nestjs/common';
import type { PrintReceiptResponse } from '../../payflow/payflow.types.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface PrintState {
  readonly terminalId: string | undefined;
}

@Injectable()
export class TerminalReceiptRequestedHandler implements OrderEventHandler<'order.terminal_receipt_requested'> {
  readonly spec: CommandSpec<
    'order.terminal_receipt_requested',
    OnTarget<PrintState>,
    PrintReceiptResponse
  >;

  constructor(targets: PaymentTargets, @Inject(PayflowClient) payflow: PayflowApi) {
    this.spec = onLatestPayment(targets, {
      type: 'order.terminal_receipt_requested',
      // A repeat prints a second receipt: never repeated blindly.
      repeatable: false,
      map: (command) => ({ terminalId: command.event.data.terminalId }),
      call: ({ target, terminalId }, options) =>
        payflow.printTerminalReceipt(
          target.payment.payflowId,
          terminalId === undefined ? {} : { terminalId },
          options,
        ),
      complete: (_tx, { state: { target }, result, command }) =>
        Promise.resolve([
          targetEvent('receipt.printed', command, target, {
            terminalId: result.terminalId,
            status: result.status,
          }),
        ]),
    });
  }
}
