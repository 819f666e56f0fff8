import { OrderCommand } from '../engine/order-command.js';

/** order.terminal_receipt_requested: print a receipt of the paid payment on a terminal. */
export class TerminalReceiptRequestedCommand extends OrderCommand<'order.terminal_receipt_requested'> {}
