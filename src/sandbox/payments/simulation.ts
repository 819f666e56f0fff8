/**
 * The payer simulation of the control API (POST /sandbox/payments/{id}/simulate): what the
 * payer, the bank or the terminal does to a payment, with the webhooks each change sends.
 *
 * opened: DRAFT → OPENED (installments not yet opened too). pending: the payer's payment
 * is being processed: → PENDING. paid: every open installment is charged (or the whole
 * total, without installments) → SUCCESS. rejected: → REJECTED.
 * cancelled: the payer pressed cancel: → REJECTED, unpaid installments CANCELLED.
 * installment_pending / installment_paid / installment_failed: the given (or first open)
 * installment's debit is running (PENDING), succeeded or failed; a failed one is debited
 * again a day later. terminal_failure: a webhook to terminal_failure_url.
 * Actions on a final payment or installment are 409 (they cannot happen).
 */
import { conflict, notFound } from '../http/errors.js';
import type { PaymentLifecycle } from './payment-lifecycle.js';
import {
  isFinalInstallment,
  isFinalPayment,
  type Installment,
  type Payment,
} from '../state/state.js';
import type { Delivery } from '../webhooks/webhooks.js';

export const SIMULATE_ACTIONS = [
  'opened',
  'pending',
  'paid',
  'rejected',
  'cancelled',
  'installment_pending',
  'installment_paid',
  'installment_failed',
  'terminal_failure',
] as const;
export type SimulateAction = (typeof SIMULATE_ACTIONS)[number];

export class PayerSimulation {
  private readonly state;

  constructor(private readonly lifecycle: PaymentLifecycle) {
    this.state = lifecycle.state;
  }

  /** Applies the action; returns the webhooks it sent (their first attempts may be in flight). */
  simulate(
    paymentId: string,
    action: SimulateAction,
    installmentId: string | undefined,
    now: number,
  ): Delivery[] {
    const payment = this.state.payments.get(paymentId);
    if (!payment) throw notFound(`no payment ${paymentId}`);
    const previous = payment.status;
    if (action === 'terminal_failure') {
      payment.terminalFailures++;
      return this.lifecycle.notifyTerminalFailure(payment, now);
    }
    if (isFinalPayment(payment)) {
      throw conflict(`payment ${paymentId} is ${payment.status} (final)`);
    }
    switch (action) {
      case 'opened': {
        if (payment.status !== 'DRAFT') {
          throw conflict(`payment ${paymentId} is ${payment.status}, not DRAFT`);
        }
        payment.status = 'OPENED';
        for (const installment of payment.installments ?? []) {
          if (
            installment.status === 'DRAFT' ||
            installment.status === 'CREATED' ||
            installment.status === 'SENT'
          ) {
            installment.status = 'OPENED';
          }
        }
        break;
      }
      case 'pending': {
        payment.status = 'PENDING';
        break;
      }
      case 'paid': {
        if (payment.installments) {
          for (const installment of payment.installments) {
            if (!isFinalInstallment(installment)) this.lifecycle.charge(payment, installment, now);
          }
        } else {
          this.lifecycle.book(payment, null, payment.totalMinor, 'payment', now);
        }
        payment.status = 'SUCCESS';
        break;
      }
      case 'rejected': {
        payment.status = 'REJECTED';
        break;
      }
      case 'cancelled': {
        this.lifecycle.cancel(payment);
        break;
      }
      case 'installment_pending': {
        this.installmentFor(payment, installmentId).status = 'PENDING';
        break;
      }
      case 'installment_paid': {
        this.lifecycle.charge(payment, this.installmentFor(payment, installmentId), now);
        this.lifecycle.updateStatusFromInstallments(payment);
        break;
      }
      case 'installment_failed': {
        const installment = this.installmentFor(payment, installmentId);
        this.lifecycle.fail(payment, installment, now);
        break;
      }
    }
    return this.lifecycle.notify(payment, action, previous, now);
  }
  private installmentFor(payment: Payment, installmentId: string | undefined): Installment {
    if (!payment.installments) throw conflict(`payment ${payment.id} has no installments`);
    if (installmentId !== undefined) {
      const installment = this.lifecycle.installment(payment, installmentId);
      if (isFinalInstallment(installment)) {
        throw conflict(`installment ${installmentId} is ${installment.status} (final)`);
      }
      return installment;
    }
    const open = payment.installments.find((installment) => !isFinalInstallment(installment));
    if (!open) throw conflict(`payment ${payment.id} has no open installment`);
    return open;
  }
}
