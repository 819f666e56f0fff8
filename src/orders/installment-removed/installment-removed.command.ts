import { OrderCommand } from '../engine/order-command.js';

/** order.installment_removed: remove (cancel) an installment. */
export class InstallmentRemovedCommand extends OrderCommand<'order.installment_removed'> {}
