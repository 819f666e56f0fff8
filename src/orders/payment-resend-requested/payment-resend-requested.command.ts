import { OrderCommand } from '../engine/order-command.js';

/** order.payment_resend_requested: send the latest payment again, to a payment method. */
export class PaymentResendRequestedCommand extends OrderCommand<'order.payment_resend_requested'> {}
