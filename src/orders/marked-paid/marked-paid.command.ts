import { OrderCommand } from '../engine/order-command.js';

/** order.marked_paid: mark the order's latest payment paid by hand (cash, bank transfer). */
export class MarkedPaidCommand extends OrderCommand<'order.marked_paid'> {}
