import { OrderCommand } from '../engine/order-command.js';

/** order.installment_changed: change the date, amount or lines of an installment. */
export class InstallmentChangedCommand extends OrderCommand<'order.installment_changed'> {}
