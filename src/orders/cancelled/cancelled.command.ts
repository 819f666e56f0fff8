import { OrderCommand } from '../engine/order-command.js';

/** order.cancelled: cancel the order's latest payment. */
export class CancelledCommand extends OrderCommand<'order.cancelled'> {}
