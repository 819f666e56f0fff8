import { OrderCommand } from '../engine/order-command.js';

/** order.payment_requested: create a new Payflow payment for the order. */
export class PaymentRequestedCommand extends OrderCommand<'order.payment_requested'> {}
