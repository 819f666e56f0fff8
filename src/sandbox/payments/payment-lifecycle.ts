/**
 * What every payment operation shares: finding a payment of an organization, the final
 * statuses, charging and failing installments, their debits on their dates (scheduler
 * jobs on the virtual clock), booking money movements for the settlement CSV, and the
 * webhooks a change sends (docs/assumptions.md, webhooks: callback.url for every change,
 * status_update_url when paymentStatus changes, terminal_failure_url for terminal failures).
 */
import { sumMinor } from '../../money/money.js';
import {
  DEFAULT_PAYMENT_METHOD_ID,
  type PaymentMethod,
  type WebhookKind,
  type WebhookPayload,
} from '../../payflow/wire/payflow.schemas.js';
import { startOfUtcDate } from '../state/clock.js';
import { feeMinor, type FeeMethod } from '../settlement/fees.js';
import { businessError, notFound, type Detail, type Loc } from '../http/errors.js';
import { newObjectId } from '../state/ids.js';
import type { Scheduler } from '../state/scheduler.js';
import {
  isFinalInstallment,
  isFinalPayment,
  type Installment,
  type Organization,
  type Payment,
  type PaymentStatus,
  type SandboxState,
} from '../state/state.js';
import type { Shapes } from './shapes.js';
import type { Delivery, WebhookDispatcher } from '../webhooks/webhooks.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class PaymentLifecycle {
  constructor(
    readonly state: SandboxState,
    private readonly scheduler: Scheduler,
    private readonly webhooks: WebhookDispatcher,
    /** How answers and webhook bodies are written (SANDBOX_SHAPES). */
    readonly shapes: Shapes,
  ) {}

  /** A payment of this organization, or 404 (another organization's payment is not visible). */
  find(organization: Organization, paymentId: string): Payment {
    const payment = this.state.payments.get(paymentId);
    if (!payment || payment.organizationId !== organization.id) {
      throw notFound(`no payment ${paymentId}`);
    }
    return payment;
  }

  installment(payment: Payment, installmentId: string): Installment {
    const installment = payment.installments?.find((entry) => entry.id === installmentId);
    if (!installment) throw notFound(`no installment ${installmentId} on payment ${payment.id}`);
    return installment;
  }

  /** A method of the current list; the payment link (24 zeros) always exists. */
  paymentMethod(id: string): PaymentMethod | undefined {
    const method = this.state.findPaymentMethod(id);
    if (method || id !== DEFAULT_PAYMENT_METHOD_ID) return method;
    return { id, name: 'Payment link', type: 'payment_link' };
  }

  refuseFinal(payment: Payment, at: Loc): void {
    if (isFinalPayment(payment)) {
      throw businessError(at, 'payment_final', `the payment is ${payment.status}, a final status`);
    }
  }

  refuseFinalInstallment(installment: Installment): void {
    if (isFinalInstallment(installment)) {
      throw businessError(
        ['path', 'installment_id'],
        'installment_final',
        `the installment is ${installment.status}, a final status`,
      );
    }
  }

  /** What was collected and not yet refunded (docs/assumptions.md, refunds). */
  refundable(payment: Payment): number {
    const collected =
      payment.status === 'SUCCESS' || payment.status === 'PAID'
        ? payment.totalMinor
        : sumMinor(
            (payment.installments ?? [])
              .filter((installment) => installment.status === 'PAID')
              .map((installment) => installment.grossMinor),
          );
    return collected - sumMinor(payment.refunds.map((refund) => refund.grossMinor));
  }

  /**
   * The payment is issued to the payer: by its link (installments not yet sent become
   * SENT) or by a terminal or an invoice (DRAFT ones become CREATED).
   */
  issue(payment: Payment, by: 'link' | 'other'): void {
    payment.issued = true;
    for (const installment of payment.installments ?? []) {
      if (by === 'link' && (installment.status === 'DRAFT' || installment.status === 'CREATED')) {
        installment.status = 'SENT';
      } else if (installment.status === 'DRAFT') {
        installment.status = 'CREATED';
      }
    }
  }

  /** DELETE or the payer's cancel: REJECTED, every installment not yet PAID becomes CANCELLED. */
  cancel(payment: Payment): void {
    payment.status = 'REJECTED';
    for (const installment of payment.installments ?? []) {
      if (installment.status !== 'PAID') {
        installment.status = 'CANCELLED';
        installment.debitVersion++;
      }
    }
  }

  /** A successful debit or payer payment of an installment, booked for the settlement CSV. */
  charge(payment: Payment, installment: Installment, at: number): void {
    installment.status = 'PAID';
    installment.numTried++;
    installment.successfullyChargedAt = at;
    installment.debitVersion++;
    this.book(payment, installment.id, installment.grossMinor, 'payment', at);
  }

  /** A failed debit: FAILED, counted, and debited again a day later. */
  fail(payment: Payment, installment: Installment, at: number): void {
    installment.status = 'FAILED';
    installment.numTried++;
    installment.numFailed++;
    installment.lastFailedAt = at;
    const version = ++installment.debitVersion;
    this.scheduler.schedule(
      at + DAY_MS,
      (time) => this.debit(payment, installment, version, time),
      payment.id,
    );
  }

  /** SUCCESS when every live installment is paid, INITIATED once one is. */
  updateStatusFromInstallments(payment: Payment): void {
    if (isFinalPayment(payment) || !payment.installments) return;
    const live = payment.installments.filter((installment) => installment.status !== 'CANCELLED');
    const paid = live.filter((installment) => installment.status === 'PAID').length;
    if (live.length > 0 && paid === live.length) payment.status = 'SUCCESS';
    else if (paid > 0 && payment.status !== 'INITIATED') payment.status = 'INITIATED';
  }

  /** A scheduled installment is debited at 00:00 UTC of its date (virtual clock). */
  scheduleDebit(payment: Payment, installment: Installment): void {
    if (installment.type !== 'scheduled') return;
    const dueAt = startOfUtcDate(installment.date);
    if (dueAt === undefined) return;
    const version = ++installment.debitVersion;
    this.scheduler.schedule(
      dueAt,
      (time) => this.debit(payment, installment, version, time),
      payment.id,
    );
  }

  /**
   * Money collected or refunded: its settlement CSV line(s), negative for refunds, with the
   * fee of how it was collected (settlement/fees.ts), booked when settlement/booking.ts
   * says (the day of collection, a night late, or as a test's control asks).
   */
  book(
    payment: Payment,
    installmentId: string | null,
    grossMinor: number,
    type: 'payment' | 'refund',
    at: number,
  ): void {
    const method = this.feeMethod(payment, installmentId);
    for (const line of this.state.settlement.plan(payment.id, type, at, grossMinor)) {
      this.state.movements.add({
        id: newObjectId(line.bookedAt),
        organizationId: payment.organizationId,
        paymentId: payment.id,
        paymentNumber: payment.number,
        installmentId,
        internalRef: payment.internalRef,
        orderNumber: payment.orderNumber,
        type,
        currency: payment.currency,
        grossMinor: line.grossMinor,
        feeMinor: feeMinor(line.grossMinor, payment.currency, method, type),
        bookedAt: line.bookedAt,
      });
    }
  }

  /**
   * How a line's money was collected: an installment paid by the payer or debited on its
   * date; else the payment's method (a refund of an installment payment: installment).
   */
  private feeMethod(payment: Payment, installmentId: string | null): FeeMethod {
    if (payment.installments) {
      const installment = payment.installments.find((entry) => entry.id === installmentId);
      return installment?.type === 'scheduled' ? 'direct_debit' : 'installment';
    }
    return this.paymentMethod(payment.paymentMethodId)?.type === 'invoice' ? 'invoice' : 'card';
  }

  /** Payment Update to callback.url; status update to status_update_url when the status changed. */
  notify(
    payment: Payment,
    change: string,
    previous: PaymentStatus,
    at: number,
    extra: Record<string, unknown> = {},
  ): Delivery[] {
    const sent: Delivery[] = [];
    const { url, statusUpdateUrl } = payment.callback;
    if (url) {
      sent.push(this.send(payment, 'payment-update', url, 'payment.updated', change, at, extra));
    }
    if (statusUpdateUrl && previous !== payment.status) {
      sent.push(
        this.send(payment, 'status-update', statusUpdateUrl, 'payment.status_updated', change, at, {
          ...extra,
          previousPaymentStatus: previous,
        }),
      );
    }
    return sent;
  }

  notifyTerminalFailure(payment: Payment, at: number): Delivery[] {
    const url = payment.callback.terminalFailureUrl;
    if (!url) return [];
    const terminalId =
      payment.lastTerminalId ??
      this.state.paymentMethods.flatMap((method) => method.terminals ?? [])[0]?.id ??
      null;
    return [
      this.send(
        payment,
        'terminal-failure',
        url,
        'payment.terminal_failure',
        'terminal_failure',
        at,
        {
          terminalId,
          reason: 'the terminal reported a failure',
        },
      ),
    ];
  }

  /** Scheduler job: the debit of a scheduled installment on its date (or its retry). */
  private debit(payment: Payment, installment: Installment, version: number, at: number): void {
    if (
      installment.debitVersion !== version ||
      isFinalInstallment(installment) ||
      isFinalPayment(payment)
    ) {
      return;
    }
    if (this.state.payments.get(payment.id) !== payment) return; // forgotten (reset, bound)
    const previous = payment.status;
    this.charge(payment, installment, at);
    this.updateStatusFromInstallments(payment);
    this.notify(payment, 'installment_paid', previous, at);
  }

  private send(
    payment: Payment,
    kind: WebhookKind,
    url: string,
    event: WebhookPayload['event'],
    change: string,
    at: number,
    extra: Record<string, unknown>,
  ): Delivery {
    return this.webhooks.enqueue({
      kind,
      url,
      apiKey: payment.callback.apiKey,
      paymentId: payment.id,
      at,
      payload: (deliveryId) =>
        this.shapes.webhook(payment, at, { deliveryId, event, change, extra }),
    });
  }
}

/** A location in the request body: ['body', ...path]. */
export function bodyLoc(...path: (string | number)[]): Loc {
  return ['body', ...path];
}

export function businessDetail(at: Loc, type: string, msg: string): Detail {
  return { loc: at, msg, type: `business.${type}` };
}

/** A new installment: CREATED on an issued payment, DRAFT on one not yet sent to the payer. */
export function newInstallment(
  now: number,
  date: string,
  type: Installment['type'],
  grossMinor: number,
  items: unknown[] | undefined,
  issued: boolean,
): Installment {
  return {
    id: newObjectId(now),
    date,
    type,
    grossMinor,
    items,
    status: issued ? 'CREATED' : 'DRAFT',
    numTried: 0,
    successfullyChargedAt: null,
    numFailed: 0,
    lastFailedAt: null,
    debitVersion: 0,
  };
}
