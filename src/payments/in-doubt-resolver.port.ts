/**
 * The port through which a payment whose creation is in doubt is settled once Payflow's id
 * is known (a webhook on its token, or an operator). Owned here, by the payments, so that
 * the webhook processor depends on what it needs and not on the order pipeline that
 * implements it (the payment_requested handler, provided by OrdersModule).
 */
import type { Installment } from '../payflow/payflow.types.js';

export const IN_DOUBT_RESOLVER = Symbol('IN_DOUBT_RESOLVER');

/** What a webhook (or an operator) learned about a payment whose creation is in doubt. */
export interface InDoubtResolution {
  /** Payflow's id of the payment. */
  readonly payflowId: string;
  /** `_links.longGui`, when known. */
  readonly paymentLink?: string | null;
  /** Payflow's installments (from GET paymentStatus), matched to the plan by position. */
  readonly installments?: readonly Pick<Installment, 'id' | 'type' | 'status'>[];
}

export interface InDoubtResolver {
  /**
   * The payment becomes `created`, its attempt `resolved` and `payment.created` is
   * emitted. False when the payment is not in doubt (unknown, created already, or still
   * being created within its lease).
   */
  resolveInDoubt(paymentId: string, resolution: InDoubtResolution): Promise<boolean>;
}
