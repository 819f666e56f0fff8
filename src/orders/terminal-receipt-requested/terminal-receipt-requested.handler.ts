/** order.terminal_receipt_requested → POST /payments/{payment_id}/receipts/terminal/print. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PrintReceiptResponse } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { TerminalReceiptRequestedCommand } from './terminal-receipt-requested.command.js';

interface PrintState {
  readonly target: PaymentTarget;
  readonly terminalId: string | undefined;
}

@Injectable()
export class TerminalReceiptRequestedHandler {
  private readonly spec: CommandSpec<
    'order.terminal_receipt_requested',
    null,
    PrintState,
    PrintReceiptResponse
  >;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.terminal_receipt_requested',
      // A repeat prints a second receipt: never repeated blindly.
      repeatable: false,
      map: () => null,
      prepare: (_tx, context) => {
        const target = requirePayment(context);
        return Promise.resolve({
          state: { target, terminalId: context.command.event.data.terminalId },
          paymentId: target.payment.id,
        });
      },
      call: ({ target, terminalId }, signal) =>
        payflow.printTerminalReceipt(
          target.payment.payflowId,
          terminalId === undefined ? {} : { terminalId },
          callOptions(target, signal),
        ),
      complete: (_tx, { target }, result, command) =>
        Promise.resolve([
          targetEvent('receipt.printed', command, target, {
            terminalId: result.terminalId,
            status: result.status,
          }),
        ]),
    };
  }

  execute(command: TerminalReceiptRequestedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
