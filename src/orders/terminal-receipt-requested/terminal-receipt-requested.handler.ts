/** order.terminal_receipt_requested → POST /payments/{payment_id}/receipts/terminal/print. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PrintReceiptResponse } from '../../payflow/payflow.types.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import {
  PaymentCommandHandler,
  onLatestPayment,
  type OnTarget,
} from '../shared/payment-command.js';
import { PaymentTargets, targetEvent } from '../shared/payment-target.js';

type PrintState = OnTarget<{ readonly terminalId: string | undefined }>;

@Injectable()
export class TerminalReceiptRequestedHandler extends PaymentCommandHandler<
  'order.terminal_receipt_requested',
  PrintState,
  PrintReceiptResponse
> {
  protected readonly spec: CommandSpec<
    'order.terminal_receipt_requested',
    PrintState,
    PrintReceiptResponse
  >;

  constructor(
    runner: CommandRunner,
    targets: PaymentTargets,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    super(runner);
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
