import { OrderCommand } from '../engine/order-command.js';

/** order.installment_added: add an installment to the order's latest payment. */
export class InstallmentAddedCommand extends OrderCommand<'order.installment_added'> {}
