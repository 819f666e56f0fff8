/** order.terminal_receipt_requested → POST /payments/{payment_id}/receipts/terminal/print. */
import { Injectable } from '@nestjs/common';
import type { PrintReceiptResponse } from '../../payflow/payflow.types.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';

interface PrintState {
  readonly terminalId: string | undefined;
}

@Injectable()
export class TerminalReceiptRequestedHandler extends PaymentCommandHandler<
  'order.terminal_receipt_requested',
  PrintState,
  PrintReceiptResponse
> {
  constructor(kit: PaymentCommandKit) {
    super(kit, {
      type: 'order.terminal_receipt_requested',
      // A repeat prints a second receipt: never repeated blindly.
      repeatable: false,
      map: (command) => ({ terminalId: command.event.data.terminalId }),
      call: ({ target, terminalId }, options) =>
        kit.payflow.printTerminalReceipt(
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
