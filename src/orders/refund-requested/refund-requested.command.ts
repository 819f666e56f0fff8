import { OrderCommand } from '../engine/order-command.js';

/** order.refund_requested: refund (part of) the order's latest payment. */
export class RefundRequestedCommand extends OrderCommand<'order.refund_requested'> {}
