/** order.terminal_receipt_requested → POST /payments/{payment_id}/receipts/terminal/print. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PrintReceiptResponse } from '../../payflow/payflow.types.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import type { CommandOutcome } from '../engine/order-command.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { TerminalReceiptRequestedCommand } from './terminal-receipt-requested.command.js';

interface PrintState {
  readonly target: PaymentTarget;
  readonly terminalId: string | undefined;
}

@Injectable()
export class TerminalReceiptRequestedHandler {
  private readonly spec: CommandSpec<
    'order.terminal_receipt_requested',
    PrintState,
    PrintReceiptResponse
  >;

  constructor(
    private readonly runner: CommandRunner,
    targets: PaymentTargets,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.terminal_receipt_requested',
      // A repeat prints a second receipt: never repeated blindly.
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        const terminalId = command.event.data.terminalId;
        return { state: { target, terminalId }, paymentId: target.payment.id };
      },
      call: ({ target, terminalId }, signal) =>
        payflow.printTerminalReceipt(
          target.payment.payflowId,
          terminalId === undefined ? {} : { terminalId },
          callOptions(target, signal),
        ),
      complete: (_tx, { state: { target }, result, command }) =>
        Promise.resolve([
          targetEvent('receipt.printed', command, target, {
            terminalId: result.terminalId,
            status: result.status,
          }),
        ]),
    };
  }

  execute(command: TerminalReceiptRequestedCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
